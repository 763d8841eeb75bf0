package workflow

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/baton-cli/baton/internal/features"
)

// The decisions around the transition table: where the status waits for a
// merge, what a merge, a conflict or a regression leads to, and the names
// and outcomes the workflow gives work.

// RuleMergePending is the rule of a passed item waiting for its merge.
const RuleMergePending = "merge-pending"

// AwaitMerge is the status after review id decided d: a passing review
// whose branch can be merged waits in REVIEW until 'baton reviews merge'
// succeeds, which then applies d; elsewhere (nothing to merge) d applies
// at once.
func AwaitMerge(id int, d Decision, features []string, branch *string, mergeable bool) Decision {
	if !d.Merge || !mergeable {
		return d
	}
	what := "the branch"
	if branch != nil {
		what = *branch
	}
	return Decision{Phase: PhaseReview, Feature: joinIDs(features), Branch: branch, Rule: RuleMergePending,
		Reason: fmt.Sprintf("R%d passed (%s): REVIEW merges %s into main with 'baton reviews merge --review %d'; after the merge: %s", id, d.Rule, what, id, d.Reason)}
}

// NeedsLeftovers says whether a review's issues may become tech debt, so
// that their ids are reserved: a feature review's PASS leaves its minor
// issues, and at the fix-cycle limit the leftovers of a merge.
func NeedsLeftovers(verdict string, architecture bool, fc FixCycles) bool {
	return fc.Reached || (verdict == "PASS" && !architecture)
}

// AfterMerge is where the project goes once review id's merge is recorded:
// the decision the review made (the status waited in REVIEW for it), or,
// when it recorded none, the next work.
func AfterMerge(id int, decided Decision, sit Situation) Decision {
	d := decided
	if d.Phase == "" {
		d = NextWork(sit)
	}
	d.Reason = fmt.Sprintf("R%d merged: %s", id, d.Reason)
	return d
}

// MergeConflict is where a merge refused for conflicts goes: main is
// unchanged, and FIX merges main into the branch and resolves them.
func MergeConflict(id int, feature *string, branch, into string, paths []string) Decision {
	return Decision{Phase: PhaseFix, Feature: feature, Branch: &branch, Rule: "merge-conflict",
		Reason: fmt.Sprintf("merging %s into %s (review R%d) conflicts in %s: FIX merges %s into %s and resolves them, then REVIEW merges again", branch, into, id, strings.Join(paths, ", "), into, branch)}
}

// AfterRegression takes a finished project back to work when features are
// marked failing: DONE with a feature pending is not done. ok is false
// when the phase stays.
func AfterRegression(phase string, ids []string, sit Situation) (Decision, bool) {
	if phase != PhaseDone {
		return Decision{}, false
	}
	d := NextWork(sit)
	d.Rule = "regression/" + d.Rule
	d.Reason = strings.Join(ids, ", ") + " marked failing after DONE; " + d.Reason
	return d, true
}

// HumanOverride is a person's --next-phase applied over the computed one,
// recorded with the person's reason.
func HumanOverride(given, computed string, feature, branch *string, reason string) Decision {
	return Decision{Phase: given, Feature: feature, Branch: branch, Rule: "human-override",
		Reason: fmt.Sprintf("set to %s by a person (computed: %s): %s", given, computed, reason)}
}

// RecordedOutcome is the outcome a session's record takes: a GLOBAL_FIX
// session's SUCCESS is recorded as READY_FOR_REVIEW (the predecessor
// merged tech-debt fixes unreviewed; baton reviews them like any other
// work), with a note saying so.
func RecordedOutcome(a Actor, outcome string) (string, string) {
	if a.Session == 0 || a.Role != PhaseGlobalFix || outcome != "SUCCESS" {
		return outcome, ""
	}
	return "READY_FOR_REVIEW", "a GLOBAL_FIX session's work is reviewed before it reaches main: recorded as READY_FOR_REVIEW"
}

// WorkBranchName names the branch of work the workflow gives no branch: a
// feature or bug branch for IMPLEMENT and BUGFIX (named after the items),
// a refactor branch for GLOBAL_FIX (FIX may only create refactor/
// branches). Other roles work on no branch of their own ("").
func WorkBranchName(role, feature string, session int) string {
	ids := features.SplitIDs(feature)
	slug := unsafeBranchChars.ReplaceAllString(strings.ToLower(strings.Join(ids, "-")), "-")
	if len(slug) > 60 {
		slug = slug[:60]
	}
	slug = strings.Trim(slug, "-")
	switch role {
	case PhaseImplement, PhaseBugfix:
		if slug == "" {
			return ""
		}
		if role == PhaseBugfix {
			return "bugfix/" + slug
		}
		return "feature/" + slug
	case PhaseGlobalFix:
		return "refactor/tech-debt-" + strconv.Itoa(session)
	}
	return ""
}

var unsafeBranchChars = regexp.MustCompile(`[^a-z0-9_-]+`)

// BranchAction is the matrix's action of creating branch name: FIX may
// create only refactor/ branches.
func BranchAction(name string) Action {
	if strings.HasPrefix(name, "refactor/") {
		return CreateRefactorBranch
	}
	return CreateFeatureBranch
}

// HandedOver is the head of a branch handed over for review: the head the
// last READY_FOR_REVIEW session recorded (last), when the branch at head
// holds it and more — commits made after the handover were never handed
// over. A handover already on main (an earlier feature's, merged) is not
// this branch's: the branch at head is what there is to review.
func HandedOver(head, last string, lastWithinHead, lastOnMain bool) string {
	if len(last) != len(head) || last == head || !lastWithinHead || lastOnMain {
		return head
	}
	return last
}
