package workflow

import "testing"

// The predecessor's prompts name a next phase in every add-session; these
// are the claims they make (and some they must not get away with).
func TestJudgeClaim(t *testing.T) {
	cases := []struct {
		name                           string
		role, outcome, given, computed string
		want                           ClaimKind
	}{
		{"no claim", "IMPLEMENT", "READY_FOR_REVIEW", "", PhaseReview, ClaimAgrees},
		{"implement to review", "IMPLEMENT", "READY_FOR_REVIEW", "REVIEW", PhaseReview, ClaimAgrees},
		{"bugfix to review", "BUGFIX", "READY_FOR_REVIEW", "REVIEW", PhaseReview, ClaimAgrees},
		{"lower case", "FIX", "READY_FOR_REVIEW", "review", PhaseReview, ClaimAgrees},
		{"alias with the same rights", "REVIEW", "SUCCESS", "IMPLEMENT", PhaseBugfix, ClaimAgrees},
		{"global fix as fix", "REVIEW", "NEEDS_FIX", "FIX", PhaseGlobalFix, ClaimAgrees},
		{"initializer, computed implement", "INITIALIZER", "SUCCESS", "IMPLEMENT", PhaseImplement, ClaimAgrees},
		// coarse: the predecessor calls every next work item IMPLEMENT
		{"initializer, a bug first", "BROWNFIELD_INITIALIZER", "SUCCESS", "IMPLEMENT", PhaseBugfix, ClaimAgrees},
		{"initializer, debt first", "BROWNFIELD_INITIALIZER", "SUCCESS", "IMPLEMENT", PhaseGlobalFix, ClaimCoarse},
		{"final approval", "REVIEW", "SUCCESS", "IMPLEMENT", PhaseDone, ClaimCoarse},
		{"approval due for architecture", "REVIEW", "SUCCESS", "IMPLEMENT", PhaseArchitecture, ClaimCoarse},
		{"reject with debt pending", "REVIEW", "REJECTED", "IMPLEMENT", PhaseGlobalFix, ClaimCoarse},
		{"architecture healthy, done", "ARCHITECTURE", "SUCCESS", "IMPLEMENT", PhaseDone, ClaimCoarse},
		{"architecture names another work item", "ARCHITECTURE", "SUCCESS", "GLOBAL_FIX", PhaseImplement, ClaimCoarse},
		{"global fix, reviewed here", "GLOBAL_FIX", "READY_FOR_REVIEW", "IMPLEMENT", PhaseReview, ClaimCoarse},
		// contradictions
		{"implement skips review", "IMPLEMENT", "READY_FOR_REVIEW", "IMPLEMENT", PhaseReview, ClaimContradicts},
		{"bugfix claims done", "BUGFIX", "READY_FOR_REVIEW", "DONE", PhaseReview, ClaimContradicts},
		{"fix claims success", "FIX", "SUCCESS", "IMPLEMENT", PhaseFix, ClaimContradicts},
		{"fix claims success, next named by an alias", "FIX", "SUCCESS", "GLOBAL_FIX", PhaseFix, ClaimContradicts},
		{"fix claims success, alias in lower case", "FIX", " success ", "global_fix", PhaseFix, ClaimContradicts},
		{"global fix claims success as fix", "GLOBAL_FIX", "Success", "FIX", PhaseGlobalFix, ClaimContradicts},
		{"fix claims success, bugfix for implement", "FIX", "SUCCESS", "BUGFIX", PhaseImplement, ClaimContradicts},
		{"fix skips review", "FIX", "READY_FOR_REVIEW", "IMPLEMENT", PhaseReview, ClaimContradicts},
		{"review skips the fix cycle", "REVIEW", "NEEDS_FIX", "IMPLEMENT", PhaseFix, ClaimContradicts},
		{"review leaves before its merge", "REVIEW", "SUCCESS", "IMPLEMENT", PhaseReview, ClaimContradicts},
		{"review asks a fix past the limit", "REVIEW", "NEEDS_FIX", "FIX", PhaseImplement, ClaimContradicts},
		{"done while work is pending", "REVIEW", "SUCCESS", "DONE", PhaseImplement, ClaimContradicts},
		{"architecture skips its refactor", "ARCHITECTURE", "SUCCESS", "IMPLEMENT", PhaseFix, ClaimContradicts},
		{"error asks for review", "IMPLEMENT", "ERROR", "REVIEW", PhaseImplement, ClaimContradicts},
		{"past a stop", "IMPLEMENT", "ERROR", "IMPLEMENT", PhaseStopped, ClaimContradicts},
		{"no feature list yet", "INITIALIZER", "ERROR", "IMPLEMENT", PhaseInitializer, ClaimContradicts},
		{"global fix claims success", "GLOBAL_FIX", "SUCCESS", "IMPLEMENT", PhaseGlobalFix, ClaimContradicts},
		{"fix claims success, agreeing", "FIX", "SUCCESS", "FIX", PhaseFix, ClaimAgrees},
		{"global fix claims done", "GLOBAL_FIX", "READY_FOR_REVIEW", "DONE", PhaseReview, ClaimContradicts},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, why := JudgeClaim(Claim{Role: c.role, Outcome: c.outcome, Given: c.given, Computed: c.computed})
			if got != c.want {
				t.Fatalf("JudgeClaim(%s %s: %s vs %s) = %d (%s), want %d", c.role, c.outcome, c.given, c.computed, got, why, c.want)
			}
			if got != ClaimAgrees && why == "" {
				t.Fatalf("a %d claim must say why", got)
			}
		})
	}
}
