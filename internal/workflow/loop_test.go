package workflow

import "testing"

func TestStopLoop(t *testing.T) {
	f := "DEBT-001,DEBT-002"
	next := Decision{Phase: PhaseReview, Feature: &f, Rule: "fixed"}
	for _, tc := range []struct {
		name   string
		visits []Visit
		max    int
		stops  bool
	}{
		{"no history", nil, 3, false},
		{"each review a new verdict", []Visit{{Review, "a", 1}, {Review, "a", 2}, {Review, "a", 3}}, 3, false},
		{"each fix a new commit", []Visit{{"GLOBAL_FIX", "a", 1}, {Review, "a", 1}, {"GLOBAL_FIX", "b", 1}, {Review, "b", 1}, {"GLOBAL_FIX", "c", 1}}, 1, false},
		{"back to REVIEW with nothing new", []Visit{{Review, "a", 1}, {Review, "a", 1}, {Review, "a", 1}}, 3, true},
		{"under the limit", []Visit{{Review, "a", 1}, {Review, "a", 1}}, 3, false},
		{"the default limit", []Visit{{Review, "a", 1}, {Review, "a", 1}, {Review, "a", 1}}, 0, true},
		{"other roles between count for nothing", []Visit{{Review, "a", 1}, {Fix, "a", 1}, {Review, "a", 1}}, 2, true},
		{"a change resets the count", []Visit{{Review, "a", 1}, {Review, "a", 1}, {Review, "b", 1}}, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := StopLoop(next, f, tc.visits, tc.max)
			if got := d.Phase == PhaseStopped; got != tc.stops {
				t.Fatalf("stopped = %v, want %v (%+v)", got, tc.stops, d)
			}
			if tc.stops && (d.Rule != RuleLoop || d.Feature != &f) {
				t.Errorf("a loop stop keeps the item and says why: %+v", d)
			}
			if !tc.stops && d.Rule != "fixed" {
				t.Errorf("no loop: the decision is unchanged, got %+v", d)
			}
		})
	}
	retry := Decision{Phase: PhaseReview, Feature: &f, Rule: "error-retry"}
	if d := StopLoop(retry, f, []Visit{{Review, "a", 1}, {Review, "a", 1}, {Review, "a", 1}}, 1); d.Rule != "error-retry" {
		t.Errorf("an ERROR's retry has its own limit: %+v", d)
	}
	if d := StopLoop(Decision{Phase: PhaseDone}, f, []Visit{{Review, "a", 1}, {Review, "a", 1}, {Review, "a", 1}}, 1); d.Phase != PhaseDone {
		t.Errorf("DONE is no role to loop back to: %+v", d)
	}
}
