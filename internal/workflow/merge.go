package workflow

import (
	"slices"
	"strings"

	"github.com/baton-cli/baton/internal/errs"
)

// The rules of carrying out a review's decision: which review's branch is
// merged or rejected, and which features may be marked passing.

// ReviewRef is what the rules read of a recorded review.
type ReviewRef struct {
	ID           int
	Architecture bool
	Verdict      string // as recorded
	Features     []string
	Branch       string // "" none
	// Blocking: a critical or major issue in it.
	Blocking bool
	// The decision recorded with it: merge, reject, the refactor branch
	// an architecture review sent its fixes to, and the rule that decided.
	Merge, Reject  bool
	DecisionBranch string
	Rule           string
	// What happened since: its merge commit and its rejection ("" none).
	MergeCommit string
	RejectedAt  string
	// ReviewedTo is the head it reviewed (commit_range.to, "" unknown).
	ReviewedTo string
}

// Merged says whether the review lets its branch through: a PASS, or a
// decision to merge (at the fix-cycle limit).
func (r ReviewRef) Merged() bool { return r.Verdict == "PASS" || r.Merge }

// Rejects says whether the review rejected the work.
func (r ReviewRef) Rejects() bool { return r.Verdict == "REJECT" || r.Reject }

// Passes says whether the review lets its features pass: it lets its
// branch through, and the work was not rejected since.
func (r ReviewRef) Passes() bool { return r.Merged() && !r.Reject && r.RejectedAt == "" }

// about says whether x is about the same work as r: r's branch, or a
// feature r names. Architecture reviews are of the codebase, not of work.
func (r ReviewRef) about(x ReviewRef) bool {
	if x.Architecture {
		return false
	}
	if r.Branch != "" && x.Branch == r.Branch {
		return true
	}
	for _, f := range x.Features {
		if slices.Contains(r.Features, f) {
			return true
		}
	}
	return false
}

// LaterReview returns the first review after r about the same work, if
// any: the latest review of a piece of work decides.
func LaterReview(all []ReviewRef, r ReviewRef) (ReviewRef, bool) {
	for _, x := range all {
		if x.ID > r.ID && r.about(x) {
			return x, true
		}
	}
	return ReviewRef{}, false
}

// LatestDecides refuses to carry out review r when a later review of the
// same work decided otherwise: an earlier PASS is not merged past a later
// REJECT or REQUEST_CHANGES.
func LatestDecides(r ReviewRef, later *ReviewRef) error {
	if later == nil {
		return nil
	}
	return errs.New(errs.Policy, "review R%d is not the latest review of its work: R%d (%s) came after it, and the latest review decides — act on R%d (merge it only if it lets the work through)",
		r.ID, later.ID, later.Verdict, later.ID)
}

// Mergeable refuses a review that does not let its branch through to
// main: an architecture review, one merged already, a rejection, a PASS
// with a blocking issue, or any verdict that asks for changes.
func Mergeable(r ReviewRef) error {
	switch {
	case r.Architecture:
		return errs.New(errs.Usage, "review R%d is an architecture review: it merges nothing (its refactor branch is merged after the ARCHITECTURE_REFACTOR review; name that review with --review)", r.ID)
	case r.MergeCommit != "":
		return errs.New(errs.Conflict, "review R%d was already merged into main as %s: nothing to merge", r.ID, short(r.MergeCommit))
	case r.Rejects():
		return errs.New(errs.Policy, "review R%d rejected the work: it is not merged; delete its branch and requeue its features with 'baton reviews reject --review %d'", r.ID, r.ID)
	case r.Verdict == "PASS" && r.Blocking:
		return errs.New(errs.Policy, "review R%d is a PASS with a critical or major issue: blocking issues are not merged — FIX them and REVIEW again", r.ID)
	case !r.Merged():
		return errs.New(errs.Policy, "review R%d is %s: only a PASS review (or a fix-cycle-limit decision to merge) is merged — FIX its issues and REVIEW again, or name another review with --review", r.ID, r.Verdict)
	}
	return nil
}

// Rejectable refuses to reject what is not a piece of work under review:
// an architecture review's, work merged already, or work rejected already.
func Rejectable(r ReviewRef) error {
	switch {
	case r.Architecture:
		return errs.New(errs.Usage, "review R%d is an architecture review: there is no work to reject (name a feature review with --review)", r.ID)
	case r.MergeCommit != "":
		return errs.New(errs.Conflict, "review R%d was merged into main as %s: merged work is not rejected (a person reverts it on main)", r.ID, short(r.MergeCommit))
	case r.RejectedAt != "":
		return errs.New(errs.Conflict, "the work of review R%d was already rejected at %s", r.ID, r.RejectedAt)
	}
	return nil
}

// BranchAsReviewed refuses to merge or reject a branch that is not as the
// review saw it: a review that recorded only an abbreviated commit cannot
// say which commit it reviewed, and commits added since are unreviewed.
func BranchAsReviewed(r ReviewRef, head string) error {
	to := r.ReviewedTo
	switch {
	case to != "" && len(to) < len(head):
		return errs.New(errs.Policy, "review R%d recorded only an abbreviated commit, %s, which more than one commit can match: it cannot say which commit was reviewed. REVIEW %s again (a new 'baton reviews add-review' records the full commit) before merging or rejecting", r.ID, to, r.Branch)
	case to != "" && to != head:
		return errs.New(errs.Policy, "%s has commits review R%d did not see: it reviewed up to %s, and %s is at %s now. REVIEW the new commits (a new 'baton reviews add-review' records the range) before merging or rejecting", r.Branch, r.ID, short(to), r.Branch, short(head))
	}
	return nil
}

// LatestReviewOf returns the last feature review naming id (an
// ARCHITECTURE review is of the codebase, not of a feature's work).
func LatestReviewOf(all []ReviewRef, id string) (ReviewRef, bool) {
	for i := len(all) - 1; i >= 0; i-- {
		if !all[i].Architecture && slices.Contains(all[i].Features, id) {
			return all[i], true
		}
	}
	return ReviewRef{}, false
}

// CheckMarkPassing refuses to mark features passing that the latest review
// naming them did not pass: a feature passes on a passing review of its
// work and that review's merge. A person may.
func CheckMarkPassing(person bool, ids []string, all []ReviewRef) error {
	if person {
		return nil
	}
	var missing []string
	for _, id := range ids {
		if r, ok := LatestReviewOf(all, id); !ok || !r.Passes() {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return errs.New(errs.Policy, "%s: no PASS review (or fix-cycle-limit decision to merge) names %s as its latest review, so it may not be marked passing. Record the review of the work first ('baton reviews add-review'); a passing review's merge marks its features passing",
		strings.Join(missing, ", "), map[bool]string{true: "it", false: "them"}[len(missing) == 1])
}

// LandedBy returns the last review that merged branch into main, if any.
func LandedBy(all []ReviewRef, branch string) (ReviewRef, bool) {
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Branch == branch && all[i].MergeCommit != "" && !all[i].Architecture {
			return all[i], true
		}
	}
	return ReviewRef{}, false
}

// WorkBranch refuses to merge a review that names no branch, or that
// reviewed main itself: only a work branch is merged into main.
func WorkBranch(r ReviewRef, main string) error {
	switch {
	case r.Branch == "":
		return errs.New(errs.Usage, "review R%d names no branch: nothing to merge", r.ID)
	case r.Branch == main:
		return errs.New(errs.Usage, "review R%d reviewed %s itself: only a work branch is merged into %s", r.ID, r.Branch, main)
	}
	return nil
}

// NotYetMerged refuses to merge a branch whose head main already holds:
// there is nothing to merge (a merge made outside baton is recorded as
// one with mark-merged).
func NotYetMerged(branch, head, main string, onMain bool) error {
	if !onMain {
		return nil
	}
	return errs.New(errs.Conflict, "%s (at %s) is already merged into %s: nothing to merge (record a manual merge with 'baton reviews mark-merged')", branch, short(head), main)
}

// NotRejectingMerged refuses to reject a branch whose head main already
// holds: merged work is not rejected.
func NotRejectingMerged(branch, head, main string, onMain bool) error {
	if !onMain {
		return nil
	}
	return errs.New(errs.Conflict, "%s (at %s) is already merged into %s: merged work is not rejected (a person reverts it on %s)", branch, short(head), main, main)
}
