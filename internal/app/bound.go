package app

import (
	"encoding/json"
	"errors"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/workflow"
)

// This file binds records to the work they are about: a feature passes
// only on a passing review of it, and the workflow waits for what a review
// decided (the merge) before it moves on.

// checkPassReviews refuses to mark a feature passing that the latest
// review naming it did not pass (workflow.CheckMarkPassing).
func (st *state) checkPassReviews(ids []string) error {
	if err := checkFeatureIDs(st, ids); err != nil {
		return err
	}
	person := st.actorOf().Person()
	var all []workflow.ReviewRef
	if !person { // a person's record rests on no review
		rv, ok, err := st.reviewsOpt()
		if err != nil {
			return err
		}
		if ok {
			all = reviewRefsWhere(rv, naming(ids))
		}
	}
	return st.decide(workflow.CheckMarkPassing(person, ids, all))
}

// afterMerge applies, once the merge is recorded, the decision the merged
// review made (the status waited in REVIEW for it).
func (st *state) afterMerge(t mergeTarget) error {
	p, ok, err := st.progressOpt()
	if err != nil || !ok {
		return err
	}
	var d workflow.Decision
	if raw := t.review.Get("decision"); raw.IsObject() {
		if err := json.Unmarshal([]byte(raw.Raw), &d); err != nil {
			return err
		}
	}
	sit, err := st.situation()
	if err != nil {
		return err
	}
	return st.applyDecision(p, itemOfReview(t.review), workflow.AfterMerge(t.id, d, sit))
}

// confineRange keeps a session's range on its own branch, from its base
// commit (workflow.ConfineRange): the end is checked against the head of
// the session's branch, else of the checkout it ends in. Outside a
// repository nothing is checked.
func (st *state) confineRange(sess progress.OpenSession, branch *string, from, to **string, toGiven bool) error {
	r := st.app.repo()
	if r == nil || *to == nil {
		return nil
	}
	c := workflow.SessionRange{Session: sess.SessionID, To: **to, ToGiven: toGiven, From: Deref(*from), Base: Deref(sess.BaseCommit)}
	if branch != nil {
		if h, err := r.Branch(*branch); err == nil {
			c.End, c.Where = h, "its branch "+*branch
		}
	}
	if c.End == "" {
		h, err := r.Head()
		if err != nil {
			return nil
		}
		c.End, c.Where = h, "the checkout it ends in"
	}
	var err error
	if c.OnWork, err = r.IsAncestor(c.To, c.End); err != nil {
		return gitErr(err, "checking %s", gitops.Short(c.To))
	}
	if c.From != "" && c.Base != "" && c.From != c.Base {
		if c.FromAfterBase, err = r.IsAncestor(c.Base, c.From); err != nil {
			return gitErr(err, "checking %s", gitops.Short(c.From))
		}
	}
	end, err := workflow.ConfineRange(c)
	if err != nil {
		return st.decide(err)
	}
	*to = &end
	return nil
}

// checkReady applies what READY_FOR_REVIEW requires of an IMPLEMENT or
// FIX session's end (workflow.ReadyForReview): new commits on a branch of
// its own, and from FIX a recorded fix answering the review that asked
// for it.
func (st *state) checkReady(s progress.Session, branch *string) error {
	h := workflow.Handover{Session: s.SessionID, Role: s.AgentType, Outcome: s.Outcome, Branch: Deref(branch), Commits: len(s.Commits)}
	r := st.app.repo()
	h.Repo, h.Person = r != nil, st.actorOf().Person()
	role := canonicalRole(s.AgentType)
	if !h.Repo || h.Person || h.Outcome != "READY_FOR_REVIEW" || (role != workflow.Implement && role != workflow.Fix) {
		return nil
	}
	h.Main, _, _ = mainOf(r, st.cfg)
	if role == workflow.Fix && h.Branch != "" {
		rv, ok, err := st.reviewsOpt()
		if err != nil {
			return err
		}
		if ok {
			h.Review = workflow.AskedForFix(reviewRefsWhere(rv, ofBranch(h.Branch)), h.Branch)
			for _, x := range rv.Fixes() {
				h.Answered = h.Answered || int(x.Get("review_id").Int()) == h.Review
			}
		}
	}
	return st.decide(workflow.ReadyForReview(h))
}

// checkReview applies the rules of a new review before its range is
// recorded (workflow.CheckReview), with what the files and git say about
// the work it names.
func (st *state) checkReview(rv *reviews.File, in reviews.NewReview) error {
	n := workflow.NewReview{AgentType: in.AgentType, Verdict: in.Verdict, Branch: Deref(in.Branch), Blocking: blockingPending(in.Issues)}
	if in.FeatureID != nil {
		n.Features = features.SplitIDs(*in.FeatureID)
	}
	n.Person = st.actorOf().Person()
	r := st.app.repo()
	if r != nil && n.Branch != "" {
		n.Repo = r.Top()
		head, err := r.Branch(n.Branch)
		n.BranchExists = !errors.Is(err, gitops.ErrNoBranch)
		st.landedFacts(r, rv, head, &n)
	}
	if n.Branch != "" && (len(n.Features) > 0 || n.AgentType == workflow.Review) {
		if err := st.workUnderReview(rv, &n.Work, n.Branch); err != nil {
			return err
		}
	}
	return st.decide(workflow.CheckReview(n))
}

// landedFacts reads whether the branch holds nothing beyond main (it is
// gone, or its head is on main) and, only then, the review that merged it:
// work on the branch that main does not hold is no landed work, whatever
// merged before. What git cannot answer is left to the range's recording.
func (st *state) landedFacts(r gitops.Repo, rv *reviews.File, head string, n *workflow.NewReview) {
	n.BranchLanded = !n.BranchExists
	if n.BranchExists {
		_, mainHead, err := mainOf(r, st.cfg)
		if err != nil {
			return
		}
		if n.BranchLanded, err = r.IsAncestor(head, mainHead); err != nil || !n.BranchLanded {
			n.BranchLanded = false
			return
		}
	}
	sameBranch := func(x gjson.Result) bool { return x.Get("branch").String() == n.Branch }
	if landed, ok := workflow.LandedBy(reviewRefsWhere(rv, sameBranch), n.Branch); ok {
		n.Landed = &landed
	}
}

// workUnderReview reads what says which features are under review on
// branch: the status, earlier reviews of the branch, the bound session.
func (st *state) workUnderReview(rv *reviews.File, w *workflow.WorkUnderReview, branch string) error {
	p, ok, err := st.progressOpt()
	if err != nil {
		return err
	}
	if ok {
		if cur, err := p.Status(); err == nil {
			w.StatusFeature, w.StatusBranch = cur.CurrentFeature, Deref(cur.CurrentBranch)
		}
		if v, ok := st.laneView(p); ok { // a lane's session reviews its lane's item
			w.StatusFeature, w.StatusBranch = v.Feature, Deref(v.Branch)
		}
	}
	w.BranchFeatures = rv.BranchFeatures(branch)
	o, err := st.boundOpen()
	if err != nil {
		return err
	}
	if o != nil {
		w.SentBranch = o.SentBranch
	}
	return nil
}

// fixFeatures refuses a fix naming a feature its review is not about
// (workflow.FixFeatures).
func (st *state) fixFeatures(rv workflow.ReviewRef, named *string) error {
	if named == nil || len(rv.Features) == 0 {
		return nil
	}
	person := st.actorOf().Person()
	if !person {
		if err := checkFeatureIDs(st, features.SplitIDs(*named)); err != nil {
			return err
		}
	}
	return st.decide(workflow.FixFeatures(rv, features.SplitIDs(*named), person))
}

// workBranch is the branch a session's work is on: the one named, else the
// branch checked out (nil on main or a detached HEAD).
func (a *App) workBranch(named *string) *string {
	if named != nil {
		return named
	}
	r := a.repo()
	if r == nil {
		return nil
	}
	b, err := r.CurrentBranch()
	if err != nil || b == "" {
		return nil
	}
	return &b
}

// sentWork is the branch of the work sent to a REVIEW session as it opens
// (the one it was opened on, else the status's) and the head handed over
// on it ("" and "" when there is none, or no repository).
func (st *state) sentWork(p *progress.File, branch string) (string, string) {
	if branch == "" && p != nil {
		if cur, err := p.Status(); err == nil && cur.CurrentBranch != nil {
			branch = *cur.CurrentBranch
		}
	}
	r := st.app.repo()
	if branch == "" || r == nil {
		return "", ""
	}
	head, err := r.Branch(branch)
	if err != nil {
		return "", ""
	}
	_, mainHead, _ := mainOf(r, st.cfg)
	return branch, handedOver(r, p, head, mainHead)
}

// handedOver is the head handed over for review on the branch at head
// (workflow.HandedOver), from the head the last READY_FOR_REVIEW session
// recorded.
func handedOver(r gitops.Repo, p *progress.File, head, mainHead string) string {
	if p == nil {
		return head
	}
	last := ""
	p.Sessions(func(raw []byte) {
		if s := gjson.ParseBytes(raw); s.Get("outcome").String() == "READY_FOR_REVIEW" {
			last = s.Get("commit_range.to").String()
		}
	})
	if len(last) != len(head) || last == head {
		return head
	}
	within, err := r.IsAncestor(last, head)
	if err != nil {
		return head
	}
	onMain := false
	if mainHead != "" {
		if onMain, err = r.IsAncestor(last, mainHead); err != nil {
			return head
		}
	}
	return workflow.HandedOver(head, last, within, onMain)
}

// boundOpen is the open session this call is bound to (nil for none).
func (st *state) boundOpen() (*progress.OpenSession, error) {
	who, _ := st.resolveActor()
	if who == nil || who.Session == nil {
		return nil, nil
	}
	open, err := st.openSessions()
	if err != nil {
		return nil, err
	}
	for i := range open.Open {
		if open.Open[i].SessionID == *who.Session {
			return &open.Open[i], nil
		}
	}
	return nil, nil
}
