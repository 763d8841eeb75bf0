package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/store"
)

// openStore finds the state directory for a command of the group whose
// file is fileName (which --file relocates).
func (a *App) openStore(fileName string) (*store.Store, error) {
	if a.remote != nil { // every operation runs remotely: nothing here reads the state
		return nil, errs.New(errs.Unexpected, "this call reads the project's state, which only the run's broker reads for a sandboxed session, and the broker does not offer it")
	}
	dir, from := store.Discover(store.Locate{StateDir: a.g.StateDir, File: a.g.File, Getenv: a.env.Getenv, Cwd: a.env.Cwd})
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, errs.New(errs.Usage, "%s names %s, which is a file, not a directory: it must name the state directory (the one holding progress.json and .baton/)", from, dir)
	}
	s := store.New(dir)
	s.Create = a.creating
	s.Undo = a.undoIntent
	if a.g.File != "" && fileName != "" {
		p := a.g.File
		if !filepath.IsAbs(p) {
			p = filepath.Join(a.env.Cwd, p)
		}
		s.SetPath(fileName, p)
	}
	s.Now = a.env.Now
	s.KeepMapped = a.env.OneShot
	s.Tracked = trackedFiles
	s.ResolveAnchors = func() (write, watch []string) { return a.anchorPaths(dir) } // on first use: a read needs none
	s.Probe = a.probe(s)
	if v := a.env.Getenv("BATON_LOCK_TIMEOUT"); v != "" {
		d, err := parseTimeout(v)
		if err != nil {
			return nil, errs.New(errs.Usage, "BATON_LOCK_TIMEOUT: %v", err)
		}
		s.LockTimeout = d
	}
	return s, nil
}

func parseTimeout(v string) (time.Duration, error) {
	if n, err := strconv.ParseFloat(v, 64); err == nil && n > 0 {
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a duration (write 10s or 10)", v)
	}
	return d, nil
}

// state is one transaction seen through the domain packages: each file is
// read and validated inside the lock on first use, and every file changed
// is written back, with the computed counters, when the command succeeds.
type state struct {
	app   *App
	tx    *store.Tx
	cfg   store.Config
	now   time.Time
	prog  *progress.File
	rev   *reviews.File
	feat  *features.File
	open  *progress.OpenSessions
	dirty map[string]bool
	// progNew marks a progress.json created in this transaction, whose
	// counters must be computed although nothing they count changed.
	progNew bool

	cmdPath     string
	who         *actor
	whoResolved bool
	refused     error   // a policy refusal, logged after the transaction is discarded
	summary     string  // what the transaction did, for the audit log
	taskID      *string // the feature ids the transaction concerns
	opened      *openedRecord
	record      any // what the transaction recorded, for the audit log
	// adopted says which file changed outside baton the transaction
	// adopts (the INITIALIZER's feature list); reconciled lists a
	// person's reconciliation. Either makes the transaction log an event.
	adopted    []string
	adoptNote  string
	reconciled []store.Drift
	// logGap is the lost log a person's reconcile records (nil for none).
	logGap *store.LogGap
	// featIndex is the index of a feature list the transaction validated
	// in full, whose stamp will name it: written with the transaction's
	// other changes (see finish).
	featIndex []byte
}

// stateFiles are the state files.
var stateFiles = []string{progress.FileName, reviews.FileName, features.FileName}

// update runs fn as one transaction on the store of the group's file.
func (a *App) update(ctx context.Context, cmdPath, fileName string, fn func(st *state) error) error {
	s, err := a.openStore(fileName)
	if err != nil {
		return err
	}
	cfg, err := s.LoadConfig()
	if err != nil {
		return err
	}
	if a.env.Getenv("BATON_LOCK_TIMEOUT") == "" {
		s.LockTimeout = time.Duration(cfg.LockTimeoutSeconds) * time.Second
	}
	s.Holder = cmdPath
	if a.creating { // the state is kept out of git from its first write
		if _, err := a.excludeState(s.Dir); err != nil {
			return err
		}
	}
	warmCodecs(fileName)
	var refused error
	var who *actor
	var task *string
	err = s.Update(ctx, func(tx *store.Tx) error {
		st := &state{app: a, tx: tx, cfg: cfg, now: a.env.Now(), dirty: map[string]bool{}, cmdPath: cmdPath}
		if !a.reconciling {
			if err := st.checkDrift(); err != nil {
				return err
			}
		}
		if err := st.checkOwnFile(fileName); err != nil {
			refused, who, task = st.refused, st.who, st.taskID
			return err
		}
		if err := fn(st); err != nil {
			refused, who, task = st.refused, st.who, st.taskID
			return err
		}
		if err := st.finish(); err != nil {
			return err
		}
		st.logEvent()
		return nil
	})
	err = a.committedWarning(err)
	if refused != nil && errs.Is(err, errs.Policy) {
		if lerr := a.logRefusal(ctx, s, cmdPath, who, task, refused); lerr != nil {
			a.warn("the refusal could not be written to the audit log: %v", lerr)
		}
	}
	return err
}

// logEvent stages the audit event of a transaction that changed anything.
func (st *state) logEvent() {
	if len(st.dirty) == 0 && st.adopted == nil && st.reconciled == nil && st.logGap == nil {
		return
	}
	who, _ := st.resolveActor()
	var changed []string
	for _, n := range trackedFiles {
		if st.dirty[n] {
			changed = append(changed, n)
		}
	}
	typ, summary := "task", st.summary
	changed = append(changed, st.adopted...)
	if st.adoptNote != "" {
		summary = strings.TrimSuffix(st.adoptNote+"; "+summary, "; ")
	}
	if st.reconciled != nil || st.logGap != nil {
		typ = "reconcile"
		for _, d := range st.reconciled {
			changed = append(changed, d.File)
		}
	}
	auth, key := st.app.signer(who)
	st.tx.LogSigned(store.Event{
		TaskID: st.taskID, StageID: stage(who), Type: typ, Timestamp: st.stamp(),
		Payload: eventPayload{Command: st.cmdPath, Actor: who, Changed: changed, Summary: summary, Record: recordJSON(st.record), Reconciled: st.reconciled, Opened: st.opened, LogGap: st.logGap, LogID: st.newLogID()}.raw(),
	}, auth, key)
}

// newLogID names a log that has no entry yet ("" for one that has).
func (st *state) newLogID() string {
	if fi, err := os.Stat(st.tx.Store().EventsPath()); err == nil && fi.Size() > 0 {
		return ""
	}
	id, _ := randomHex(16)
	return id
}

func stage(who *actor) *string {
	if who == nil {
		return nil
	}
	r := who.Role
	return &r
}

// logRefusal writes a refused attempt to the audit log, in a transaction
// of its own (the refused one changed nothing).
func (a *App) logRefusal(ctx context.Context, s *store.Store, cmdPath string, who *actor, task *string, refused error) error {
	return s.Update(ctx, func(tx *store.Tx) error {
		auth, key := a.signer(who)
		tx.LogSigned(store.Event{
			TaskID: task, StageID: stage(who), Type: "error", Timestamp: jsondoc.Timestamp(a.env.Now()),
			Payload: eventPayload{Command: cmdPath, Actor: who, Refused: refused.Error()}.raw(),
		}, auth, key)
		return nil
	})
}

func (st *state) stamp() string { return jsondoc.Timestamp(st.now) }

func (st *state) touch(name string) { st.dirty[name] = true }

// load reads one state file inside the transaction: validated in full,
// unless baton's last transaction wrote it (its stamp matches), in which
// case trusted reads it with the facts recorded then. A missing file is
// (zero, false, nil).
func load[T any](st *state, name string, parse func([]byte) (T, error), trusted func([]byte, jsondoc.Facts) (T, error)) (T, bool, error) {
	var zero T
	data, rawFacts, ok, err := st.tx.ReadTrusted(name)
	if err != nil {
		return zero, false, err
	}
	if data == nil {
		return zero, false, nil
	}
	var facts jsondoc.Facts
	if ok && trusted != nil && json.Unmarshal(rawFacts, &facts) == nil && facts != nil {
		if v, err := trusted(data, facts); err == nil {
			return v, true, nil
		}
	}
	v, err := parse(data)
	if err != nil {
		return zero, false, invalidFile(st.tx.Store(), name, data, err)
	}
	// validated in full: the next transaction need not, when the file can
	// say what its stamp must carry (the ids' maximum, say, it cannot)
	if r, ok := any(v).(interface{ StampFacts() jsondoc.Facts }); ok {
		if f := r.StampFacts(); len(f) > 0 {
			if name == features.FileName {
				f = st.indexFeatures(data, f)
			}
			st.tx.Validated(name, factsJSON(f))
		}
	}
	return v, true, nil
}

// indexFeatures builds the index of a feature list validated in full and
// returns the facts naming it (facts as they are when it cannot be built).
func (st *state) indexFeatures(data []byte, facts jsondoc.Facts) jsondoc.Facts {
	idx, named, ok := features.Index(data, facts)
	if !ok {
		return facts
	}
	st.featIndex = idx
	return named
}

// invalidFile turns a parse error into the Invalid error a person can act on.
func invalidFile(s *store.Store, name string, data []byte, err error) error {
	path := s.Path(name)
	advice := fmt.Sprintf("nothing was written; a person can restore the previous version from %s, then run 'baton verify'", s.BackupPath(name))
	if !s.BackupIntact(name) {
		advice = fmt.Sprintf("nothing was written; a person can restore the previous version from %s (baton has no record that it is whole: check it first), then run 'baton verify'", s.BackupPath(name))
	}
	var ie *jsondoc.InvalidError
	if errors.As(err, &ie) {
		line, col := jsondoc.Position(data, ie.Offset)
		return errs.New(errs.Invalid, "%s: line %d, column %d: %s — %s", path, line, col, ie.Error(), advice)
	}
	return errs.New(errs.Invalid, "%s: %v — %s", path, err, advice)
}

// missingOrReplaced is a state file's absence: deleted outside baton
// when the log recorded it, else not made yet.
func missingOrReplaced(s *store.Store, name, hint string) error {
	if err := replaced(s, name, nil); err != nil {
		return err
	}
	return missing(s, name, hint)
}

// replaced refuses to answer from a state file that is not the version
// the log last recorded (deleted, a copy a git checkout or stash restored,
// an edit): a reader would otherwise answer from state baton never wrote,
// which the next write refuses. The INITIALIZER's hand-written feature
// list, where baton init wrote the empty one, is read: its session's next
// write adopts it.
func replaced(s *store.Store, name string, fi os.FileInfo) error {
	return replacedRead(s, name, fi, nil)
}

// replacedRead is replaced for a reader holding h, the content of the
// version fi describes (hashed instead of read again, in the background).
func replacedRead(s *store.Store, name string, fi os.FileInfo, h *store.Held) error {
	d, err := s.ReplacedHeld(name, fi, h)
	if err != nil {
		return err
	}
	if d == nil {
		return logBehind(s, name, fi)
	}
	if name == features.FileName && d.Recorded == emptyFeatureListHash() && d.Now != "" {
		return nil
	}
	return errs.New(errs.Invalid, "%s — it was not read: baton answers from the version it recorded, not from a copy restored by a git checkout or stash, or an edit; baton records no more changes until a person reconciles this. Stop and report it", d.Message())
}

// logBehind refuses to answer from a state file baton's last transaction
// did not write when the log itself is behind an anchor: the files and the
// log were put back together to an earlier version (a checkout of a branch
// that held a copy of both, a restore), and agree only with each other.
func logBehind(s *store.Store, name string, fi os.FileInfo) error {
	if fi == nil {
		return nil
	}
	g, err := s.LogAhead()
	if err != nil || g == nil {
		return nil // the write path and verify report what cannot be read
	}
	return errs.New(errs.Invalid, "%s was not read: the audit log %s ends at entry %d, but %s records its head at entry %d — the state and its log were put back to an earlier version (a checkout or restore) or cut short. Stop and report it: a person restores or reconciles them",
		name, s.EventsPath(), g.Seq, g.Path, g.Anchor.Seq)
}

func missing(s *store.Store, name, hint string) error {
	return errs.New(errs.NotFound, "%s does not exist. Run '%s' first (state directory %s)", s.Path(name), hint, s.Dir)
}

func (st *state) progressOpt() (*progress.File, bool, error) {
	if st.prog != nil {
		return st.prog, true, nil
	}
	f, ok, err := load(st, progress.FileName, progress.Parse, progress.ParseTrusted)
	st.prog = f
	return f, ok, err
}

func (st *state) reviewsOpt() (*reviews.File, bool, error) {
	if st.rev != nil {
		return st.rev, true, nil
	}
	f, ok, err := load(st, reviews.FileName, reviews.Parse, reviews.ParseTrusted)
	if f != nil {
		f.SetIndexSource(func() []byte {
			b, _, _, err := st.tx.ReadTrusted(reviews.IndexName) // mapped when large: patched in place
			if err != nil {
				return nil // built again from the records
			}
			return b
		})
	}
	st.rev = f
	return f, ok, err
}

func (st *state) featuresOpt() (*features.File, bool, error) {
	if st.feat != nil {
		return st.feat, true, nil
	}
	f, ok, err := load(st, features.FileName, features.Parse, func(data []byte, facts jsondoc.Facts) (*features.File, error) {
		return features.ParseTrustedIndexed(data, facts, func() []byte {
			b, _, _, err := st.tx.ReadTrusted(features.IndexName)
			if err != nil {
				return nil // the list is read as it is
			}
			return b
		})
	})
	st.feat = f
	return f, ok, err
}

func (st *state) progress() (*progress.File, error) {
	f, ok, err := st.progressOpt()
	if err == nil && !ok {
		err = missing(st.tx.Store(), progress.FileName, "baton progress init -n NAME -c COUNT")
	}
	return f, err
}

func (st *state) reviews() (*reviews.File, error) {
	f, ok, err := st.reviewsOpt()
	if err == nil && !ok {
		err = missing(st.tx.Store(), reviews.FileName, "baton reviews init")
	}
	return f, err
}

func (st *state) features() (*features.File, error) {
	f, ok, err := st.featuresOpt()
	if err == nil && !ok {
		err = missing(st.tx.Store(), features.FileName, "baton init")
	}
	return f, err
}

// finish recomputes the counters when the files they come from changed
// (or progress.json is new) and stages every changed file with its facts.
func (st *state) finish() error {
	if len(st.dirty) == 0 {
		return nil
	}
	if st.dirty[features.FileName] || st.dirty[reviews.FileName] || st.progNew {
		if err := st.recount(); err != nil {
			return err
		}
	}
	if st.dirty[progress.FileName] {
		if err := st.prog.SetStatus("updated_at", st.stamp()); err != nil {
			return err
		}
		st.tx.WriteSegments(progress.FileName, st.prog.Segments(), factsJSON(st.prog.Facts()))
	}
	if st.dirty[reviews.FileName] {
		st.tx.WriteSegments(reviews.FileName, st.rev.Segments(), factsJSON(st.rev.Facts()))
		st.tx.WriteSegments(reviews.IndexName, st.rev.IndexSegments(), nil) // journaled with the file its digest names
	}
	if st.dirty[features.FileName] {
		data, facts := st.feat.Bytes(), st.feat.Facts()
		if idx, named, ok := features.Index(data, facts); ok {
			st.featIndex, facts = idx, named
		} else {
			st.featIndex = nil
		}
		st.tx.WriteSegments(features.FileName, [][]byte{data}, factsJSON(facts))
	}
	if st.featIndex != nil { // journaled with the list whose facts name it
		st.tx.WriteSegments(features.IndexName, [][]byte{st.featIndex}, nil)
	}
	if st.dirty[progress.OpenFileName] {
		st.tx.Write(progress.OpenFileName, st.open.Bytes())
	}
	return nil
}

func factsJSON(f jsondoc.Facts) json.RawMessage {
	b, _ := json.Marshal(f)
	return b
}

// counters computes the status counters from the feature list and reviews.
func (st *state) counters() (progress.Counters, error) {
	p, _, err := st.progressOpt()
	if err != nil {
		return progress.Counters{}, err
	}
	feat, _, err := st.featuresOpt()
	if err != nil {
		return progress.Counters{}, err
	}
	rev, _, err := st.reviewsOpt()
	if err != nil {
		return progress.Counters{}, err
	}
	return countersOf(p, feat, rev), nil
}

// countersOf computes the counters from the files there are (nil: absent).
func countersOf(p *progress.File, feat *features.File, rev *reviews.File) progress.Counters {
	var c progress.Counters
	if feat != nil {
		st := feat.Stats()
		c.TotalFeatures, c.FeaturesPassing = st.All.Total, st.All.Passing
	} else if p != nil {
		proj, _ := p.Project()
		c.TotalFeatures = proj.TotalFeatures
	}
	if rev != nil {
		for id := range rev.PassedFeatures() {
			if feat == nil || feat.Has(id) {
				c.FeaturesCompleted++
			}
		}
	}
	return c
}

// recount writes computed counters into progress.json when they changed.
func (st *state) recount() error {
	p, ok, err := st.progressOpt()
	if err != nil || !ok {
		return err
	}
	c, err := st.counters()
	if err != nil {
		return err
	}
	cur, err := p.Status()
	if err != nil {
		return err
	}
	proj, _ := p.Project()
	if cur.FeaturesCompleted == c.FeaturesCompleted && cur.FeaturesPassing == c.FeaturesPassing && proj.TotalFeatures == c.TotalFeatures {
		return nil
	}
	st.touch(progress.FileName)
	return p.SetCounters(c)
}

// repo opens the working directory's repository once per command; nil
// outside a repository.
func (a *App) repo() gitops.Repo {
	if !a.repoOpened {
		a.repoOpened = true
		if r, err := gitops.Open(a.env.Cwd); err == nil {
			a.gitRepo = a.withHead(r)
		}
	}
	return a.gitRepo
}

// commitRef checks a commit given in flag against the repository and
// returns its full hash: a revision such as HEAD~1 is recorded as the
// commit it names now, and a commit that does not exist is refused. Outside
// a repository the value is kept as given. "" and "null" are nil.
func (a *App) commitRef(flag, rev string) (*string, error) {
	v := progress.Nullable(strings.TrimSpace(rev))
	if v == nil {
		return nil, nil
	}
	r := a.repo()
	if r == nil {
		return commitHash(flag, *v)
	}
	h, err := gitops.ResolveCommit(r, *v)
	switch {
	case errors.Is(err, gitops.ErrUnsupportedRevision):
		return nil, errs.New(errs.Usage, "%s: %v", flag, err)
	case err != nil:
		return nil, errs.New(errs.NotFound, "%s: %v in the repository at %s (check the hash with 'git log')", flag, err, a.env.Cwd)
	}
	return &h, nil
}

// head returns the full hash of HEAD in the working directory's
// repository, or nil outside a repository or on an unborn branch.
func (a *App) head() *string {
	r := a.repo()
	if r == nil {
		return nil
	}
	h, err := r.Head()
	if err != nil {
		return nil
	}
	return &h
}

// readFile reads one state file for a read-only command (no lock) and
// parses it; a missing file is NotFound with hint.
func readFile[T any](ctx context.Context, a *App, name, hint string, parse func([]byte) (T, error)) (T, error) {
	var zero T
	s, err := a.openStore(name)
	if err != nil {
		return zero, err
	}
	data, fi, err := s.ReadFileInfo(ctx, name)
	if err != nil {
		return zero, err
	}
	if data == nil {
		return zero, missingOrReplaced(s, name, hint)
	}
	var h *store.Held // the content for the log comparison: hashed on the other core while parse runs
	if fi == nil {    // read through a journal's patch: the file is compared as it is
		fi, _ = os.Stat(s.Path(name))
	} else if _, ok := s.Trusted(name, fi, data); !ok {
		h = store.Hold(data)
	}
	v, err := parse(data)
	if err != nil {
		return zero, invalidFile(s, name, data, err)
	}
	if err := replacedRead(s, name, fi, h); err != nil {
		return zero, err
	}
	return v, nil
}

// mapped is a state file mapped for a fast read of a few fields.
type mapped struct {
	s     *store.Store
	name  string
	data  []byte
	unmap func()
	held  *store.Held   // the whole file's hash, while it may still be read for it
	facts jsondoc.Facts // set when baton's last transaction wrote the file
	// set while only some blocks of a copy of the recorded version were
	// checked (see store.Blocks): the reads check the blocks they take,
	// and a read that needs more of the file checks it whole first
	blocks   *store.Blocks
	fi       os.FileInfo
	validate func([]byte) (jsondoc.Facts, error)
	err      error // the whole check's refusal, once it ran
}

// mapFile maps a state file for reading without the lock. A file baton's
// last transaction wrote is read without a full parse; a large copy of the
// version the log records is read checking only the blocks each read
// takes; any other (edited by hand, left by the predecessor) is validated
// with validate first.
func (a *App) mapFile(ctx context.Context, name, hint string, validate func([]byte) (jsondoc.Facts, error)) (*mapped, error) {
	s, err := a.openStore(name)
	if err != nil {
		return nil, err
	}
	if err := s.RecoverIfNeeded(ctx); err != nil {
		return nil, err
	}
	data, fi, release, err := s.MapFile(name)
	if err != nil {
		return nil, err
	}
	if data == nil {
		release()
		return nil, missingOrReplaced(s, name, hint)
	}
	m := &mapped{s: s, name: name, data: data, unmap: release, fi: fi, validate: validate}
	raw, ok := s.Trusted(name, fi, data)
	if !ok {
		if m.blocks = s.VouchedBlocks(name, fi, data); m.blocks != nil {
			raw, ok = m.blocks.Facts(), true
		}
	}
	if ok {
		if err := logBehind(s, name, fi); err != nil {
			release()
			return nil, err
		}
		m.facts = readFacts(raw)
		return m, nil
	}
	if err := m.checkWhole(); err != nil {
		m.release()
		return nil, err
	}
	return m, nil
}

// readMapped maps the state file name (see mapFile) for read, which takes
// what it needs from it. A file cut outside baton while it is read (a
// mapping's page past its new end faults) is an error, not the end of the
// process.
func (a *App) readMapped(ctx context.Context, name, hint string, validate func([]byte) (jsondoc.Facts, error), read func(m *mapped) (gjson.Result, error)) (res gjson.Result, err error) {
	defer store.CutWhileRead(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	m, err := a.mapFile(ctx, name, hint, validate)
	if err != nil {
		return gjson.Result{}, err
	}
	defer m.release()
	return read(m)
}

// checkWhole validates the mapped file (unless it is the version its
// stamp vouches for) and compares it with the log, noting the version for
// the readers after this one.
func (m *mapped) checkWhole() error {
	h := store.Hold(m.data) // the log comparison's hash, on the other core while validate runs
	m.held = h
	facts, err := vouchedOrValid(m.s, m.name, h, m.validate)
	if err != nil {
		return invalidFile(m.s, m.name, m.data, err) // reads data: before the unmap
	}
	if err := replacedRead(m.s, m.name, m.fi, h); err != nil {
		return err
	}
	m.facts = facts
	m.s.Remember(m.name, m.fi, factsJSON(facts)) // the readers after this one need not validate it again
	return nil
}

// release unmaps the file, once nothing reads it any more.
func (m *mapped) release() {
	m.held.Wait()
	m.unmap()
}

// whole makes all of the mapped file safe to read: a copy of which only
// some blocks were checked is checked whole (once; its refusal is kept).
func (m *mapped) whole() error {
	if m.blocks != nil {
		m.blocks = nil
		m.err = m.checkWhole()
	}
	return m.err
}

// has reports whether the bytes of the ranges may be read as they are:
// always, but for a copy only some blocks of which were checked, whose
// blocks holding them must be the recorded version's.
func (m *mapped) has(ranges ...[2]int64) bool {
	return m.blocks == nil || m.blocks.Check(m.data, ranges...)
}

// all is the whole mapped file, checked whole first (see whole).
func (m *mapped) all() ([]byte, error) {
	return m.data, m.whole()
}

// vouchedOrValid validates the content h holds, unless it is byte for
// byte the version its stamp vouches for (a copy of what baton wrote, put
// back under a new identity): then its hash, which the comparison with the
// log needs anyway, is all it costs, and the facts are that version's.
func vouchedOrValid(s *store.Store, name string, h *store.Held, validate func([]byte) (jsondoc.Facts, error)) (jsondoc.Facts, error) {
	if raw, ok := s.VouchedContent(name, h); ok {
		return readFacts(raw), nil // none usable: the reads find what they need in the bytes
	}
	return validate(h.Data())
}

// last returns the last record of a top-level array from the recorded
// facts, without scanning the file; ok is false when the facts cannot say
// (the caller then reads the file: see all).
func (m *mapped) last(array string) ([]byte, bool, error) {
	for {
		rec, at, ok := m.lastAt(array)
		if !ok || rec == nil || m.has(at) {
			return rec, ok, nil
		}
		if err := m.whole(); err != nil { // not the recorded bytes there
			return nil, false, err
		}
	}
}

// lastAt is last, from the facts as they are, with where the record is.
func (m *mapped) lastAt(array string) ([]byte, [2]int64, bool) {
	f, ok := m.facts[array]
	if !ok {
		return nil, [2]int64{}, false
	}
	if f.Count == 0 {
		return nil, [2]int64{}, true
	}
	s, e := f.Last[0], f.Last[1]
	if s <= 0 || e > len(m.data) || s >= e || m.data[s] != '{' || m.data[e-1] != '}' {
		return nil, [2]int64{}, false
	}
	return m.data[s:e], [2]int64{int64(s), int64(e)}, true
}

// span is the part of the file an array takes, brackets included.
type span struct{ s, e int }

// member returns a top-level member of the document, read around the
// arrays whose spans the recorded facts give: gjson would otherwise scan a
// long history to reach a member written after it (progress.json's status
// follows its sessions). The arrays themselves read as empty there: they
// are the facts' to give. Without usable facts it reads the whole file.
func (m *mapped) member(name string) (gjson.Result, error) {
	for {
		cuts, ok := m.cuts()
		if ok && m.has(around(cuts, len(m.data))...) {
			hollow, prev := make([]byte, 0, 4096), 0
			for _, c := range cuts {
				hollow = append(append(hollow, m.data[prev:c.s]...), '[', ']')
				prev = c.e
			}
			return gjson.GetBytes(append(hollow, m.data[prev:]...), name), nil
		}
		if m.blocks == nil {
			data, err := m.all()
			return gjson.GetBytes(data, name), err
		}
		if err := m.whole(); err != nil {
			return gjson.Result{}, err
		}
	}
}

// cuts are the arrays' spans the facts give, in order; ok is false when
// they do not fit the file.
func (m *mapped) cuts() ([]span, bool) {
	var cuts []span
	for _, f := range m.facts {
		s, e := f.Span[0], f.Span[1]
		if s <= 0 || e > len(m.data) || e-s < 2 || m.data[s] != '[' || m.data[e-1] != ']' {
			return nil, false
		}
		cuts = append(cuts, span{s, e})
	}
	sort.Slice(cuts, func(i, j int) bool { return cuts[i].s < cuts[j].s })
	for i := 1; i < len(cuts); i++ {
		if cuts[i].s < cuts[i-1].e {
			return nil, false
		}
	}
	return cuts, true
}

// around are the parts of a file of size bytes outside the arrays' cuts,
// their brackets included.
func around(cuts []span, size int) [][2]int64 {
	var out [][2]int64
	prev := 0
	for _, c := range cuts {
		out = append(out, [2]int64{int64(prev), int64(c.s + 1)})
		prev = c.e - 1
	}
	return append(out, [2]int64{int64(prev), int64(size)})
}

// invalid reports the file as corrupt if it is, else returns nil: fast
// reads call it only when a path they expected is absent.
func (m *mapped) invalid() error {
	if err := m.whole(); err != nil {
		return err
	}
	if err := jsondoc.Check(m.data); err != nil {
		return invalidFile(m.s, m.name, m.data, err)
	}
	return nil
}
