package workflow

import (
	"strings"
	"testing"
)

func TestWiden(t *testing.T) {
	ok := BatchCandidate{ID: "F002", Known: true, Feature: true}
	for _, tc := range []struct {
		name   string
		role   string
		given  []string
		named  []string
		cands  []BatchCandidate
		widens bool
		err    string
	}{
		{"the batch chosen", Implement, []string{"F001"}, []string{"F001", "F002"}, []BatchCandidate{ok}, true, ""},
		{"nothing added", Implement, []string{"F001"}, []string{"F001"}, nil, false, ""},
		{"not a superset", Implement, []string{"F001"}, []string{"F002"}, []BatchCandidate{ok}, false, ""},
		{"another role", Review, []string{"F001"}, []string{"F001", "F002"}, []BatchCandidate{ok}, false, ""},
		{"BUGFIX keeps its bug", PhaseBugfix, []string{"BUG-001"}, []string{"BUG-001", "F002"}, []BatchCandidate{ok}, false, ""},
		{"opened for nothing", Implement, nil, []string{"F001", "F002"}, []BatchCandidate{ok}, false, ""},
		{"too many", Implement, []string{"F1"}, []string{"F1", "F2", "F3", "F4", "F5", "F6"}, nil, false, "at most 5"},
		{"unknown", Implement, []string{"F001"}, []string{"F001", "F009"}, []BatchCandidate{{ID: "F009"}}, false, "no such feature"},
		{"debt", Implement, []string{"F001"}, []string{"F001", "DEBT-001"}, []BatchCandidate{{ID: "DEBT-001", Known: true}}, false, "not a feature"},
		{"passing", Implement, []string{"F001"}, []string{"F001", "F002"}, []BatchCandidate{{ID: "F002", Known: true, Feature: true, Passes: true}}, false, "passes already"},
		{"held", Implement, []string{"F001"}, []string{"F001", "F002"}, []BatchCandidate{{ID: "F002", Known: true, Feature: true, Held: true}}, false, "other work holds it"},
		{"waiting", Implement, []string{"F001"}, []string{"F001", "F002"}, []BatchCandidate{{ID: "F002", Known: true, Feature: true, Waiting: []string{"F004"}}}, false, "depends on F004"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Widen(7, tc.role, tc.given, tc.named, tc.cands)
			if got != tc.widens {
				t.Errorf("widens = %v, want %v", got, tc.widens)
			}
			if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("err = %v, want one saying %q", err, tc.err)
			}
		})
	}
}
