package app

import (
	"github.com/baton-cli/baton/errs"
	"github.com/baton-cli/baton/gitops"
	"github.com/baton-cli/baton/reviews"
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
	s, err := st.boundOpen()
	if err != nil || s == nil || s.SentHead == "" || (s.SentBranch == branch && s.SentHead == head) {
		return err
	}
	return st.refuse(errs.New(errs.Policy, "--verdict %s: the work sent to this review is %s at %s, not %s at %s: a review passes the work handed over to it, not a branch or commits made during the review. Review %s at %s, and record what needs changing as issues (REQUEST_CHANGES) for FIX",
		in.Verdict, s.SentBranch, gitops.Short(s.SentHead), branch, gitops.Short(head), s.SentBranch, gitops.Short(s.SentHead)))
}
