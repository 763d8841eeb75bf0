package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/workflow"
)

// `reviews merge` and `reviews reject` carry out a review's decision in git
// and in the files as one baton transaction: the git refs move inside the
// state lock, before the files are committed, and are moved back
// (compare-and-swap) if the files cannot be.

// ---- reviews merge

// MergeInput is what reviews merge takes.
type MergeInput struct {
	Review int  `json:"review,omitempty"` // the review whose branch to merge (default: the last)
	FF     bool `json:"ff,omitempty"`     // fast-forward main when it can
}

// MergeResult is a merge: where main moved, what passed, what was deleted.
type MergeResult struct {
	ReviewID      int      `json:"review_id"`
	Branch        string   `json:"branch"`
	Into          string   `json:"into"`
	MergeCommit   string   `json:"merge_commit"`
	Previous      string   `json:"previous"`
	BranchHead    string   `json:"branch_head"`
	FastForward   bool     `json:"fast_forward"`
	ThreeWay      bool     `json:"three_way"`
	Worktree      string   `json:"worktree,omitempty"`
	Passed        []string `json:"passed"`
	FixesMerged   []string `json:"fixes_merged"`
	BranchDeleted bool     `json:"branch_deleted"`
	Switched      []string `json:"switched"` // worktrees that had the branch checked out, now on Into
	Detached      []string `json:"detached"`
	// Queued: the merge waits in the landing queue; main has not moved.
	Queued bool `json:"queued,omitempty"`
}

// mergeTarget is what a merge acts on, checked.
type mergeTarget struct {
	review         gjson.Result
	id             int
	branch, into   string
	intoHead, head string
	features       []string
	featureID      *string
	logHead        string // the audit log's head when the merge was made
}

// mergeTarget picks the review and checks that its branch may be merged.
func (st *state) mergeTarget(r gitops.Repo, id int) (mergeTarget, error) {
	var t mergeTarget
	rv, err := st.reviews()
	if err != nil {
		return t, err
	}
	if t.review, err = st.pickReview(rv, id); err != nil {
		return t, err
	}
	t.id = int(t.review.Get("review_id").Int())
	if seq, hash, err := st.tx.Store().LogHead(); err == nil && seq > 0 {
		t.logHead = fmt.Sprintf("seq %d %s", seq, hash)
	}
	if err := st.decide(workflow.Mergeable(withIssues(t.review))); err != nil {
		return t, err
	}
	if err := st.checkLatest(t.review); err != nil {
		return t, err
	}
	if err := st.locate(r, &t); err != nil {
		return t, err
	}
	done, err := r.IsAncestor(t.head, t.intoHead)
	if err != nil {
		return t, gitErr(err, "checking %s", t.branch)
	}
	if err := workflow.NotYetMerged(t.branch, t.head, t.into, done); err != nil {
		return t, err
	}
	if base, err := r.MergeBase(t.intoHead, t.head); err == nil {
		if err := st.checkNoStateFiles(r, t.branch, base, t.head); err != nil {
			return t, err
		}
	}
	if len(t.features) > 0 {
		if err := checkFeatureIDs(st, t.features); err != nil {
			return t, err
		}
	}
	return t, nil
}

// locate finds the review's branch and main in the repository, and
// refuses a branch that moved since the review (its new commits are
// unreviewed).
func (st *state) locate(r gitops.Repo, t *mergeTarget) error {
	ref := reviewRef(t.review)
	t.branch = ref.Branch
	if ref.Branch == "" {
		return workflow.WorkBranch(ref, "")
	}
	if f := t.review.Get("feature_id"); f.Type == gjson.String && f.Str != "" {
		t.features = features.SplitIDs(f.Str)
		t.featureID = &f.Str
	}
	var err error
	if t.into, t.intoHead, err = mainOf(r, st.cfg); err != nil {
		return err
	}
	if err := workflow.WorkBranch(ref, t.into); err != nil {
		return err
	}
	if t.head, err = r.Branch(t.branch); err != nil {
		return gitErr(err, "branch %s of review R%d does not exist in the repository at %s (already merged and deleted, or never created?)", t.branch, t.id, r.Top())
	}
	return st.decide(workflow.BranchAsReviewed(ref, t.head))
}

// pickReview returns review id, or the last review: for a session in a
// lane, the last review of its lane's item.
func (st *state) pickReview(rv *reviews.File, id int) (gjson.Result, error) {
	if id > 0 {
		return rv.Review(id)
	}
	if l, ok := st.ownLane(); ok {
		all := rv.Reviews()
		for i := len(all) - 1; i >= 0; i-- {
			if itemOfReview(all[i]) == l.Item {
				return all[i], nil
			}
		}
	}
	return rv.Last()
}

// ownLane is the lane of the session the call is bound to (false for
// none).
func (st *state) ownLane() (progress.Lane, bool) {
	who, _ := st.resolveActor()
	if who == nil || who.Session == nil || who.Source != "session" {
		return progress.Lane{}, false
	}
	p, ok, err := st.progressOpt()
	if err != nil || !ok {
		return progress.Lane{}, false
	}
	return p.LaneOf(*who.Session)
}

func mergeMessage(t mergeTarget) string {
	what := ""
	if t.featureID != nil {
		what = " (" + *t.featureID + ")"
	}
	return fmt.Sprintf("Merge branch '%s' into %s%s\n\nReview R%d: %s. Merged by 'baton reviews merge'.\n\n%s", t.branch, t.into, what, t.id, reviews.VerdictOf(t.review), mergeTrailers(t))
}

// mergeTrailers name the review and the features in git trailers
// ('git log --format=%(trailers:key=Baton-Review)'), one Baton-Feature
// line per feature.
func mergeTrailers(t mergeTarget) string {
	s := fmt.Sprintf("Baton-Review: R%d\n", t.id)
	for _, f := range t.features {
		s += "Baton-Feature: " + f + "\n"
	}
	if t.logHead != "" { // the audit log as it stood: anchored in git's history
		s += "Baton-Log: " + t.logHead + "\n"
	}
	return s
}

// recordConflict records a merge refused for conflicts: main is
// unchanged, and the next step is FIX on the branch.
func (st *state) recordConflict(t mergeTarget, ce *gitops.ConflictError) error {
	p, ok, err := st.progressOpt()
	if err != nil || !ok {
		return err
	}
	if err := st.applyDecision(p, itemOfReview(t.review), workflow.MergeConflict(t.id, t.featureID, t.branch, t.into, ce.Paths)); err != nil {
		return err
	}
	st.summary = fmt.Sprintf("merge of %s into %s refused: conflicts in %s; next FIX on %s", t.branch, t.into, strings.Join(ce.Paths, ", "), t.branch)
	return nil
}

// recordMerge writes a merge into the files: the features pass, the fixes
// of those features and the review get the merge commit.
func (st *state) recordMerge(t mergeTarget, res gitops.MergeResult, out *MergeResult) error {
	rv, err := st.reviews()
	if err != nil {
		return err
	}
	mc := res.Commit
	out.Passed, out.FixesMerged = []string{}, []string{}
	if len(t.features) > 0 {
		feat, ok, err := st.featuresOpt()
		if err != nil {
			return err
		}
		if ok {
			if _, err := feat.SetPasses(t.features, true, st.stamp(), fmt.Sprintf("review R%d passed; merged into %s as %s", t.id, t.into, gitops.Short(mc))); err != nil {
				return err
			}
			st.touch(features.FileName)
			out.Passed = t.features
		}
	}
	for _, id := range fixesOf(rv, t) {
		if err := rv.MarkMerged(id, st.stamp(), &mc); err != nil {
			return err
		}
		out.FixesMerged = append(out.FixesMerged, reviews.FixLabel(id))
	}
	if err = rv.SetReviewFields(t.id, reviews.Field{Key: "merge_commit", Value: mc}, reviews.Field{Key: "merged_onto", Value: res.Previous}, reviews.Field{Key: "merged_at", Value: st.stamp()}); err != nil {
		return err
	}
	st.touch(reviews.FileName)
	if err := st.afterMerge(t); err != nil {
		return err
	}
	st.summary = fmt.Sprintf("merged %s into %s as %s (review R%d); passing: %s; deleted %s", t.branch, t.into, gitops.Short(mc), t.id, OrDash(strings.Join(out.Passed, ", ")), t.branch)
	st.record = map[string]any{"review_id": t.id, "verdict": reviews.VerdictOf(t.review), "branch": t.branch, "into": t.into, "merge_commit": mc, "fast_forward": res.FastForward, "features": NonNil(t.features)}
	return nil
}

// fixesOf lists the unmerged fixes that the merge of review t brings to
// main: those of its features (or, for a refactor branch, of its branch)
// recorded since the features were last rejected.
func fixesOf(rv *reviews.File, t mergeTarget) []int {
	want := map[string]bool{}
	for _, id := range t.features {
		want[id] = true
	}
	concerns := func(x gjson.Result) bool {
		if len(want) == 0 {
			return x.Get("branch").String() == t.branch
		}
		for _, id := range features.SplitIDs(x.Get("feature_id").String()) {
			if want[id] {
				return true
			}
		}
		return false
	}
	after := int64(0)
	for _, r := range rv.Reviews() {
		if id := r.Get("review_id").Int(); id < int64(t.id) && concerns(r) && (reviews.VerdictOf(r) == "REJECT" || r.Get("decision.reject").Bool()) {
			after = id
		}
	}
	var out []int
	for _, x := range rv.Fixes() {
		rid := x.Get("review_id").Int()
		if rid > after && rid <= int64(t.id) && concerns(x) && !x.Get("merged_to_main").Bool() {
			out = append(out, int(x.Get("fix_id").Int()))
		}
	}
	return out
}

// detach leaves the worktrees that had a deleted branch checked out on a
// detached HEAD at its last commit; a failure is only warned about.
func (a *App) detach(r gitops.Repo, branch, at string) []string {
	done, err := gitops.Detach(r, branch, at)
	if err != nil {
		a.warn("%s was deleted, but a worktree that had it checked out could not be detached: %v (run 'git switch --detach %s' there)", branch, err, gitops.Short(at))
	}
	if done == nil {
		done = []string{}
	}
	return done
}

// leaveMerged puts the worktree that had the merged branch checked out on
// main (or, when it cannot be, on a detached HEAD at the branch's last
// commit); a failure is only warned about.
func (a *App) leaveMerged(r gitops.Repo, t mergeTarget, res gitops.MergeResult) (switched, detached []string) {
	switched, detached, err := gitops.LeaveMerged(r, t.branch, res.BranchHead, t.into, res.Commit)
	if err != nil {
		a.warn("%s was deleted, but the worktree that had it checked out could not be switched to %s: %v (run 'git switch %s' there)", t.branch, t.into, err, t.into)
	}
	if switched == nil {
		switched = []string{}
	}
	if detached == nil {
		detached = []string{}
	}
	return switched, detached
}

// withUndone adds to a failed command's error what the undo of its git
// change did (the store undoes an uncommitted intent before returning).
func (a *App) withUndone(err error) error {
	if a.undone == "" {
		return err
	}
	return &errs.Error{Kind: errs.KindOf(err), Msg: fmt.Sprintf("%v — %s", err, a.undone), Err: err}
}

// ---- reviews reject

// RejectInput is what reviews reject takes.
type RejectInput struct {
	Review int `json:"review,omitempty"` // the review whose work to reject (default: the last)
}

// RejectResult is a rejection: the branch deleted, the features requeued, the next phase.
type RejectResult struct {
	ReviewID      int      `json:"review_id"`
	Branch        string   `json:"branch"`
	BranchHead    string   `json:"branch_head"`
	BranchDeleted bool     `json:"branch_deleted"`
	Requeued      []string `json:"requeued"`
	Phase         string   `json:"phase"`
	Reason        string   `json:"reason"`
	Detached      []string `json:"detached"`
}

// deleteRejected deletes the rejected branch if it is where the review
// saw it (compare-and-swap); it returns the commit it was at, or "" when
// there was no branch to delete.
func (st *state) deleteRejected(r gitops.Repo, t *mergeTarget) (string, error) {
	t.branch = t.review.Get("branch").String()
	if f := t.review.Get("feature_id"); f.Type == gjson.String && f.Str != "" {
		t.features = features.SplitIDs(f.Str)
		t.featureID = &f.Str
	}
	st.taskID = t.featureID
	if r == nil || t.branch == "" {
		if t.branch != "" {
			st.app.warn("not inside a git repository: branch %s is not deleted", t.branch)
		}
		return "", nil
	}
	if _, err := r.Branch(t.branch); errors.Is(err, gitops.ErrNoBranch) {
		st.app.warn("branch %s does not exist: nothing to delete", t.branch)
		return "", nil
	}
	if err := st.locate(r, t); err != nil {
		return "", err
	}
	merged, err := r.IsAncestor(t.head, t.intoHead)
	if err != nil {
		return "", gitErr(err, "checking %s", t.branch)
	}
	if err := workflow.NotRejectingMerged(t.branch, t.head, t.into, merged); err != nil {
		return "", err
	}
	if err := st.intend(gitIntent{Op: "delete-branch", Repo: r.Top(), Branch: t.branch, BranchHead: t.head}); err != nil {
		return "", err
	}
	if err := r.DeleteBranch(t.branch, t.head); err != nil {
		return "", gitErr(err, "deleting %s", t.branch)
	}
	return t.head, nil
}

// recordReject requeues the features and computes the next phase as after
// a REJECT; the review records the rejection.
func (st *state) recordReject(rv *reviews.File, t mergeTarget, out *RejectResult) error {
	p, _, err := st.progressOpt()
	if err != nil {
		return err
	}
	in := reviews.NewReview{AgentType: t.review.Get("agent_type").String(), Verdict: "REJECT", FeatureID: t.featureID}
	if t.branch != "" {
		in.Branch = &t.branch
	}
	d, ids, err := st.afterReview(rv, in, t.id)
	if err != nil {
		return err
	}
	if p != nil {
		if err := st.applyReview(p, in, t.id, d, ids); err != nil {
			return err
		}
	}
	if st.feat != nil && len(t.features) > 0 {
		out.Requeued = t.features
	}
	out.Phase, out.Reason = d.Phase, d.Reason
	fields := []reviews.Field{{Key: "rejected_at", Value: st.stamp()}, {Key: "branch_deleted", Value: out.BranchDeleted}}
	if !t.review.Get("decision.reject").Bool() {
		fields = append(fields, reviews.Field{Key: "decision", Value: d})
	}
	if err = rv.SetReviewFields(t.id, fields...); err != nil {
		return err
	}
	st.touch(reviews.FileName)
	st.summary = fmt.Sprintf("rejected the work of review R%d: deleted %s; requeued %s; next %s", t.id, OrDash(t.branch), OrDash(strings.Join(out.Requeued, ", ")), d.Phase)
	return nil
}

// ReviewsMerge merges the branch of a passing review (the last, or
// in.Review) into main, marks its features passing and deletes the branch,
// in one transaction. A conflict leaves main as it was (errs.Conflict).
func (a *App) ReviewsMerge(ctx context.Context, c Caller, in MergeInput) (MergeResult, error) {
	if a.remote != nil {
		return forward[MergeResult](ctx, a, c, "reviews.merge", in)
	}
	var out MergeResult
	err := a.as(c).runReviewsMerge(ctx, "baton reviews merge", in, &out)
	return out, err
}

func (a *App) runReviewsMerge(ctx context.Context, cmdPath string, o MergeInput, dst *MergeResult) error {
	r, err := a.needRepo("reviews merge")
	if err != nil {
		return err
	}
	out := dst
	var t mergeTarget
	var res gitops.MergeResult
	var conflict error
	err = a.update(ctx, cmdPath, reviews.FileName, func(st *state) error {
		if _, err := st.require(workflow.Merge); err != nil {
			return err
		}
		var err error
		if t, err = st.mergeTarget(r, o.Review); err != nil {
			return err
		}
		st.taskID = t.featureID
		if err := st.ownItem(t.features, t.branch); err != nil {
			return err
		}
		if workflow.Queued(st.cfg.Agents, st.cfg.Gate) {
			return st.enqueue(t, out)
		}
		ff := o.FF || !st.cfg.MergeNoFF
		intend := func(commit string) error {
			return st.intend(gitIntent{Op: "merge", Repo: r.Top(), Into: t.into, Previous: t.intoHead, Commit: commit, Branch: t.branch, BranchHead: t.head})
		}
		author, committer := a.signature(r)
		res, err = r.Merge(gitops.MergeOptions{Branch: t.branch, Into: t.into, Message: mergeMessage(t), Signature: author, Committer: committer, FastForward: ff, BeforeMove: intend, Sign: a.mergeSigner()})
		var ce *gitops.ConflictError
		switch {
		case errors.As(err, &ce):
			conflict = errs.New(errs.Conflict, "%v: nothing was merged and %s is unchanged. Next: FIX on %s — merge %s into it, resolve those paths, commit, and end the session READY_FOR_REVIEW; then REVIEW and merge again", ce, t.into, t.branch, t.into)
			return st.recordConflict(t, ce)
		case err != nil:
			return gitErr(err, "merging %s into %s", t.branch, t.into)
		}
		if err := r.DeleteBranch(t.branch, res.BranchHead); err != nil {
			return gitErr(err, "%s was merged, but deleting %s failed", t.into, t.branch)
		}
		st.tx.Adopt(mainRef) // main moved, through baton: the event records where
		*out = MergeResult{ReviewID: t.id, Branch: t.branch, Into: t.into, MergeCommit: gitops.Short(res.Commit), Previous: gitops.Short(res.Previous),
			BranchHead: gitops.Short(res.BranchHead), FastForward: res.FastForward, ThreeWay: res.ThreeWay, Worktree: res.Worktree, BranchDeleted: true}
		if err := st.recordMerge(t, res, out); err != nil {
			return err
		}
		st.tx.AfterCommit(func() error { out.Switched, out.Detached = a.leaveMerged(r, t, res); return nil })
		st.attestAfterCommit(r)
		return nil
	})
	if err != nil {
		return a.withUndone(err)
	}
	if conflict != nil {
		return conflict
	}
	return nil
}

// ReviewsReject rejects the work of a review (the last, or in.Review):
// deletes its branch and requeues its features.
func (a *App) ReviewsReject(ctx context.Context, c Caller, in RejectInput) (RejectResult, error) {
	if a.remote != nil {
		return forward[RejectResult](ctx, a, c, "reviews.reject", in)
	}
	var out RejectResult
	err := a.as(c).runReviewsReject(ctx, "baton reviews reject", in, &out)
	return out, err
}

func (a *App) runReviewsReject(ctx context.Context, cmdPath string, o RejectInput, out *RejectResult) error {
	r := a.repo()
	var head string
	err := a.update(ctx, cmdPath, reviews.FileName, func(st *state) error {
		if _, err := st.require(workflow.DeleteBranch); err != nil {
			return err
		}
		rv, err := st.reviews()
		if err != nil {
			return err
		}
		pick, err := st.pickReview(rv, o.Review)
		if err != nil {
			return err
		}
		t := mergeTarget{review: pick, id: int(pick.Get("review_id").Int())}
		if err := st.ownItem(features.SplitIDs(pick.Get("feature_id").String()), pick.Get("branch").String()); err != nil {
			return err
		}
		if err := workflow.Rejectable(reviewRef(pick)); err != nil {
			return err
		}
		if head, err = st.deleteRejected(r, &t); err != nil {
			return err
		}
		*out = RejectResult{ReviewID: t.id, Branch: t.branch, BranchHead: gitops.Short(head), BranchDeleted: head != "", Requeued: []string{}, Detached: []string{}}
		if err := st.recordReject(rv, t, out); err != nil {
			return err
		}
		if head != "" {
			st.tx.AfterCommit(func() error { out.Detached = a.detach(r, t.branch, head); return nil })
		}
		return nil
	})
	if err != nil {
		return a.withUndone(err)
	}
	return nil
}
