package app

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/workflow"
)

// This file reads what the rules of package workflow decide on out of the
// files: the rules themselves live there, and a transaction applies what
// they decide (decide).

// decide applies a rule's answer: a refusal is recorded, to be logged
// after the transaction is discarded; other errors pass as they are.
func (st *state) decide(err error) error {
	if errs.Is(err, errs.Policy) {
		return st.refuse(err)
	}
	return err
}

// reviewRef is what the rules read of a stored review (its issues are
// read only where a rule asks whether they block: withIssues).
func reviewRef(r gjson.Result) workflow.ReviewRef {
	return workflow.ReviewRef{
		ID: int(r.Get("review_id").Int()), Architecture: r.Get("agent_type").String() == workflow.Architecture,
		Verdict: reviews.VerdictOf(r), Features: features.SplitIDs(r.Get("feature_id").String()), Branch: r.Get("branch").String(),
		Merge: r.Get("decision.merge").Bool(), Reject: r.Get("decision.reject").Bool(),
		DecisionBranch: r.Get("decision.branch").String(), Rule: r.Get("decision.rule").String(),
		MergeCommit: r.Get("merge_commit").String(), RejectedAt: r.Get("rejected_at").String(),
		ReviewedTo: r.Get("commit_range.to").String(),
	}
}

// withIssues is reviewRef with whether the review's issues block.
func withIssues(r gjson.Result) workflow.ReviewRef {
	ref := reviewRef(r)
	ref.Blocking = reviews.Blocking(reviews.ReadIssues(r.Get("issues")))
	return ref
}

// reviewRefs are the rules' view of every review, in order.
func reviewRefs(rv *reviews.File) []workflow.ReviewRef {
	return reviewRefsWhere(rv, func(gjson.Result) bool { return true })
}

// reviewRefsWhere are the rules' view of the reviews keep takes, in order:
// a rule about some work is given the reviews that can be about it (keep
// reads one field of each, where making a review's view reads them all).
func reviewRefsWhere(rv *reviews.File, keep func(gjson.Result) bool) []workflow.ReviewRef {
	var out []workflow.ReviewRef
	for _, r := range rv.Reviews() {
		if keep(r) {
			out = append(out, reviewRef(r))
		}
	}
	return out
}

// naming keeps the reviews whose feature_id may name one of ids (the
// rule reads them exactly).
func naming(ids []string) func(gjson.Result) bool {
	return func(r gjson.Result) bool {
		f := r.Get("feature_id").String()
		for _, id := range ids {
			if strings.Contains(f, id) {
				return true
			}
		}
		return false
	}
}

// ofBranch keeps the reviews of branch, or whose decision sent work to it.
func ofBranch(branch string) func(gjson.Result) bool {
	return func(r gjson.Result) bool {
		return r.Get("branch").String() == branch || r.Get("decision.branch").String() == branch
	}
}

// latestWithIssues is the last review naming any of ids, with whether its
// issues block (nil for none): at the fix-cycle limit it decides.
func latestWithIssues(rv *reviews.File, ids []string) *workflow.ReviewRef {
	ref, ok := workflow.LatestNaming(reviewRefsWhere(rv, naming(ids)), ids)
	if !ok {
		return nil
	}
	r, err := rv.Review(ref.ID)
	if err != nil {
		return &ref
	}
	ref = withIssues(r)
	return &ref
}

// ruleActor is who the call acts as, for the rules: Role "" when nothing
// binds it.
func ruleActor(who *actor) workflow.Actor {
	if who == nil {
		return workflow.Actor{}
	}
	a := workflow.Actor{Role: who.Role, InSession: who.Source == "session"}
	if who.Session != nil {
		a.Session = *who.Session
	}
	return a
}

// actorOf resolves the call's actor for a rule (an error resolving it is
// left to the checks that need an actor).
func (st *state) actorOf() workflow.Actor {
	who, _ := st.resolveActor()
	return ruleActor(who)
}
