package workflow

import "testing"

// TestPredecessorBrownfield encodes what the predecessor's own
// tests/test_brownfield.py checks of its orchestrator's session order
// (config.get_next_session_type, get_next_work_session), as baton's
// transition table answers it. Where baton differs on purpose the case
// says so.
func TestPredecessorBrownfield(t *testing.T) {
	lim := DefaultLimits
	pending := Backlog{Features: []string{"FEAT-001"}}
	for _, c := range []struct {
		name  string
		d     Decision
		phase string
	}{
		{"BROWNFIELD_INITIALIZER is followed by IMPLEMENT",
			mustAfter(t, SessionEnd{Role: "BROWNFIELD_INITIALIZER", Outcome: "SUCCESS"}, Situation{Limits: lim, Backlog: pending}), PhaseImplement},
		{"BUGFIX is followed by REVIEW",
			mustAfter(t, SessionEnd{Role: "BUGFIX", Outcome: "READY_FOR_REVIEW", Feature: sp("BUG-001"), Branch: sp("bugfix/BUG-001")}, Situation{Limits: lim}), PhaseReview},
		{"a pending bug is BUGFIX",
			NextWork(Situation{Limits: lim, Backlog: Backlog{Bugs: []string{"BUG-001"}, Features: []string{"FEAT-001"}}}), PhaseBugfix},
		{"no pending bug is IMPLEMENT",
			NextWork(Situation{Limits: lim, Backlog: pending}), PhaseImplement},
		// the predecessor answers None: nothing left to run
		{"everything passing is DONE",
			NextWork(Situation{Limits: lim}), PhaseDone},
	} {
		if c.d.Phase != c.phase {
			t.Errorf("%s: got %s (%s), want %s", c.name, c.d.Phase, c.d.Reason, c.phase)
		}
	}
}

func mustAfter(t *testing.T, s SessionEnd, sit Situation) Decision {
	t.Helper()
	d, ok := AfterSession(s, sit)
	if !ok {
		t.Fatalf("no transition for %s %s", s.Role, s.Outcome)
	}
	return d
}
