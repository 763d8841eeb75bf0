package app

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

// The predecessor's prompts move main with git themselves: the
// INITIALIZER commits the project's setup on main, and REVIEW merges an
// approved branch with 'git checkout main && git merge'. At the bound
// session's next write baton adopts exactly these moves, and nothing else:
// any other commit reaching main still refuses the write (and verify
// reports it).

// adoptMainMove adopts a move of main the bound session made itself: an
// INITIALIZER's setup commits, or a REVIEW's own merge of exactly a
// reviewed head. It returns the drifts left to judge.
func (st *state) adoptMainMove(drifts []store.Drift) ([]store.Drift, error) {
	var main *store.Drift
	var rest []store.Drift
	for i, d := range drifts {
		if d.File == mainRef && d.Now != "" {
			main = &drifts[i]
		} else {
			rest = append(rest, d)
		}
	}
	if main == nil {
		return drifts, nil
	}
	who, err := st.mover()
	if err != nil || who == nil {
		return drifts, err
	}
	r := st.app.repo()
	if r == nil {
		return drifts, nil
	}
	ok := false
	switch who.canonical() {
	case workflow.Initializer:
		ok, err = st.adoptSetup(r, *main, who)
	case workflow.Review:
		ok, err = st.adoptHandMerge(r, *main, who)
	}
	if !ok || err != nil {
		return drifts, err
	}
	return rest, nil
}

// mover is the session a move of main is attributed to: the bound
// session; or, for a launcher or a person closing up after an agent (the
// predecessor's BROWNFIELD_INITIALIZER commits on main as its last step),
// the one session open.
func (st *state) mover() (*actor, error) {
	who, err := st.resolveActor()
	if err != nil || who == nil || who.Session != nil {
		return who, err
	}
	if who.Role == workflow.Human && who.Source == "person" && who.Reason != "" {
		return nil, nil // a person's own override is not an agent's move
	}
	open, err := st.openSessions()
	if err != nil || len(open.Open) != 1 {
		return nil, err
	}
	id := open.Open[0].SessionID
	return &actor{Role: open.Open[0].AgentType, Session: &id, Source: "session"}, nil
}

// adoptSetup adopts an INITIALIZER session's commits on main (the
// project's initial setup): main moved forward from where the last event
// saw it, and either no work of another role has been opened or recorded
// yet, or the move brings documents only (a brownfield start's
// specification). The baseline verify counts main's commits from moves to the new
// head.
func (st *state) adoptSetup(r gitops.Repo, d store.Drift, who *actor) (bool, error) {
	if started, err := st.workStarted(); err != nil {
		return false, err
	} else if started && !(documentsOnly(r, d.Recorded, d.Now) && specOnly(r, d)) {
		return false, nil // code reaching main after work began is not setup
	}
	if d.Recorded != "" {
		if ok, err := r.IsAncestor(d.Recorded, d.Now); err != nil || !ok {
			return false, nil // main was rewritten, not added to
		}
	}
	b := gitBaseline{RecordedAt: st.stamp()}
	if old, err := st.tx.Read(baselineName); err != nil {
		return false, err
	} else if old != nil {
		if err := json.Unmarshal(old, &b); err != nil {
			return false, nil // verify reports a broken baseline
		}
	}
	if b.MainBranch == "" || b.MainHead == nil { // taken over before the first commit
		b.MainBranch, _, _ = mainOf(r, st.cfg)
	}
	head := d.Now
	b.MainHead = &head
	st.tx.Write(baselineName, append(jsondoc.Pretty(b), '\n'))
	st.touch(baselineName)
	st.tx.Adopt(mainRef)
	st.adopted = append(st.adopted, mainRef)
	st.adoptNote = fmt.Sprintf("session %d (%s) committed the project's setup on %s (now at %s): adopted as the starting point", *who.Session, who.Role, b.MainBranch, gitops.Short(head))
	st.app.notice("%s", st.adoptNote)
	return true, nil
}

// workStarted says whether the project's work has begun: a session of a
// role other than INITIALIZER opened or recorded, or a review or fix
// recorded. From then on only a reviewed merge puts code on main.
func (st *state) workStarted() (bool, error) {
	open, err := st.openSessions()
	if err != nil {
		return false, err
	}
	for _, o := range open.Open {
		if c, _ := workflow.Canonical(o.AgentType); c != workflow.Initializer {
			return true, nil
		}
	}
	if rv, ok, err := st.reviewsOpt(); err != nil || (ok && len(rv.Reviews())+len(rv.Fixes()) > 0) {
		return err == nil, err
	}
	p, ok, err := st.progressOpt()
	if err != nil || !ok {
		return false, err
	}
	started := false
	p.Sessions(func(raw []byte) {
		if c, _ := workflow.Canonical(gjson.GetBytes(raw, "agent_type").String()); c != workflow.Initializer {
			started = true
		}
	})
	return started, nil
}

// documentsOnly says whether main's move from was to now adds or changes
// nothing but documents — regular .md or .txt files, such as the
// specification a BROWNFIELD_INITIALIZER commits — and removes nothing.
// The files that instruct agents (AGENTS.md, CLAUDE.md, ...) are not
// such documents: they tell every later session, REVIEW included, what
// to do.
func documentsOnly(r gitops.Repo, was, now string) bool {
	if was == "" {
		return false
	}
	changes, err := r.Changes(was, now)
	if err != nil {
		return false
	}
	for _, c := range changes {
		ext := strings.ToLower(path.Ext(c.Path))
		if c.Deleted || c.Mode != 0o100644 || (ext != ".md" && ext != ".txt") || slices.Contains(agentDocNames, c.Path) {
			return false
		}
	}
	return true
}

// adoptHandMerge adopts a REVIEW session's own 'git merge' of an approved
// branch: main's new head is a fast-forward to, or a merge commit whose
// parents are exactly, main's recorded head and the full reviewed head of
// a PASS review (or a fix-cycle-limit decision to merge) not yet merged,
// holding the tree a clean merge of the two gives. It is recorded as that review's merge, as 'baton reviews merge' records
// one.
func (st *state) adoptHandMerge(r gitops.Repo, d store.Drift, who *actor) (bool, error) {
	rv, ok, err := st.reviewsOpt()
	if err != nil || !ok {
		return false, err
	}
	all, refs := rv.Reviews(), reviewRefs(rv)
	for i := len(all) - 1; i >= 0; i-- {
		x := all[i]
		to := x.Get("commit_range.to").String()
		if !mergeable(x) || len(to) != 40 {
			continue
		}
		if _, later := workflow.LaterReview(refs, refs[i]); later {
			continue // a later review of the same work decides
		}
		ff, ok := mergeOf(r, d.Recorded, d.Now, to)
		if !ok {
			continue
		}
		t := mergeTarget{review: x, id: int(x.Get("review_id").Int()), branch: x.Get("branch").String(), head: to, intoHead: d.Recorded}
		if f := x.Get("feature_id"); f.Type == gjson.String && f.Str != "" {
			t.features = features.SplitIDs(f.Str)
			t.featureID = &f.Str
		}
		t.into, _, _ = mainOf(r, st.cfg)
		var out MergeResult
		if err := st.recordMerge(t, gitops.MergeResult{Commit: d.Now, Previous: d.Recorded, BranchHead: to, FastForward: ff}, &out); err != nil {
			return false, err
		}
		st.tx.Adopt(mainRef)
		st.adopted = append(st.adopted, mainRef)
		st.adoptNote = fmt.Sprintf("session %d (%s) merged %s (review R%d, at %s) into %s itself: adopted as that review's merge, %s", *who.Session, who.Role, t.branch, t.id, gitops.Short(to), t.into, gitops.Short(d.Now))
		st.app.notice("%s", st.adoptNote)
		return true, nil
	}
	return false, nil
}

// mergeable says whether a review lets its branch through and is not
// merged yet.
func mergeable(x gjson.Result) bool {
	return x.Get("agent_type").String() != workflow.Architecture && !x.Get("merge_commit").Exists() &&
		!x.Get("decision.reject").Bool() && reviews.VerdictOf(x) != "REJECT" && reviews.Merged(x)
}

// mergeOf says whether now is main's head after bringing reviewed in on
// top of was: a fast-forward (now is reviewed, which contains was) or a
// merge commit with exactly was and reviewed as its parents and the tree
// a clean merge of the two gives.
func mergeOf(r gitops.Repo, was, now, reviewed string) (ff, ok bool) {
	if now == reviewed {
		if was == "" {
			return true, true
		}
		in, err := r.IsAncestor(was, reviewed)
		return true, err == nil && in
	}
	p1, err1 := r.Resolve(now + "^1")
	p2, err2 := r.Resolve(now + "^2")
	_, err3 := r.Resolve(now + "^3")
	if err1 != nil || err2 != nil || err3 == nil || p1 != was || p2 != reviewed {
		return false, false
	}
	return false, cleanMerge(r, was, now, reviewed)
}

// cleanMerge says whether the merge commit now holds exactly the tree a
// clean merge of reviewed into was gives: a merge that adds, drops or
// changes anything (an evil merge, or a conflict resolved by hand) is not
// the reviewed work.
func cleanMerge(r gitops.Repo, was, now, reviewed string) bool {
	want, err := r.CleanMergeTree(was, reviewed)
	if err != nil {
		return false
	}
	got, err := r.TreeOf(now)
	return err == nil && got == want
}

// specOnly says whether an initializer's move of main only adds what the
// predecessor's brownfield prompt commits there once work has begun: the
// XML specifications it writes from the free-form input (app_spec*.txt at
// the top), in commits that merge nothing. Code reaching main this way is
// not adopted.
func specOnly(r gitops.Repo, d store.Drift) bool {
	if d.Recorded == "" {
		return false
	}
	top := r.Top()
	if merges, err := GitOut(top, "rev-list", "--merges", d.Recorded+".."+d.Now); err != nil || merges != "" {
		return false
	}
	names, err := GitOut(top, "diff", "--name-only", "--no-renames", d.Recorded, d.Now)
	if err != nil || names == "" {
		return false
	}
	for _, n := range strings.Split(names, "\n") {
		if ok, _ := path.Match("app_spec*.txt", path.Base(n)); !ok || strings.Contains(n, "/") {
			return false
		}
	}
	return true
}
