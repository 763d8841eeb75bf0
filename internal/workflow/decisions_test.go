package workflow

import (
	"slices"
	"strings"
	"testing"
)

func TestAwaitMerge(t *testing.T) {
	passed := Decision{Phase: PhaseImplement, Feature: sp("F002"), Rule: "passed/next-feature", Reason: "next pending feature", Merge: true}
	d := AwaitMerge(4, passed, []string{"F001"}, sp("feature/a"), true)
	if d.Phase != PhaseReview || val(d.Feature) != "F001" || val(d.Branch) != "feature/a" || d.Rule != "merge-pending" ||
		!strings.Contains(d.Reason, "'baton reviews merge --review 4'; after the merge: next pending feature") {
		t.Errorf("a passing review waits for its merge: %+v", d)
	}
	if d := AwaitMerge(4, passed, []string{"F001"}, sp("feature/a"), false); d.Phase != PhaseImplement {
		t.Errorf("with nothing to merge the decision applies at once: %+v", d)
	}
	fix := Decision{Phase: PhaseFix, Rule: "changes-requested"}
	if d := AwaitMerge(4, fix, []string{"F001"}, sp("feature/a"), true); d.Phase != PhaseFix {
		t.Errorf("changes requested do not wait for a merge: %+v", d)
	}
}

func TestAfterMergeConflictAndRegression(t *testing.T) {
	sit := Situation{Limits: DefaultLimits, Backlog: Backlog{Features: []string{"F003"}}}
	if d := AfterMerge(4, Decision{Phase: PhaseArchitecture, Rule: "passed-architecture", Reason: "five passed"}, sit); d.Phase != PhaseArchitecture || d.Reason != "R4 merged: five passed" {
		t.Errorf("the recorded decision applies: %+v", d)
	}
	if d := AfterMerge(4, Decision{}, sit); d.Phase != PhaseImplement || val(d.Feature) != "F003" || !strings.HasPrefix(d.Reason, "R4 merged: ") {
		t.Errorf("no decision recorded: the next work: %+v", d)
	}
	d := MergeConflict(4, sp("F001"), "feature/a", "main", []string{"a.go", "b.go"})
	if d.Phase != PhaseFix || val(d.Branch) != "feature/a" || d.Rule != "merge-conflict" || !strings.Contains(d.Reason, "conflicts in a.go, b.go: FIX merges main into feature/a") {
		t.Errorf("a conflict goes to FIX: %+v", d)
	}
	if d, ok := AfterRegression(PhaseDone, []string{"F001"}, Situation{Backlog: Backlog{Features: []string{"F001"}}}); !ok || d.Phase != PhaseImplement || d.Rule != "regression/next-feature" ||
		!strings.HasPrefix(d.Reason, "F001 marked failing after DONE; ") {
		t.Errorf("a regression after DONE reopens the work: %+v %v", d, ok)
	}
	if _, ok := AfterRegression(PhaseReview, []string{"F001"}, sit); ok {
		t.Error("a regression while work goes on leaves the phase")
	}
	if d := HumanOverride(PhaseFix, PhaseReview, sp("F001"), nil, "redo it"); d.Phase != PhaseFix || d.Rule != "human-override" || d.Reason != "set to FIX by a person (computed: REVIEW): redo it" {
		t.Errorf("override: %+v", d)
	}
}

func TestRecordedOutcome(t *testing.T) {
	for _, tc := range []struct {
		a             Actor
		outcome, want string
		note          bool
	}{
		{Actor{Role: PhaseGlobalFix, Session: 3, InSession: true}, "SUCCESS", "READY_FOR_REVIEW", true},
		{Actor{Role: PhaseGlobalFix, Session: 3, InSession: true}, "ERROR", "ERROR", false},
		{Actor{Role: Fix, Session: 3, InSession: true}, "SUCCESS", "SUCCESS", false},
		{Actor{Role: Human}, "SUCCESS", "SUCCESS", false},
	} {
		got, note := RecordedOutcome(tc.a, tc.outcome)
		if got != tc.want || (note != "") != tc.note {
			t.Errorf("RecordedOutcome(%+v, %s) = %s %q", tc.a, tc.outcome, got, note)
		}
	}
}

func TestWorkBranchName(t *testing.T) {
	for _, c := range []struct {
		role, feature string
		session       int
		want          string
	}{
		{"IMPLEMENT", "FEAT-001", 3, "feature/feat-001"},
		{"IMPLEMENT", "F001,F002", 3, "feature/f001-f002"},
		{"BUGFIX", "BUG-7", 3, "bugfix/bug-7"},
		{"IMPLEMENT", "Weird id/../x", 3, "feature/weird-id-x"},
		{"IMPLEMENT", "F1.2", 3, "feature/f1-2"},
		{"GLOBAL_FIX", "DEBT-001,DEBT-002", 9, "refactor/tech-debt-9"},
		{"IMPLEMENT", "", 3, ""},
		{"REVIEW", "F001", 3, ""},
	} {
		if got := WorkBranchName(c.role, c.feature, c.session); got != c.want {
			t.Errorf("WorkBranchName(%s, %q, %d) = %q, want %q", c.role, c.feature, c.session, got, c.want)
		}
	}
	if BranchAction("refactor/x") != CreateRefactorBranch || BranchAction("feature/x") != CreateFeatureBranch || BranchAction("fix/refactor/x") != CreateFeatureBranch {
		t.Error("BranchAction")
	}
	if StatusAction(true) != SetStatus || StatusAction(false) != RecordSession {
		t.Error("StatusAction")
	}
}

func TestHandedOver(t *testing.T) {
	head, last := "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	for _, tc := range []struct {
		name           string
		last           string
		within, onMain bool
		want           string
	}{
		{"commits after the handover", last, true, false, last},
		{"nothing handed over", "", false, false, head},
		{"the head itself", head, true, false, head},
		{"an abbreviated record", "aaaaaaa", true, false, head},
		{"a handover not on the branch", last, false, false, head},
		{"an earlier feature's, merged", last, true, true, head},
	} {
		if got := HandedOver(head, tc.last, tc.within, tc.onMain); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestNeedsLeftovers(t *testing.T) {
	lim := DefaultLimits
	if !NeedsLeftovers("PASS", false, lim.FixCycles(0)) || NeedsLeftovers("PASS", true, lim.FixCycles(0)) ||
		NeedsLeftovers("REQUEST_CHANGES", false, lim.FixCycles(2)) || !NeedsLeftovers("REQUEST_CHANGES", false, lim.FixCycles(3)) {
		t.Error("NeedsLeftovers")
	}
}

func TestRuleOnClaim(t *testing.T) {
	for _, tc := range []struct {
		kind               ClaimKind
		person, withRecord bool
		want               Ruling
	}{
		{ClaimAgrees, false, true, RulingAgrees},
		{ClaimAgrees, true, true, RulingAgrees},
		{ClaimCoarse, false, true, RulingSuggest},
		{ClaimCoarse, false, false, RulingRefuse},
		{ClaimCoarse, true, false, RulingOverride},
		{ClaimContradicts, false, true, RulingRefuse},
		{ClaimContradicts, true, true, RulingOverride},
	} {
		if got := RuleOnClaim(tc.kind, tc.person, tc.withRecord); got != tc.want {
			t.Errorf("RuleOnClaim(%v, %v, %v) = %v, want %v", tc.kind, tc.person, tc.withRecord, got, tc.want)
		}
	}
	check(t, "a contradiction", NextPhaseClaim("--next-phase", PhaseDone, PhaseReview, "DONE says nothing is left", "R2 wants changes"),
		"refused: --next-phase DONE contradicts the computed next phase REVIEW (DONE says nothing is left; R2 wants changes)")
}

func TestCallableBy(t *testing.T) {
	if got := CallableBy(Merge, false); !slices.Equal(got, []string{Review, Human}) {
		t.Errorf("merge: %v", got)
	}
	if got := CallableBy("", false); !slices.Equal(got, []string{Human}) || AgentMayCall(got) {
		t.Errorf("a person's own operation: %v", got)
	}
	if got := CallableBy("", true); len(got) != len(Roles)+1 || !AgentMayCall(got) {
		t.Errorf("a read: %v", got)
	}
	if !AgentMayCall(CallableBy(AddFix, false)) {
		t.Error("add-fix is FIX's")
	}
}
