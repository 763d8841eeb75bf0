package workflow

import (
	"strings"
	"testing"
)

func sp(s string) *string { return &s }

func val(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// reviewCase is a review's decision, as the transition table makes it.
type reviewCase struct {
	name                  string
	r                     ReviewResult
	sit                   Situation
	phase, feature, rule  string
	merge, reject, toDebt bool
	verdict               string
}

// reviewCases are the situations a review is decided in; the scheduler's
// tests replay them one item at a time.
var reviewCases = func() []reviewCase {
	backlog := Backlog{Features: []string{"F001", "F002"}}
	lim := DefaultLimits
	return []reviewCase{
		{"pass goes to next feature", ReviewResult{ReviewID: 1, Verdict: "PASS", Features: []string{"F001"}},
			Situation{Limits: lim, Backlog: backlog}, PhaseImplement, "F002", "passed/next-feature", true, false, false, "PASS"},
		{"pass of the last feature is done", ReviewResult{ReviewID: 1, Verdict: "PASS", Features: []string{"F001"}},
			Situation{Limits: lim, Backlog: Backlog{Features: []string{"F001"}}}, PhaseDone, "<nil>", "passed/done", true, false, false, "PASS"},
		{"pass at the interval runs architecture", ReviewResult{ReviewID: 9, Verdict: "PASS", Features: []string{"F001"}},
			Situation{Limits: lim, Backlog: backlog, PassedSinceArchitecture: 4}, PhaseArchitecture, "<nil>", "passed-architecture", true, false, false, "PASS"},
		{"batch pass crossing the interval", ReviewResult{ReviewID: 9, Verdict: "PASS", Features: []string{"F001", "F002"}},
			Situation{Limits: lim, Backlog: Backlog{Features: []string{"F001", "F002", "F003"}}, PassedSinceArchitecture: 3}, PhaseArchitecture, "<nil>", "passed-architecture", true, false, false, "PASS"},
		{"bug before features", ReviewResult{ReviewID: 1, Verdict: "PASS", Features: []string{"F001"}},
			Situation{Limits: lim, Backlog: Backlog{Bugs: []string{"BUG-001"}, Features: []string{"F001", "F002"}}}, PhaseBugfix, "BUG-001", "passed/bug-first", true, false, false, "PASS"},
		{"debt at the threshold before features", ReviewResult{ReviewID: 1, Verdict: "PASS", Features: []string{"F001"}},
			Situation{Limits: lim, Backlog: Backlog{Debt: []string{"D1", "D2", "D3", "D4", "D5"}, Features: []string{"F001", "F002"}}}, PhaseGlobalFix, "D1,D2,D3,D4,D5", "passed/debt-threshold", true, false, false, "PASS"},
		{"debt below the threshold waits for features", ReviewResult{ReviewID: 1, Verdict: "PASS", Features: []string{"F001"}},
			Situation{Limits: lim, Backlog: Backlog{Debt: []string{"D1"}, Features: []string{"F001", "F002"}}}, PhaseImplement, "F002", "passed/next-feature", true, false, false, "PASS"},
		{"leftover debt after the features", ReviewResult{ReviewID: 1, Verdict: "PASS", Features: []string{"F002"}},
			Situation{Limits: lim, Backlog: Backlog{Debt: []string{"D1"}, Features: []string{"F002"}}}, PhaseGlobalFix, "D1", "passed/debt-remaining", true, false, false, "PASS"},
		{"request changes goes to fix", ReviewResult{ReviewID: 2, Verdict: "REQUEST_CHANGES", Features: []string{"F001"}, Branch: sp("feature/a"), Blocking: true, Issues: 2},
			Situation{Limits: lim, Backlog: backlog, FixCount: 0}, PhaseFix, "F001", "changes-requested", false, false, false, "REQUEST_CHANGES"},
		{"pass with comments goes to fix", ReviewResult{ReviewID: 2, Verdict: "PASS_WITH_COMMENTS", Features: []string{"F001"}, Issues: 1},
			Situation{Limits: lim, Backlog: backlog, FixCount: 2}, PhaseFix, "F001", "changes-requested", false, false, false, "PASS_WITH_COMMENTS"},
		{"limit with major issues rejects", ReviewResult{ReviewID: 5, Verdict: "REQUEST_CHANGES", Features: []string{"F001"}, Blocking: true, Issues: 1},
			Situation{Limits: lim, Backlog: backlog, FixCount: 3}, PhaseImplement, "F001", "fix-limit-reject/next-feature", false, true, false, "REJECT"},
		{"limit with minor issues merges with debt", ReviewResult{ReviewID: 5, Verdict: "REQUEST_CHANGES", Features: []string{"F001"}, Issues: 2, LeftoverIDs: []string{"DEBT-001", "DEBT-002"}},
			Situation{Limits: lim, Backlog: backlog, FixCount: 3}, PhaseImplement, "F002", "fix-limit-merge/next-feature", true, false, true, "PASS_WITH_COMMENTS"},
		{"limit leftovers reaching the debt threshold", ReviewResult{ReviewID: 5, Verdict: "PASS_WITH_COMMENTS", Features: []string{"F001"}, Issues: 2, LeftoverIDs: []string{"DEBT-004", "DEBT-005"}},
			Situation{Limits: lim, Backlog: Backlog{Debt: []string{"DEBT-001", "DEBT-002", "DEBT-003"}, Features: []string{"F001", "F002"}}, FixCount: 3}, PhaseGlobalFix, "DEBT-001,DEBT-002,DEBT-003,DEBT-004,DEBT-005", "fix-limit-merge/debt-threshold", true, false, true, "PASS_WITH_COMMENTS"},
		{"debt item at the limit makes no new debt", ReviewResult{ReviewID: 5, Verdict: "REQUEST_CHANGES", Features: []string{"DEBT-001"}, Issues: 1, DebtItem: true, LeftoverIDs: []string{"DEBT-002"}},
			Situation{Limits: lim, Backlog: Backlog{Debt: []string{"DEBT-001"}}, FixCount: 3}, PhaseDone, "<nil>", "fix-limit-merge/done", true, false, false, "PASS_WITH_COMMENTS"},
		{"reject requeues", ReviewResult{ReviewID: 3, Verdict: "REJECT", Features: []string{"F001"}},
			Situation{Limits: lim, Backlog: backlog}, PhaseImplement, "F001", "rejected/next-feature", false, true, false, "REJECT"},
		{"architecture with major issues goes to a refactor fix", ReviewResult{ReviewID: 7, Architecture: true, Verdict: "REQUEST_CHANGES", Blocking: true},
			Situation{Limits: lim, Backlog: backlog}, PhaseFix, "<nil>", "architecture-refactor", false, false, false, "REQUEST_CHANGES"},
		{"healthy architecture goes to next work", ReviewResult{ReviewID: 7, Architecture: true, Verdict: "PASS"},
			Situation{Limits: lim, Backlog: backlog, PassedSinceArchitecture: 5}, PhaseImplement, "F001", "architecture-healthy/next-feature", false, false, false, ""},
		{"refactor review pass merges without counting features", ReviewResult{ReviewID: 8, Verdict: "PASS", Branch: sp("refactor/arch-review-7")},
			Situation{Limits: lim, Backlog: backlog, PassedSinceArchitecture: 4}, PhaseImplement, "F001", "passed/next-feature", true, false, false, "PASS"},
	}
}()

func TestAfterReview(t *testing.T) {
	lim := DefaultLimits
	for _, tt := range reviewCases {
		t.Run(tt.name, func(t *testing.T) {
			d := AfterReview(tt.r, tt.sit)
			if d.Phase != tt.phase || val(d.Feature) != tt.feature || d.Rule != tt.rule {
				t.Errorf("got phase %s feature %s rule %s, want %s %s %s (%s)", d.Phase, val(d.Feature), d.Rule, tt.phase, tt.feature, tt.rule, d.Reason)
			}
			if d.Merge != tt.merge || d.Reject != tt.reject || d.LeftoversToDebt != tt.toDebt || d.Verdict != tt.verdict {
				t.Errorf("effects merge=%v reject=%v debt=%v verdict=%q, want %v %v %v %q", d.Merge, d.Reject, d.LeftoversToDebt, d.Verdict, tt.merge, tt.reject, tt.toDebt, tt.verdict)
			}
			if d.Reason == "" {
				t.Error("no reason given")
			}
		})
	}
	if d := AfterReview(ReviewResult{ReviewID: 7, Architecture: true, Blocking: true}, Situation{Limits: lim}); val(d.Branch) != "refactor/arch-review-7" {
		t.Errorf("refactor branch %s", val(d.Branch))
	}
}

// sessionCase is a session end's decision, as the transition table makes
// it.
type sessionCase struct {
	name      string
	s         SessionEnd
	sit       Situation
	ok        bool
	phase     string
	rule      string
	keepsWork bool
}

// sessionCases are the situations a session ends in; the scheduler's tests
// replay them one item at a time.
var sessionCases = func() []sessionCase {
	lim := DefaultLimits
	sit := Situation{Limits: lim, Backlog: Backlog{Features: []string{"F001"}}}
	return []sessionCase{
		{"initializer to next work", SessionEnd{Role: "INITIALIZER", Outcome: "SUCCESS"}, sit, true, PhaseImplement, "initialized/next-feature", false},
		{"brownfield initializer", SessionEnd{Role: "BROWNFIELD_INITIALIZER", Outcome: "SUCCESS"}, sit, true, PhaseImplement, "initialized/next-feature", false},
		{"initializer with nothing to do", SessionEnd{Role: "INITIALIZER", Outcome: "SUCCESS"}, Situation{Limits: lim}, true, PhaseDone, "initialized/done", false},
		{"implement to review", SessionEnd{Role: "IMPLEMENT", Outcome: "READY_FOR_REVIEW", Feature: sp("F001"), Branch: sp("feature/a")}, sit, true, PhaseReview, "implemented", true},
		{"bugfix to review", SessionEnd{Role: "BUGFIX", Outcome: "READY_FOR_REVIEW", Feature: sp("BUG-001"), Branch: sp("fix/b")}, sit, true, PhaseReview, "implemented", true},
		{"fix to review", SessionEnd{Role: "FIX", Outcome: "READY_FOR_REVIEW", Feature: sp("F001"), Branch: sp("feature/a")}, sit, true, PhaseReview, "fixed", true},
		{"global fix to review", SessionEnd{Role: "GLOBAL_FIX", Outcome: "READY_FOR_REVIEW", Feature: sp("DEBT-001"), Branch: sp("debt/x")}, sit, true, PhaseReview, "fixed", true},
		{"error retries", SessionEnd{Role: "IMPLEMENT", Outcome: "ERROR", Phase: "IMPLEMENT", Feature: sp("F001")}, Situation{Limits: lim, ConsecutiveErrors: 1}, true, PhaseImplement, "error-retry", true},
		{"error at the retry limit retries", SessionEnd{Role: "REVIEW", Outcome: "ERROR", Phase: "REVIEW", Feature: sp("F001")}, Situation{Limits: lim, ConsecutiveErrors: 2}, true, PhaseReview, "error-retry", true},
		{"error past the limit stops", SessionEnd{Role: "REVIEW", Outcome: "ERROR", Phase: "REVIEW", Feature: sp("F001")}, Situation{Limits: lim, ConsecutiveErrors: 3}, true, PhaseStopped, "error-stop", true},
		{"review session end keeps the review's decision", SessionEnd{Role: "REVIEW", Outcome: "NEEDS_FIX"}, sit, false, "", "", false},
		{"architecture session end keeps the review's decision", SessionEnd{Role: "ARCHITECTURE", Outcome: "SUCCESS"}, sit, false, "", "", false},
	}
}()

func TestAfterSession(t *testing.T) {
	for _, tt := range sessionCases {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := AfterSession(tt.s, tt.sit)
			if ok != tt.ok || d.Phase != tt.phase || d.Rule != tt.rule {
				t.Fatalf("got %v %s %s, want %v %s %s (%s)", ok, d.Phase, d.Rule, tt.ok, tt.phase, tt.rule, d.Reason)
			}
			if tt.keepsWork && (val(d.Feature) != val(tt.s.Feature) || val(d.Branch) != val(tt.s.Branch)) {
				t.Errorf("feature/branch %s %s, want %s %s", val(d.Feature), val(d.Branch), val(tt.s.Feature), val(tt.s.Branch))
			}
		})
	}
}

// The predecessor's loop defects, as regressions: FIX follows
// REQUEST_CHANGES, ARCHITECTURE does not repeat after the fifth feature, and
// the tech-debt loop ends.
func TestPredecessorLoopDefects(t *testing.T) {
	lim := DefaultLimits
	t.Run("FIX is scheduled after REQUEST_CHANGES", func(t *testing.T) {
		d := AfterReview(ReviewResult{ReviewID: 1, Verdict: "REQUEST_CHANGES", Features: []string{"F001"}, Blocking: true, Issues: 1},
			Situation{Limits: lim, Backlog: Backlog{Features: []string{"F001", "F002"}}})
		if d.Phase != PhaseFix {
			t.Fatalf("phase %s after REQUEST_CHANGES, want FIX", d.Phase)
		}
	})
	t.Run("ARCHITECTURE does not repeat after the fifth feature", func(t *testing.T) {
		var features []string
		for i := 1; i <= 12; i++ {
			features = append(features, "F"+strings.Repeat("0", 2)+string(rune('0'+i%10)))
		}
		passed, archRuns := 0, 0
		for i, f := range features {
			sit := Situation{Limits: lim, Backlog: Backlog{Features: features[i:]}, PassedSinceArchitecture: passed}
			d := AfterReview(ReviewResult{ReviewID: i + 1, Verdict: "PASS", Features: []string{f}}, sit)
			passed++
			if d.Phase == PhaseArchitecture {
				archRuns++
				a := AfterReview(ReviewResult{ReviewID: 100 + i, Architecture: true, Verdict: "PASS"}, Situation{Limits: lim, Backlog: Backlog{Features: features[i+1:]}, PassedSinceArchitecture: passed})
				if a.Phase == PhaseArchitecture {
					t.Fatal("architecture scheduled right after an architecture review")
				}
				passed = 0
			}
		}
		if archRuns != 2 {
			t.Fatalf("architecture ran %d times over 12 features, want 2 (after the 5th and 10th)", archRuns)
		}
	})
	t.Run("the tech-debt loop ends", func(t *testing.T) {
		debt := []string{"DEBT-001", "DEBT-002", "DEBT-003", "DEBT-004", "DEBT-005"}
		next := 6
		for round := 0; round < 20; round++ {
			d := NextWork(Situation{Limits: lim, Backlog: Backlog{Debt: debt}})
			if d.Phase == PhaseDone {
				return
			}
			if d.Phase != PhaseGlobalFix {
				t.Fatalf("phase %s with only debt left", d.Phase)
			}
			// every debt review hits the fix limit with minor leftovers
			ids := strings.Split(*d.Feature, ",")
			r := AfterReview(ReviewResult{ReviewID: round + 1, Verdict: "REQUEST_CHANGES", Features: ids, Issues: 2, DebtItem: true,
				LeftoverIDs: []string{"DEBT-0" + string(rune('0'+next/10)) + string(rune('0'+next%10))}}, Situation{Limits: lim, Backlog: Backlog{Debt: debt}, FixCount: 3})
			if r.LeftoversToDebt {
				t.Fatal("a debt item's leftovers became new debt: the loop would not end")
			}
			debt = Backlog{Debt: debt}.without(ids).Debt
		}
		t.Fatal("tech-debt work did not reach DONE in 20 rounds")
	})
}

func TestCheck(t *testing.T) {
	for _, action := range Actions() {
		allowed := map[string]bool{}
		for _, r := range Allowed(action) {
			allowed[r] = true
		}
		for _, role := range Roles {
			canon, _ := Canonical(role)
			err := Check(role, action)
			if (err == nil) != allowed[canon] {
				t.Errorf("%s / %s: err=%v, matrix allows %v", role, action, err, Allowed(action))
			}
			if err != nil && !strings.Contains(err.Error(), "only ") && !strings.Contains(err.Error(), "no agent role may") {
				t.Errorf("refusal does not name who may: %v", err)
			}
		}
		if err := Check(Human, action); err != nil {
			t.Errorf("HUMAN refused %s: %v", action, err)
		}
		if Check("NOBODY", action) == nil {
			t.Errorf("unknown role allowed to %s", action)
		}
	}
	// The seed's critical cells, spelled out.
	cells := []struct {
		role   string
		action Action
		ok     bool
	}{
		{Review, MarkPassing, true}, {Implement, MarkPassing, false}, {Fix, MarkPassing, false}, {Architecture, MarkPassing, false},
		{Review, Merge, true}, {Implement, Merge, false}, {Fix, Merge, false}, {Architecture, Merge, false},
		{Implement, MarkFailing, true}, {Review, MarkFailing, false},
		{Fix, AddFix, true}, {Review, AddFix, false}, {Implement, AddFix, false},
		{Review, AddReview, true}, {Architecture, AddReview, true}, {Fix, AddReview, false}, {Implement, AddReview, false},
		{Implement, CreateFeatureBranch, true}, {Fix, CreateFeatureBranch, false}, {Fix, CreateRefactorBranch, true},
		{Review, DeleteBranch, true}, {Implement, DeleteBranch, false},
		{"BUGFIX", MarkFailing, true}, {"GLOBAL_FIX", AddFix, true}, {"BROWNFIELD_INITIALIZER", AppendFeatures, true},
	}
	for _, c := range cells {
		if (Check(c.role, c.action) == nil) != c.ok {
			t.Errorf("%s %s: allowed=%v, want %v", c.role, c.action, !c.ok, c.ok)
		}
	}
}
