package workflow

import "testing"

func TestFixRules(t *testing.T) {
	rv := ReviewRef{ID: 3, Verdict: "REQUEST_CHANGES", Features: []string{"F001", "F002"}, Branch: "feature/a"}
	arch := ReviewRef{ID: 4, Verdict: "REQUEST_CHANGES", Architecture: true, DecisionBranch: "refactor/arch-review-4"}
	check(t, "answering changes requested", FixAnswerable(rv), "ok")
	check(t, "answering a REJECT", FixAnswerable(ReviewRef{ID: 3, Verdict: "REJECT"}), "refused: review R3 rejected the work: its features go back to IMPLEMENT")
	check(t, "answering the limit's rejection", FixAnswerable(ReviewRef{ID: 3, Verdict: "REQUEST_CHANGES", Reject: true}), "refused: no fix answers a rejected review")

	for _, tc := range []struct {
		name   string
		r      ReviewRef
		given  string
		branch string
		want   string
	}{
		{"the review's branch by default", rv, "", "feature/a", "ok"},
		{"the review's branch named", rv, "feature/a", "feature/a", "ok"},
		{"another branch", rv, "feature/b", "", "refused: --branch feature/b: review R3 is about feature/a"},
		{"the refactor branch of an architecture review", arch, "", "refactor/arch-review-4", "ok"},
		{"a review of no branch", ReviewRef{ID: 5}, "fix/x", "fix/x", "ok"},
	} {
		got, err := FixBranch(tc.r, tc.given)
		check(t, tc.name, err, tc.want)
		if got != tc.branch {
			t.Errorf("%s: branch %q, want %q", tc.name, got, tc.branch)
		}
	}

	check(t, "the review's features", FixFeatures(rv, []string{"F002"}, false), "ok")
	check(t, "another feature", FixFeatures(rv, []string{"F001", "F003"}, false), "refused: --feature-id: review R3 is about F001,F002, not F003")
	check(t, "a person names another", FixFeatures(rv, []string{"F003"}, true), "ok")
	check(t, "a review of no feature", FixFeatures(arch, []string{"F003"}, false), "ok")

	check(t, "issues of the review", FixedIssues(3, []string{"R3-M1", "R3-m1"}, []string{"R3-m1"}), "ok")
	check(t, "an issue of another review", FixedIssues(1, []string{"R1-M1"}, []string{"R1-M1", "A2-M1"}), "not_found: --issues-fixed: issue A2-M1 is not an issue of review R1")
}

func TestFixCycleLimit(t *testing.T) {
	lim := DefaultLimits
	for _, tc := range []struct {
		used          int
		remaining     int
		reached       bool
		afterDecision bool
		seen          int
	}{
		{0, 3, false, false, 0},
		{2, 1, false, false, 2},
		{3, 0, true, false, 3},
		{5, 0, true, false, 5},
		{0, 0, true, true, 3}, // the session that rejected at the limit sees it reached
		{4, 0, true, true, 4},
	} {
		fc := lim.FixCyclesAfterDecision(tc.used, tc.afterDecision)
		if fc.Remaining != tc.remaining || fc.Reached != tc.reached || fc.Used != tc.seen || fc.Max != 3 {
			t.Errorf("FixCyclesAfterDecision(%d, %v) = %+v", tc.used, tc.afterDecision, fc)
		}
	}
	blocking, minor := &ReviewRef{ID: 7, Blocking: true}, &ReviewRef{ID: 8}
	for _, tc := range []struct {
		name   string
		used   int
		latest *ReviewRef
		want   string
	}{
		{"below the limit", 2, blocking, "ok"},
		{"blocking issues remain", 3, blocking, "refused: fix-cycle limit reached for F001: 3 of 3 fixes recorded. No more fixes; critical or major issues remain in review R7, so the decision is REJECT"},
		{"minor issues remain", 3, minor, "refused: only minor issues and suggestions remain in review R8, so the decision is PASS_WITH_COMMENTS"},
		{"no review", 4, nil, "refused: 4 of 3 fixes recorded. No more fixes; the reviewer decides by severity"},
	} {
		check(t, tc.name, FixWithinLimit("F001", lim.FixCycles(tc.used), tc.latest), tc.want)
	}
	check(t, "get-fix-count below", FixCountAtLimit("F001", lim.FixCycles(1), nil), "ok")
	check(t, "get-fix-count at the limit", FixCountAtLimit("F001,F002", lim.FixCycles(3), minor), "refused: Maximum fix attempts reached (3 of 3) for F001,F002 - only minor issues")

	all := []ReviewRef{{ID: 1, Features: []string{"F001"}}, {ID: 2, Features: []string{"F002"}}, {ID: 3, Features: []string{"F001", "F003"}}}
	if r, ok := LatestNaming(all, []string{"F003", "F002"}); !ok || r.ID != 3 {
		t.Errorf("LatestNaming = R%d %v, want R3", r.ID, ok)
	}
	if _, ok := LatestNaming(all, []string{"F009"}); ok {
		t.Error("LatestNaming found a review of F009")
	}
}

func TestLimitsValidate(t *testing.T) {
	check(t, "the defaults", DefaultLimits.Validate(), "ok")
	for _, tc := range []struct {
		l    Limits
		want string
	}{
		{Limits{MaxFixCycles: 0, ArchitectureInterval: 5, TechDebtThreshold: 5}, "max_fix_cycles must be at least 1, found 0"},
		{Limits{MaxFixCycles: 1, ArchitectureInterval: 0, TechDebtThreshold: 5}, "architecture_interval must be at least 1"},
		{Limits{MaxFixCycles: 1, ArchitectureInterval: 1, TechDebtThreshold: -1}, "tech_debt_threshold must be at least 1, found -1"},
		{Limits{MaxFixCycles: 1, ArchitectureInterval: 1, TechDebtThreshold: 1, MaxErrorRetries: -1}, "max_error_retries must be at least 0"},
	} {
		check(t, tc.want, tc.l.Validate(), "unexpected: "+tc.want)
	}
	check(t, "no retries", Limits{MaxFixCycles: 1, ArchitectureInterval: 1, TechDebtThreshold: 1}.Validate(), "ok")
}
