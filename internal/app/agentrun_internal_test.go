package app

import (
	"testing"
)

func TestWorkBranch(t *testing.T) {
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
		if got := workBranch(c.role, c.feature, c.session); got != c.want {
			t.Errorf("workBranch(%s, %q, %d) = %q, want %q", c.role, c.feature, c.session, got, c.want)
		}
	}
}
