package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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
		return nil, errs.New(errs.Usage, "%s names %s, which is a file, not a directory: it must name the state directory (the one holding progress.json)", from, dir)
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
	// logAnyway logs the transaction's event although no file changed (a
	// gate run whose landing is tried again).
	logAnyway bool
}

// stateFiles are the state files.
var stateFiles = []string{progress.FileName, reviews.FileName, features.FileName}

// update runs fn as one transaction on the store of the group's file.
func (a *App) update(ctx context.Context, cmdPath, fileName string, fn func(st *state) error) error {
	s, err := a.openStore(fileName)
	if err != nil {
		return err
	}
	if err := a.scratchWrite(s, fileName); err != nil {
		return err
	}
	cfg, err := a.loadConfig(s)
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
	if len(st.dirty) == 0 && st.adopted == nil && st.reconciled == nil && st.logGap == nil && !st.logAnyway {
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

// load reads one state file inside the transaction and validates it in
// full. A missing file is (zero, false, nil).
func load[T any](st *state, name string, parse func([]byte) (T, error)) (T, bool, error) {
	var zero T
	data, err := st.tx.Read(name)
	if err != nil {
		return zero, false, err
	}
	if data == nil {
		return zero, false, nil
	}
	v, err := parse(data)
	if err != nil {
		return zero, false, invalidFile(st.tx.Store(), name, data, err)
	}
	return v, true, nil
}

// invalidFile turns a parse error into the Invalid error a person can act on.
func invalidFile(s *store.Store, name string, data []byte, err error) error {
	path := s.Path(name)
	advice := fmt.Sprintf("nothing was written; a person can restore the previous version from %s, then run 'baton verify'", s.BackupPath(name))
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
// which the next write refuses. data is the content read (nil: the file
// is missing). The INITIALIZER's hand-written feature list, where baton
// init wrote the empty one, is read: its session's next write adopts it.
func replaced(s *store.Store, name string, data []byte) error {
	d, err := s.Replaced(name, data)
	if err != nil {
		return err
	}
	if d == nil {
		if data == nil {
			return nil
		}
		return logBehind(s, name)
	}
	if initializersList(name, d) {
		return nil
	}
	return replacedError(*d)
}

// initializersList says whether d is the INITIALIZER's hand-written
// feature list where baton init wrote the empty one: read as it is, and
// adopted by its session's next write.
func initializersList(name string, d *store.Drift) bool {
	return name == features.FileName && d.Recorded == emptyFeatureListHash() && d.Now != ""
}

// replacedError is the refusal to answer from a state file that is not
// the version the log recorded.
func replacedError(d store.Drift) error {
	return errs.New(errs.Invalid, "%s — it was not read: baton answers from the version it recorded, not from a copy restored by a git checkout or stash, or an edit; baton records no more changes until a person has looked at it. Stop and report it", d.Message())
}

// logBehind refuses to answer from a state file when the log itself is
// behind an anchor: the files and the log were put back together to an
// earlier version (a checkout of a branch that held a copy of both, a
// restore), and agree only with each other.
func logBehind(s *store.Store, name string) error {
	g, err := s.LogAhead()
	if err != nil || g == nil {
		return nil // the write path and verify report what cannot be read
	}
	return errs.New(errs.Invalid, "%s was not read: the audit log %s ends at entry %d, but %s records its head at entry %d — the state and its log were put back to an earlier version (a checkout or restore) or cut short. Stop and report it: a person must look at them",
		name, s.EventsPath(), g.Seq, g.Path, g.Anchor.Seq)
}

func missing(s *store.Store, name, hint string) error {
	return errs.New(errs.NotFound, "%s does not exist. Run '%s' first (state directory %s)", s.Path(name), hint, s.Dir)
}

func (st *state) progressOpt() (*progress.File, bool, error) {
	if st.prog != nil {
		return st.prog, true, nil
	}
	f, ok, err := load(st, progress.FileName, progress.Parse)
	st.prog = f
	return f, ok, err
}

func (st *state) reviewsOpt() (*reviews.File, bool, error) {
	if st.rev != nil {
		return st.rev, true, nil
	}
	f, ok, err := load(st, reviews.FileName, reviews.Parse)
	st.rev = f
	return f, ok, err
}

func (st *state) featuresOpt() (*features.File, bool, error) {
	if st.feat != nil {
		return st.feat, true, nil
	}
	f, ok, err := load(st, features.FileName, features.Parse)
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
// (or progress.json is new) and stages every changed file.
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
		st.tx.Write(progress.FileName, st.prog.Bytes())
	}
	if st.dirty[reviews.FileName] {
		st.tx.Write(reviews.FileName, st.rev.Bytes())
	}
	if st.dirty[features.FileName] {
		st.tx.Write(features.FileName, st.feat.Bytes())
	}
	if st.dirty[progress.OpenFileName] {
		st.tx.Write(progress.OpenFileName, st.open.Bytes())
	}
	return nil
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

// readFile reads one state file for a read-only command (no lock),
// validates it in full and compares it with the log; a missing file is
// NotFound with hint.
func readFile[T any](ctx context.Context, a *App, name, hint string, parse func([]byte) (T, error)) (T, error) {
	v, _, err := readFileIn(ctx, a, name, hint, parse)
	return v, err
}

// readFileIn is readFile that also gives the store the file was read from.
func readFileIn[T any](ctx context.Context, a *App, name, hint string, parse func([]byte) (T, error)) (T, *store.Store, error) {
	var v T
	s, err := a.openStore(name)
	if err != nil {
		return v, nil, err
	}
	err = s.ReadConsistent(ctx, func() error {
		var zero T
		v = zero
		data, err := s.ReadFile(ctx, name)
		if err != nil {
			return err
		}
		if data == nil {
			return missingOrReplaced(s, name, hint)
		}
		if v, err = parse(data); err != nil {
			return invalidFile(s, name, data, err)
		}
		return replaced(s, name, data)
	})
	return v, s, err
}
