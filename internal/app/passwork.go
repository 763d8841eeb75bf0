package app

import (
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

// approving says whether a verdict can let its branch through to main (a
// PASS, or a PASS_WITH_COMMENTS the fix-cycle limit merges).
func approving(verdict string) bool {
	return verdict == "PASS" || verdict == "PASS_WITH_COMMENTS"
}

// checkPassWork refuses an agent's approving review that names no work
// handed over for review: main itself, a branch with no commit that is not
// on main (its features would pass with no work), or, in a REVIEW session
// sent a branch, anything but that branch at the head it was sent at (a
// branch or head of the reviewer's own making, or an older head). A person
// records what they decide. Run after reviewRange, which records the
// branch's head from git.
func (st *state) checkPassWork(in reviews.NewReview) error {
	r := st.app.repo()
	if r == nil || in.Branch == nil || !approving(in.Verdict) || in.CommitRange == nil || in.CommitRange.To == nil {
		return nil
	}
	if who, _ := st.resolveActor(); who == nil || who.person() {
		return nil
	}
	branch, head := *in.Branch, *in.CommitRange.To
	main, mainHead, err := mainOf(r, st.cfg)
	if err != nil {
		return err
	}
	if branch == main && in.AgentType == workflow.Architecture {
		return nil // an architecture review is of main, and names no feature
	}
	if branch == main {
		return st.refuse(errs.New(errs.Policy, "--verdict %s: %s is the branch reviewed work is merged into, not work under review, and passing it would mark features passing with no work. Review the branch the work was committed on, or record REQUEST_CHANGES or REJECT when there is none",
			in.Verdict, main))
	}
	if onMain, err := r.IsAncestor(head, mainHead); err != nil {
		return gitErr(err, "checking %s against %s", branch, main)
	} else if onMain {
		return st.refuse(errs.New(errs.Policy, "--verdict %s: %s (at %s) has no commit that is not on %s, so there is no work on it to pass. Review the branch the work was committed on, or record REQUEST_CHANGES or REJECT when there is none",
			in.Verdict, branch, gitops.Short(head), main))
	}
	if err := st.checkNoStateFiles(r, branch, Deref(in.CommitRange.From), head); err != nil {
		return err
	}
	s, err := st.boundOpen()
	if err != nil || s == nil || s.SentHead == "" || (s.SentBranch == branch && s.SentHead == head) {
		return err
	}
	return st.refuse(errs.New(errs.Policy, "--verdict %s: the work sent to this review is %s at %s, not %s at %s: a review passes the work handed over to it, not a branch or commits made during the review. Review %s at %s, and record what needs changing as issues (REQUEST_CHANGES) for FIX",
		in.Verdict, s.SentBranch, gitops.Short(s.SentHead), branch, gitops.Short(head), s.SentBranch, gitops.Short(s.SentHead)))
}

// supersededBy returns the first review after rv about the same work (a
// feature it names, or its branch), if any: the latest review of a piece
// of work decides, so an earlier PASS is not merged past a later REJECT or
// REQUEST_CHANGES.
func supersededBy(all []gjson.Result, rv gjson.Result) (gjson.Result, bool) {
	id, branch := rv.Get("review_id").Int(), rv.Get("branch").String()
	named := map[string]bool{}
	for _, f := range features.SplitIDs(rv.Get("feature_id").String()) {
		named[f] = true
	}
	for _, x := range all {
		if x.Get("review_id").Int() <= id || x.Get("agent_type").String() == workflow.Architecture {
			continue
		}
		if branch != "" && x.Get("branch").String() == branch {
			return x, true
		}
		for _, f := range features.SplitIDs(x.Get("feature_id").String()) {
			if named[f] {
				return x, true
			}
		}
	}
	return gjson.Result{}, false
}

// checkLatest refuses to merge review id when a later review of the same
// work decided otherwise.
func (st *state) checkLatest(rv gjson.Result, id int) error {
	r, err := st.reviews()
	if err != nil {
		return err
	}
	later, ok := supersededBy(r.Reviews(), rv)
	if !ok {
		return nil
	}
	n := later.Get("review_id").Int()
	return st.refuse(errs.New(errs.Policy, "review R%d is not the latest review of its work: R%d (%s) came after it, and the latest review decides — act on R%d (merge it only if it lets the work through)",
		id, n, reviews.VerdictOf(later), n))
}

// checkOwnFile refuses a session's write through --file naming another
// file than the project's own: baton would read that file as the state
// (a review the log never recorded, say) and act on it — merge, mark
// features passing — while the drift check, which compares the files the
// log records, never looks at it. A person may name any file.
func (st *state) checkOwnFile(name string) error {
	if name == "" || st.app.g.File == "" {
		return nil
	}
	s := st.tx.Store()
	given, own := s.Path(name), filepath.Join(s.Dir, name)
	if samePath(given, own) {
		return nil
	}
	who, err := st.resolveActor()
	if err != nil || who == nil || who.person() {
		return err
	}
	return st.refuse(errs.New(errs.Policy, "--file %s: this project's %s is %s, and a session writes only the project's own state files, never another copy. Leave --file out",
		st.app.g.File, name, own))
}

// samePath says whether two paths name the same file (links resolved).
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// stateFilesIn lists baton's state files (the three files and .baton/, at
// the state directory's place in the repository) that the commits from
// base to head add or change: a branch that carries copies of them would
// put them on main, where every checkout rewinds the state.
func (st *state) stateFilesIn(r gitops.Repo, base, head string) []string {
	rel, err := filepath.Rel(r.Top(), st.tx.Store().Dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil // the state lives outside the repository
	}
	prefix := ""
	if rel != "." {
		prefix = filepath.ToSlash(rel) + "/"
	}
	changes, err := r.Changes(base, head)
	if err != nil {
		return nil
	}
	var out []string
	for _, c := range changes {
		name, ok := strings.CutPrefix(c.Path, prefix)
		if !ok || c.Deleted {
			continue
		}
		if name == progress.FileName || name == reviews.FileName || name == features.FileName || strings.HasPrefix(name, ".baton/") {
			out = append(out, c.Path)
		}
	}
	return out
}

// checkNoStateFiles refuses to pass or merge a branch that carries copies
// of baton's state files.
func (st *state) checkNoStateFiles(r gitops.Repo, branch, base, head string) error {
	if base == "" {
		return nil
	}
	files := st.stateFilesIn(r, base, head)
	if len(files) == 0 {
		return nil
	}
	if len(files) > 5 {
		files = append(files[:5], "…")
	}
	if predecessorTracked(st.tx.Store()) {
		st.app.warn("%s commits copies of the state files (%s), as the predecessor did (baton init found them tracked by git): merged, they reach main; take them off main and every branch with 'git rm --cached' and a commit", branch, strings.Join(files, ", "))
		return nil
	}
	return st.refuse(errs.New(errs.Policy, "%s commits copies of baton's state files (%s), which stay out of git: merged, they would put stale state on main, and every checkout would rewind it. Ask for them to be taken off the branch (REQUEST_CHANGES: 'git rm --cached' them and commit), then review again",
		branch, strings.Join(files, ", ")))
}

// predecessorTracked says whether baton init adopted a predecessor's state
// that git tracked (its "tracked" anomaly, in an entry of a person's, not
// of an agent's session): branches of that time carry copies of the
// files, and their work is reviewed and merged as it is.
func predecessorTracked(s *store.Store) bool {
	events, err := s.ReadEvents()
	if err != nil {
		return false
	}
	for _, e := range events {
		if e.Type != "task" || !strings.Contains(string(e.Payload), `"migrated"`) || (e.Auth != "" && !strings.HasPrefix(e.Auth, "person:")) {
			continue
		}
		tracked := false
		gjson.GetBytes(e.Payload, "record.migrated.anomalies").ForEach(func(_, a gjson.Result) bool {
			tracked = tracked || a.Get("kind").String() == "tracked"
			return !tracked
		})
		if tracked {
			return true
		}
	}
	return false
}
