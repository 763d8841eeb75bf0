package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

// Every transaction first checks, inside the lock, that each tracked file
// holds what the last audit event recorded: a change made outside baton
// refuses every write until a person has looked at it, so that no later write
// can absorb it into the record.

// Control files: baton's own files under .baton/ that decide what agents
// are told and allowed. They change only through person-only commands.
const (
	configName   = ".baton/" + store.ConfigName
	baselineName = ".baton/" + gitBaselineName
	promptsName  = ".baton/prompts/"
)

// mainRef is the tracked name of the main branch's head: main moves only
// through 'baton reviews merge', so a commit that reaches it any other way
// is caught at the next write like an edited file.
const mainRef = "git:main"

// trackedFiles are the files (and the ref) whose hashes every audit event
// records.
var trackedFiles = []string{progress.FileName, reviews.FileName, features.FileName, progress.OpenFileName, configName, baselineName, promptsName, mainRef}

// probe reads a tracked ref: main's head in the state directory's
// repository, else the working directory's ("" before its first commit;
// not compared outside both), so that a call made from outside the
// project, or from another clone of it, does not pass over a commit on
// main.
func (a *App) probe(s *store.Store) func(string) (string, error) {
	return func(name string) (string, error) {
		if name != mainRef {
			return store.Unknown, nil
		}
		r := a.repo()
		if r == nil || !within(s.Dir, r.Top()) { // the state's own repository first
			if sr, err := gitops.Open(s.Dir); err == nil {
				r = sr
			}
		}
		if r == nil {
			return store.Unknown, nil // run outside the repository: not compared
		}
		cfg, err := s.LoadConfig()
		if err != nil {
			return store.Unknown, nil
		}
		_, head, err := mainOf(r, cfg)
		if err != nil {
			return "", nil
		}
		return head, nil
	}
}

// checkDrift refuses the transaction when a tracked file changed outside
// baton, except for the INITIALIZER's hand-written feature list, which is
// validated and adopted.
func (st *state) checkDrift() error {
	drifts, err := st.tx.Drift()
	if err != nil {
		return err
	}
	if len(drifts) == 0 {
		return nil
	}
	if drifts, err = st.adoptMainMove(drifts); err != nil || len(drifts) == 0 {
		return err
	}
	if ok, err := st.adoptInitializerList(drifts); ok || err != nil {
		return err
	}
	msgs := make([]string, 0, len(drifts))
	for _, d := range drifts {
		msg := d.Message()
		if err := st.parseError(d.File); err != nil {
			msg += " — and it is not valid: " + strings.SplitN(err.Error(), " — ", 2)[0]
		}
		msgs = append(msgs, msg)
	}
	return errs.New(errs.Invalid, "%s — nothing was written; baton records no more changes until a person has looked at it", strings.Join(msgs, "; "))
}

// adoptInitializerList adopts the state files an open INITIALIZER session
// wrote by hand where there were none (for the feature list: or only the
// empty list baton init writes), at that session's next call: each is
// validated, holds no recorded work yet (no passing feature, no review, no
// session), and the event records it as created outside baton by that
// session.
func (st *state) adoptInitializerList(drifts []store.Drift) (bool, error) {
	for _, d := range drifts {
		fresh := d.Recorded == "" || (d.File == features.FileName && d.Recorded == emptyFeatureListHash())
		if !fresh || d.Now == "" || (d.File != features.FileName && d.File != reviews.FileName && d.File != progress.FileName) {
			return false, nil
		}
	}
	who, err := st.resolveActor()
	if err != nil || who == nil || who.Session == nil || who.canonical() != workflow.Initializer {
		return false, err
	}
	var names []string
	for _, d := range drifts {
		if err := st.checkFresh(d.File); err != nil {
			return false, err
		}
		names = append(names, d.File)
	}
	st.tx.Adopt(names...)
	st.adopted = names
	st.adoptNote = fmt.Sprintf("%s was created outside baton by session %d (%s); validated and adopted", strings.Join(names, ", "), *who.Session, who.Role)
	return true, nil
}

// checkFresh validates a state file an INITIALIZER wrote by hand: it
// parses, and records no work (a feature passing, a review or fix, a
// session).
func (st *state) checkFresh(name string) error {
	data, err := st.tx.Read(name)
	if err != nil {
		return err
	}
	var n int
	var what string
	switch name {
	case features.FileName:
		f, perr := features.Parse(data)
		if perr != nil {
			return invalidFile(st.tx.Store(), name, data, perr)
		}
		if bad := f.BadIDs(); len(bad) > 0 {
			return st.refuse(errs.New(errs.Policy, "the %s this session wrote has ids that are not single words: %s — write each id as one word such as F001", name, strings.Join(bad, "; ")))
		}
		n, what = len(f.Passing()), "passing features ("+strings.Join(f.Passing(), ", ")+")"
	case reviews.FileName:
		r, perr := reviews.Parse(data)
		if perr != nil {
			return invalidFile(st.tx.Store(), name, data, perr)
		}
		n, what = len(r.Reviews())+len(r.Fixes()), "reviews or fixes"
	case progress.FileName:
		p, perr := progress.Parse(data)
		if perr != nil {
			return invalidFile(st.tx.Store(), name, data, perr)
		}
		n, what = p.Len(), "sessions"
	}
	if n == 0 {
		return nil
	}
	return st.refuse(errs.New(errs.Policy, "the %s this session wrote holds %s: a new project's files record no work yet — only the roles that do the work record it, through baton. Write it with every feature pending and nothing recorded", name, what))
}

// keepRecords refuses an agent's --force that would replace a state file
// holding n records: recorded work is never wiped by an agent.
func (st *state) keepRecords(name string, n int, what string) error {
	if n == 0 {
		return nil
	}
	if who, _ := st.resolveActor(); who != nil && who.Role == workflow.Human {
		return nil
	}
	return st.refuse(errs.New(errs.Policy, "%s holds %d recorded %s: an agent may not replace it; only a person may start it over. Keep it and carry on from it", name, n, what))
}

// parseError validates a state file that changed outside baton.
func (st *state) parseError(name string) error {
	if name != progress.FileName && name != reviews.FileName && name != features.FileName && name != progress.OpenFileName {
		return nil
	}
	data, err := st.tx.Read(name)
	if err != nil || data == nil {
		return err
	}
	var perr error
	switch name {
	case progress.FileName:
		_, perr = progress.Parse(data)
	case reviews.FileName:
		_, perr = reviews.Parse(data)
	case features.FileName:
		_, perr = features.Parse(data)
	case progress.OpenFileName:
		_, perr = progress.ParseOpen(data)
	}
	if perr == nil {
		return nil
	}
	return invalidFile(st.tx.Store(), name, data, perr)
}

func emptyFeatureListHash() string { return store.HashContent(features.New().Bytes()) }

// ---- reconcile

// ReconcileResult lists the changes made outside baton that were adopted.
type ReconcileResult struct {
	Reconciled []store.Drift `json:"reconciled"`
	// LogGap is the lost part of the audit log the reconcile recorded.
	LogGap *store.LogGap `json:"log_gap,omitempty"`
	// Attested is how many missing attestations of landings it wrote.
	Attested int `json:"attested"`
}

// Short is a content hash as messages show it ("none" for none).
func Short(h string) string {
	if h == "" {
		return "none"
	}
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// validateAll parses every state and control file in full, so that a
// person reconciles only files baton can read.
func (st *state) validateAll() error {
	if _, _, err := st.progressOpt(); err != nil {
		return err
	}
	if _, _, err := st.reviewsOpt(); err != nil {
		return err
	}
	if _, _, err := st.featuresOpt(); err != nil {
		return err
	}
	if _, err := st.openSessions(); err != nil {
		return err
	}
	if _, err := st.tx.Store().LoadConfig(); err != nil {
		return err
	}
	if _, err := readBaseline(st.tx.Store()); err != nil {
		return errs.New(errs.Invalid, "%v", err)
	}
	return nil
}

// Reconcile accepts, for a person, the files as they are after a change made outside baton: each change is recorded as an event.
func (a *App) Reconcile(ctx context.Context, c Caller) (ReconcileResult, error) {
	var out ReconcileResult
	err := a.as(c).runReconcile(ctx, "baton reconcile", &out)
	return out, err
}

// acceptLogGap lets a person's reconcile chain its entry to a log whose
// anchored entries are gone, and returns the gap it records (nil for none).
func (st *state) acceptLogGap() (*store.LogGap, error) {
	s := st.tx.Store()
	gap, err := s.LogGap()
	if err != nil || gap == nil {
		return nil, err
	}
	s.AllowLogGap = true
	st.logGap = gap
	return gap, nil
}

func (a *App) runReconcile(ctx context.Context, cmdPath string, dst *ReconcileResult) error {
	var res ReconcileResult
	a.reconciling = true
	err := a.update(ctx, cmdPath, "", func(st *state) error {
		who, err := st.resolveActor()
		if err != nil {
			return err
		}
		if who == nil || who.Role != workflow.Human {
			return st.refuse(errs.New(errs.Policy, "files changed outside baton are for a person to look at; stop and report what changed"))
		}
		gap, err := st.acceptLogGap()
		if err != nil {
			return err
		}
		drifts, _, err := st.tx.Store().CheckDrift()
		if err != nil {
			return err
		}
		if err := st.validateAll(); err != nil {
			return err
		}
		res.Reconciled = drifts
		res.LogGap = gap
		if res.Attested, err = st.attestLanded(a.repo()); err != nil {
			return err
		}
		if res.Reconciled == nil {
			res.Reconciled = []store.Drift{}
		}
		var names, msgs []string
		for _, d := range drifts {
			names = append(names, d.File)
			msgs = append(msgs, fmt.Sprintf("%s: %s → %s (%s)", d.File, Short(d.Recorded), Short(d.Now), d.Difference))
		}
		if gap != nil {
			msgs = append(msgs, fmt.Sprintf("the audit log ended at entry %d though %s anchored entry %d: the loss is recorded here", gap.Seq, gap.Path, gap.Anchor.Seq))
		}
		if len(names) == 0 && gap == nil {
			return nil
		}
		st.tx.Adopt(names...)
		st.reconciled = drifts
		st.summary = "reconciled changes made outside baton: " + strings.Join(msgs, "; ")
		return nil
	})
	if err != nil {
		return err
	}
	*dst = res
	return nil
}

// within says whether path is dir or lies under it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
