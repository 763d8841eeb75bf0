package workflow

import (
	"fmt"
	"slices"
	"strings"

	"github.com/baton-cli/baton/internal/errs"
)

// The rules of recording a fix, and of the fix-cycle limit.

// FixAnswerable refuses a fix answering a review that rejected the work:
// its features go back to IMPLEMENT instead.
func FixAnswerable(r ReviewRef) error {
	if !r.Rejects() {
		return nil
	}
	return errs.New(errs.Policy, "review R%d rejected the work: its features go back to IMPLEMENT, and no fix answers a rejected review", r.ID)
}

// FixBranch is the branch a fix answering r is on: the branch r reviewed,
// or the refactor branch its decision named; a fix given another branch
// is refused. given "" takes the review's.
func FixBranch(r ReviewRef, given string) (string, error) {
	want := r.Branch
	if want == "" {
		want = r.DecisionBranch
	}
	if given == "" {
		return want, nil
	}
	if want != "" && given != want {
		return "", errs.New(errs.Policy, "--branch %s: review R%d is about %s, and a fix answering it is committed there. Commit the fix on %s and record it there", given, r.ID, want, want)
	}
	return given, nil
}

// FixFeatures refuses a fix naming a feature its review is not about: the
// fix-cycle limit counts fixes per feature, so a fix filed under another
// feature would answer the review without counting against its limit. A
// person recording a fix is not held to it.
func FixFeatures(r ReviewRef, named []string, person bool) error {
	if len(named) == 0 || len(r.Features) == 0 || person {
		return nil
	}
	for _, id := range named {
		if !slices.Contains(r.Features, id) {
			want := strings.Join(r.Features, ",")
			return errs.New(errs.Policy, "--feature-id: review R%d is about %s, not %s: a fix answers its review's features and counts against their fix-cycle limit. Leave --feature-id out, or name only %s",
				r.ID, want, id, want)
		}
	}
	return nil
}

// LatestNaming returns the last review naming any of ids: at the
// fix-cycle limit, it decides by its severity.
func LatestNaming(all []ReviewRef, ids []string) (ReviewRef, bool) {
	for i := len(all) - 1; i >= 0; i-- {
		for _, f := range all[i].Features {
			if slices.Contains(ids, f) {
				return all[i], true
			}
		}
	}
	return ReviewRef{}, false
}

// AtFixLimit says what the seed decides at the fix-cycle limit, from the
// latest review of the work (nil when there is none).
func AtFixLimit(latest *ReviewRef) string {
	switch {
	case latest == nil:
		return "the reviewer decides by severity: REJECT if critical or major issues remain, else PASS_WITH_COMMENTS."
	case latest.Blocking:
		return fmt.Sprintf("critical or major issues remain in review R%d, so the decision is REJECT (re-implement).", latest.ID)
	}
	return fmt.Sprintf("only minor issues and suggestions remain in review R%d, so the decision is PASS_WITH_COMMENTS (merge, leftovers recorded as tech debt).", latest.ID)
}

// FixWithinLimit refuses a fix for work whose fix cycles are used up.
func FixWithinLimit(key string, fc FixCycles, latest *ReviewRef) error {
	if !fc.Reached {
		return nil
	}
	return errs.New(errs.Policy, "fix-cycle limit reached for %s: %d of %d fixes recorded. No more fixes; %s", key, fc.Used, fc.Max, AtFixLimit(latest))
}

// FixCountAtLimit is get-fix-count's answer at the limit: a refusal of
// more fixes saying what happens instead.
func FixCountAtLimit(feature string, fc FixCycles, latest *ReviewRef) error {
	if !fc.Reached {
		return nil
	}
	return errs.New(errs.Policy, "Maximum fix attempts reached (%d of %d) for %s - %s", fc.Used, fc.Max, feature, AtFixLimit(latest))
}

// FixedIssues refuses a fix naming an issue the review it answers does not
// have (known are that review's issue ids).
func FixedIssues(reviewID int, known, fixed []string) error {
	for _, id := range fixed {
		if !slices.Contains(known, id) {
			return errs.New(errs.NotFound, "--issues-fixed: issue %s is not an issue of review R%d (see 'baton reviews show-issues')", id, reviewID)
		}
	}
	return nil
}
