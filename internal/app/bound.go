package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/workflow"
)

// This file binds records to the work they are about: a feature passes
// only on a passing review of it, and the workflow waits for what a review
// decided (the merge) before it moves on.

// latestReviewOf returns the last feature review naming id (an
// ARCHITECTURE review is of the codebase, not of a feature's work).
func latestReviewOf(rv *reviews.File, id string) (gjson.Result, bool) {
	var last gjson.Result
	found := false
	for _, r := range rv.Reviews() {
		if r.Get("agent_type").String() == workflow.Architecture {
			continue
		}
		for _, f := range features.SplitIDs(r.Get("feature_id").String()) {
			if f == id {
				last, found = r, true
			}
		}
	}
	return last, found
}

// passes reports whether a review lets its features pass: a PASS, or the
// fix-cycle limit's decision to merge, and not rejected since.
func passes(r gjson.Result) bool {
	return reviews.Merged(r) && !r.Get("decision.reject").Bool() && !r.Get("rejected_at").Exists()
}

// checkPassReviews refuses to mark a feature passing that the latest
// review naming it did not pass (a person may).
func (st *state) checkPassReviews(ids []string) error {
	if err := checkFeatureIDs(st, ids); err != nil {
		return err
	}
	if who, _ := st.resolveActor(); who != nil && who.Role == workflow.Human {
		return nil
	}
	rv, _, err := st.reviewsOpt()
	if err != nil {
		return err
	}
	var missing []string
	for _, id := range ids {
		if rv == nil {
			missing = append(missing, id)
			continue
		}
		if r, ok := latestReviewOf(rv, id); !ok || !passes(r) {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return st.refuse(errs.New(errs.Policy, "%s: no PASS review (or fix-cycle-limit decision to merge) names %s as its latest review, so it may not be marked passing. Record the review of the work first ('baton reviews add-review'); a passing review's merge marks its features passing",
		strings.Join(missing, ", "), map[bool]string{true: "it", false: "them"}[len(missing) == 1]))
}

// mergePending is the status while a passing review waits for its merge:
// REVIEW stays the phase until 'baton reviews merge' succeeds, which then
// applies the review's decision d.
func mergePending(id int, d workflow.Decision, feature, branch *string) workflow.Decision {
	what := "the branch"
	if branch != nil {
		what = *branch
	}
	return workflow.Decision{Phase: workflow.PhaseReview, Feature: feature, Branch: branch, Rule: "merge-pending",
		Reason: fmt.Sprintf("R%d passed (%s): REVIEW merges %s into main with 'baton reviews merge --review %d'; after the merge: %s", id, d.Rule, what, id, d.Reason)}
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
	if d.Phase == "" {
		sit, err := st.situation()
		if err != nil {
			return err
		}
		d = workflow.NextWork(sit)
	}
	d.Reason = fmt.Sprintf("R%d merged: %s", t.id, d.Reason)
	return st.applyDecision(p, d)
}

// confineRange keeps a session's range on its own branch, from its base
// commit: an explicit --commit-to must be on the branch, an explicit
// --commit-from at or after the base, and the default end is the branch's
// head when HEAD is elsewhere. Outside a repository nothing is checked.
func (st *state) confineRange(sess progress.OpenSession, branch *string, from, to **string, toGiven bool) error {
	r := st.app.repo()
	if r == nil || *to == nil {
		return nil
	}
	end, what := "", ""
	if branch != nil {
		if h, err := r.Branch(*branch); err == nil {
			end, what = h, "its branch "+*branch
		}
	}
	if end == "" {
		h, err := r.Head()
		if err != nil {
			return nil
		}
		end, what = h, "the checkout it ends in"
	}
	on, err := r.IsAncestor(**to, end)
	if err != nil {
		return gitErr(err, "checking %s", gitops.Short(**to))
	}
	if !on && toGiven {
		return st.refuse(errs.New(errs.Policy, "--commit-to %s is not on %s (at %s): session %d records only the commits of its own work. Leave --commit-to out, or name a commit of %s", gitops.Short(**to), what, gitops.Short(end), sess.SessionID, what))
	}
	if !on {
		*to = &end
	}
	if *from != nil && sess.BaseCommit != nil && *from != sess.BaseCommit {
		after, err := r.IsAncestor(*sess.BaseCommit, **from)
		if err != nil {
			return gitErr(err, "checking %s", gitops.Short(**from))
		}
		if !after {
			return st.refuse(errs.New(errs.Policy, "--commit-from %s is not at or after session %d's base commit %s: a session records only the commits made since it began. Leave --commit-from out", gitops.Short(**from), sess.SessionID, gitops.Short(*sess.BaseCommit)))
		}
	}
	return nil
}

// checkReady refuses READY_FOR_REVIEW from IMPLEMENT or FIX without new
// commits on the session's branch, and from FIX without a recorded fix
// answering the review that asked for it. Outside a repository there are
// no commits to ask for.
func (st *state) checkReady(s progress.Session, branch *string) error {
	role := canonicalRole(s.AgentType)
	if s.Outcome != "READY_FOR_REVIEW" || (role != workflow.Implement && role != workflow.Fix) || st.app.repo() == nil {
		return nil
	}
	if who, _ := st.resolveActor(); who != nil && who.Role == workflow.Human {
		return nil // a person's record of work done elsewhere
	}
	r := st.app.repo()
	main, _, _ := mainOf(r, st.cfg)
	if branch == nil || *branch == main {
		return st.refuse(errs.New(errs.Policy, "session %d (%s) may end READY_FOR_REVIEW only with its work committed on a branch of its own, not on %s: REVIEW reviews a branch. Commit the work on the feature's branch ('baton branch create' makes one from %s), then end the session", s.SessionID, s.AgentType, OrDash(main), OrDash(main)))
	}
	if len(s.Commits) == 0 {
		return st.refuse(errs.New(errs.Policy, "session %d (%s) has no commits on %s since it began: READY_FOR_REVIEW hands REVIEW new work. Commit the work on %s, then end the session; if it cannot be done, end it with -o ERROR and say why", s.SessionID, s.AgentType, *branch, *branch))
	}
	if role != workflow.Fix {
		return nil
	}
	rv, ok, err := st.reviewsOpt()
	if err != nil || !ok {
		return err
	}
	id := 0
	for _, x := range rv.Reviews() {
		if x.Get("branch").String() == *branch || x.Get("decision.branch").String() == *branch {
			id = int(x.Get("review_id").Int())
		}
	}
	if id == 0 {
		return nil
	}
	for _, x := range rv.Fixes() {
		if int(x.Get("review_id").Int()) == id {
			return nil
		}
	}
	return st.refuse(errs.New(errs.Policy, "session %d (FIX) recorded no fix answering review R%d of %s: record what was fixed, with the commits, with 'baton reviews add-fix -r %d', then end the session", s.SessionID, id, *branch, id))
}

// checkPassIssues refuses a PASS that lists a critical or major issue: that
// is REQUEST_CHANGES (or, at the fix-cycle limit, the limit's decision).
func (st *state) checkPassIssues(in reviews.NewReview) error {
	if in.Verdict != "PASS" || !blockingPending(in.Issues) {
		return nil
	}
	return st.refuse(errs.New(errs.Policy, "--verdict PASS with a critical or major issue in --issues: a blocking issue means the work is not ready. Record the verdict REQUEST_CHANGES with those issues (at the fix-cycle limit baton then decides), or leave out an issue that is not blocking"))
}

// checkReviewedWork refuses a feature review naming features that are not
// the work under review on its branch: the features the workflow sent to
// REVIEW on that branch, else those earlier reviews of the branch named,
// else (a branch no one sent or reviewed, such as one REVIEW made itself)
// the features the workflow sent to REVIEW.
// A person recording a review (with their reason) is not held to it.
func (st *state) checkReviewedWork(in reviews.NewReview) error {
	if in.FeatureID == nil || in.Branch == nil || in.AgentType != workflow.Review {
		return nil
	}
	if who, _ := st.resolveActor(); who != nil && who.Role == workflow.Human {
		return nil
	}
	want := map[string]bool{}
	var sent []string // the features the workflow sent to REVIEW, on any branch
	if p, ok, err := st.progressOpt(); err != nil {
		return err
	} else if ok {
		cur, err := p.Status()
		if err == nil && cur.CurrentFeature == nil && cur.CurrentBranch != nil && *cur.CurrentBranch == *in.Branch && strings.HasPrefix(*in.Branch, "refactor/") {
			return st.refuse(errs.New(errs.Policy, "--feature-id: the work under review on %s is an architecture refactor, which names no feature: features pass on the review of their own work. Review %s without --feature-id", *in.Branch, *in.Branch))
		}
		if err == nil && cur.CurrentFeature != nil {
			sent = features.SplitIDs(*cur.CurrentFeature)
			if cur.CurrentBranch != nil && *cur.CurrentBranch == *in.Branch {
				for _, id := range sent {
					want[id] = true
				}
			}
		}
	}
	if len(want) == 0 {
		if rv, ok, err := st.reviewsOpt(); err != nil {
			return err
		} else if ok {
			for _, id := range rv.BranchFeatures(*in.Branch) {
				want[id] = true
			}
		}
	}
	if len(want) == 0 { // a branch no one sent nor reviewed, in a session sent a branch: the work sent
		if o, err := st.boundOpen(); err != nil {
			return err
		} else if o != nil && o.SentBranch != "" && st.branchExists(*in.Branch) {
			for _, id := range sent {
				want[id] = true
			}
		}
	}
	if len(want) == 0 {
		return nil
	}
	var extra, known []string
	for _, id := range features.SplitIDs(*in.FeatureID) {
		if !want[id] {
			extra = append(extra, id)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	for id := range want {
		known = append(known, id)
	}
	sort.Strings(known)
	return st.refuse(errs.New(errs.Policy, "--feature-id: %s is not part of the work under review on %s, which is %s: a review names only the features of the work it reviewed. Review %s with --feature-id %s",
		strings.Join(extra, ", "), *in.Branch, strings.Join(known, ","), *in.Branch, strings.Join(known, ",")))
}

// fixFeatures refuses a fix naming a feature its review is not about: the
// fix-cycle limit counts fixes per feature, so a fix filed under another
// feature would answer the review without counting against its limit.
func (st *state) fixFeatures(rv gjson.Result, named *string) error {
	want := features.SplitIDs(rv.Get("feature_id").String())
	if named == nil || len(want) == 0 {
		return nil
	}
	if who, _ := st.resolveActor(); who.person() {
		return nil // a person recording a fix (with their reason) is not held to it
	}
	if err := checkFeatureIDs(st, features.SplitIDs(*named)); err != nil {
		return err
	}
	for _, id := range features.SplitIDs(*named) {
		if !slices.Contains(want, id) {
			return st.refuse(errs.New(errs.Policy, "--feature-id: review R%d is about %s, not %s: a fix answers its review's features and counts against their fix-cycle limit. Leave --feature-id out, or name only %s",
				rv.Get("review_id").Int(), strings.Join(want, ","), id, strings.Join(want, ",")))
		}
	}
	return nil
}

// fixBranch checks a fix's branch against its review: the branch the
// review reviewed, or the refactor branch its decision named.
func (st *state) fixBranch(rv gjson.Result, given *string) (string, error) {
	want := rv.Get("branch").String()
	if want == "" {
		want = rv.Get("decision.branch").String()
	}
	if given == nil || *given == "" {
		return want, nil
	}
	if want != "" && *given != want {
		return "", st.refuse(errs.New(errs.Policy, "--branch %s: review R%d is about %s, and a fix answering it is committed there. Commit the fix on %s and record it there", *given, rv.Get("review_id").Int(), want, want))
	}
	return *given, nil
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

// checkPassedWork refuses, in a repository, a PASS of a branch that does
// not exist: there is no work on it to pass (and nothing to merge).
func (st *state) checkPassedWork(in reviews.NewReview) error {
	r := st.app.repo()
	if r == nil || in.Branch == nil || in.AgentType != workflow.Review || in.Verdict != "PASS" {
		return nil
	}
	if _, err := r.Branch(*in.Branch); !errors.Is(err, gitops.ErrNoBranch) {
		return nil
	}
	return st.refuse(errs.New(errs.Policy, "--verdict PASS: branch %s does not exist in the repository at %s, so there is no work on it to pass. Review the branch the work was committed on (see 'git branch --list')", *in.Branch, r.Top()))
}

// workBranch names the branch of work the workflow gives no branch: a
// feature or bug branch for IMPLEMENT and BUGFIX (named after the items),
// a refactor branch for GLOBAL_FIX (FIX may only create refactor/
// branches). Other roles work on no branch of their own.
func workBranch(role, feature string, session int) string {
	ids := features.SplitIDs(feature)
	slug := unsafeBranchChars.ReplaceAllString(strings.ToLower(strings.Join(ids, "-")), "-")
	if len(slug) > 60 {
		slug = slug[:60]
	}
	slug = strings.Trim(slug, "-")
	switch role {
	case workflow.PhaseImplement, workflow.PhaseBugfix:
		if slug == "" {
			return ""
		}
		if role == workflow.PhaseBugfix {
			return "bugfix/" + slug
		}
		return "feature/" + slug
	case workflow.PhaseGlobalFix:
		return "refactor/tech-debt-" + strconv.Itoa(session)
	}
	return ""
}

var unsafeBranchChars = regexp.MustCompile(`[^a-z0-9_-]+`)

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

// handedOver is the head the last session that handed work over for
// review (READY_FOR_REVIEW) recorded, when the branch at head holds it and
// more: commits made on the branch after the handover were never handed
// over (nor recorded by any session), so they are not the work sent. A
// handover already on main (an earlier feature's, merged) is not this
// branch's: the branch at head is what there is to review.
func handedOver(r gitops.Repo, p *progress.File, head, mainHead string) string {
	if p == nil {
		return head
	}
	to := ""
	p.Sessions(func(raw []byte) {
		if s := gjson.ParseBytes(raw); s.Get("outcome").String() == "READY_FOR_REVIEW" {
			to = s.Get("commit_range.to").String()
		}
	})
	if len(to) != len(head) || to == head {
		return head
	}
	if ok, err := r.IsAncestor(to, head); err != nil || !ok {
		return head
	}
	if mainHead != "" {
		if merged, err := r.IsAncestor(to, mainHead); err != nil || merged {
			return head
		}
	}
	return to
}

// checkSentHead refuses a REVIEW session's review of its branch at a head
// past the one sent to it: commits made during the review (the reviewer's
// own) are not the work under review, and a PASS would merge them
// unreviewed.
func (st *state) checkSentHead(in reviews.NewReview) error {
	if in.Branch == nil || in.CommitRange == nil || in.CommitRange.To == nil {
		return nil
	}
	s, err := st.boundOpen()
	r := st.app.repo()
	if err != nil || s == nil || s.SentHead == "" || r == nil {
		return err
	}
	to := *in.CommitRange.To
	if to == s.SentHead {
		return nil
	}
	if s.SentBranch != *in.Branch { // another branch: refused when it is the sent work and more
		if more, err := r.IsAncestor(s.SentHead, to); err != nil || !more {
			return nil
		}
		return st.refuse(errs.New(errs.Policy, "%s holds the work sent to this review (%s at %s) and commits made after it: commits made during a review are not the work under review. Review %s at %s, and record what needs changing as issues (REQUEST_CHANGES) for FIX",
			*in.Branch, s.SentBranch, gitops.Short(s.SentHead), s.SentBranch, gitops.Short(s.SentHead)))
	}
	if ok, err := r.IsAncestor(to, s.SentHead); err == nil && ok {
		return nil
	}
	return st.refuse(errs.New(errs.Policy, "%s is at %s, but the work sent to this review was %s at %s: commits made during a review are not the work under review. Put %s back at %s and record what needs changing as issues (REQUEST_CHANGES) for FIX",
		s.SentBranch, gitops.Short(to), s.SentBranch, gitops.Short(s.SentHead), s.SentBranch, gitops.Short(s.SentHead)))
}

// branchExists says whether the repository has the branch (false outside
// one).
func (st *state) branchExists(name string) bool {
	r := st.app.repo()
	if r == nil {
		return false
	}
	_, err := r.Branch(name)
	return err == nil
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
