package workflow

import (
	"strings"
	"testing"
)

func TestMergeable(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    ReviewRef
		want string
	}{
		{"a PASS", ReviewRef{ID: 3, Verdict: "PASS"}, "ok"},
		{"the limit's decision to merge", ReviewRef{ID: 3, Verdict: "REQUEST_CHANGES", Merge: true}, "ok"},
		{"an architecture review", ReviewRef{ID: 3, Verdict: "PASS", Architecture: true}, "usage: review R3 is an architecture review: it merges nothing"},
		{"merged already", ReviewRef{ID: 3, Verdict: "PASS", MergeCommit: "abcdef0123"}, "conflict: review R3 was already merged into main as abcdef0"},
		{"a REJECT", ReviewRef{ID: 3, Verdict: "REJECT"}, "refused: review R3 rejected the work"},
		{"the limit's decision to reject", ReviewRef{ID: 3, Verdict: "REQUEST_CHANGES", Reject: true}, "refused: review R3 rejected the work"},
		{"a PASS with a blocking issue", ReviewRef{ID: 3, Verdict: "PASS", Blocking: true}, "refused: review R3 is a PASS with a critical or major issue"},
		{"changes requested", ReviewRef{ID: 3, Verdict: "REQUEST_CHANGES"}, "refused: review R3 is REQUEST_CHANGES: only a PASS review"},
		{"comments to address", ReviewRef{ID: 3, Verdict: "PASS_WITH_COMMENTS"}, "refused: review R3 is PASS_WITH_COMMENTS"},
	} {
		check(t, tc.name, Mergeable(tc.r), tc.want)
	}
}

func TestRejectable(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    ReviewRef
		want string
	}{
		{"work under review", ReviewRef{ID: 2, Verdict: "REJECT"}, "ok"},
		{"an architecture review", ReviewRef{ID: 2, Architecture: true}, "usage: review R2 is an architecture review: there is no work to reject"},
		{"merged work", ReviewRef{ID: 2, MergeCommit: "abcdef0123"}, "conflict: review R2 was merged into main as abcdef0: merged work is not rejected"},
		{"rejected already", ReviewRef{ID: 2, RejectedAt: "2025-01-29T10:00:00Z"}, "conflict: the work of review R2 was already rejected at 2025-01-29T10:00:00Z"},
	} {
		check(t, tc.name, Rejectable(tc.r), tc.want)
	}
}

func TestBranchAsReviewed(t *testing.T) {
	head := "abcdef0123456789abcdef0123456789abcdef01"
	for _, tc := range []struct {
		name, to, want string
	}{
		{"the head reviewed", head, "ok"},
		{"no range recorded", "", "ok"},
		{"an abbreviated commit", "abcdef0", "refused: review R5 recorded only an abbreviated commit, abcdef0"},
		{"commits added since", "1234567890123456789012345678901234567890", "refused: feature/a has commits review R5 did not see: it reviewed up to 1234567"},
	} {
		check(t, tc.name, BranchAsReviewed(ReviewRef{ID: 5, Branch: "feature/a", ReviewedTo: tc.to}, head), tc.want)
	}
}

func TestWorkBranchAndMergedHeads(t *testing.T) {
	check(t, "a work branch", WorkBranch(ReviewRef{ID: 1, Branch: "feature/a"}, "main"), "ok")
	check(t, "no branch", WorkBranch(ReviewRef{ID: 1}, "main"), "usage: review R1 names no branch")
	check(t, "main itself", WorkBranch(ReviewRef{ID: 1, Branch: "main"}, "main"), "usage: review R1 reviewed main itself")
	check(t, "not yet merged", NotYetMerged("feature/a", "abcdef0123", "main", false), "ok")
	check(t, "merged already", NotYetMerged("feature/a", "abcdef0123", "main", true), "conflict: feature/a (at abcdef0) is already merged into main: nothing to merge")
	check(t, "reject what is not merged", NotRejectingMerged("feature/a", "abcdef0123", "main", false), "ok")
	check(t, "reject merged work", NotRejectingMerged("feature/a", "abcdef0123", "main", true), "conflict: merged work is not rejected")
}

func TestLatestDecides(t *testing.T) {
	all := []ReviewRef{
		{ID: 1, Verdict: "PASS", Features: []string{"F001"}, Branch: "feature/a"},
		{ID: 2, Verdict: "PASS", Architecture: true},
		{ID: 3, Verdict: "PASS", Features: []string{"F002"}, Branch: "feature/b"},
		{ID: 4, Verdict: "REQUEST_CHANGES", Features: []string{"F001", "F003"}, Branch: "feature/c"},
		{ID: 5, Verdict: "REJECT", Branch: "feature/b"},
	}
	for _, tc := range []struct {
		name string
		r    ReviewRef
		want string
	}{
		{"a later review naming a feature", all[0], "refused: review R1 is not the latest review of its work: R4 (REQUEST_CHANGES) came after it"},
		{"a later review of the branch", all[2], "refused: R5 (REJECT) came after it"},
		{"the latest", all[3], "ok"},
		{"no later review of the same work", ReviewRef{ID: 1, Verdict: "PASS", Branch: "refactor/x"}, "ok"},
	} {
		var err error
		if later, ok := LaterReview(all, tc.r); ok {
			err = LatestDecides(tc.r, &later)
		}
		check(t, tc.name, err, tc.want)
	}
	check(t, "none later", LatestDecides(all[4], nil), "ok")
}

func TestCheckMarkPassing(t *testing.T) {
	all := []ReviewRef{
		{ID: 1, Verdict: "PASS", Features: []string{"F001"}},
		{ID: 2, Verdict: "REQUEST_CHANGES", Features: []string{"F002"}},
		{ID: 3, Verdict: "PASS", Features: []string{"F003"}, RejectedAt: "2025-01-29T10:00:00Z"},
		{ID: 4, Verdict: "REQUEST_CHANGES", Features: []string{"F004"}, Merge: true},
		{ID: 5, Verdict: "PASS", Features: []string{"F005"}},
		{ID: 6, Verdict: "REQUEST_CHANGES", Features: []string{"F005"}},
		{ID: 7, Verdict: "PASS", Architecture: true, Features: []string{"F006"}},
		{ID: 8, Verdict: "REQUEST_CHANGES", Features: []string{"F007"}, Merge: true, Reject: true},
	}
	for _, tc := range []struct {
		name   string
		person bool
		ids    []string
		want   string
	}{
		{"passed", false, []string{"F001"}, "ok"},
		{"merged at the limit", false, []string{"F004"}, "ok"},
		{"changes requested", false, []string{"F002"}, "refused: F002: no PASS review (or fix-cycle-limit decision to merge) names it as its latest review"},
		{"rejected since", false, []string{"F003"}, "refused: F003: no PASS review"},
		{"a later review asks for changes", false, []string{"F005"}, "refused: F005: no PASS review"},
		{"an architecture review passes no feature", false, []string{"F006"}, "refused: F006"},
		{"rejected by the limit's decision", false, []string{"F007"}, "refused: F007"},
		{"never reviewed", false, []string{"F001", "F009", "F002"}, "refused: F009, F002: no PASS review (or fix-cycle-limit decision to merge) names them"},
		{"a person", true, []string{"F009"}, "ok"},
	} {
		check(t, tc.name, CheckMarkPassing(tc.person, tc.ids, all), tc.want)
	}
}

func TestLandedBy(t *testing.T) {
	all := []ReviewRef{
		{ID: 1, Verdict: "PASS", Branch: "feature/a", MergeCommit: "1111111"},
		{ID: 2, Verdict: "REQUEST_CHANGES", Branch: "feature/b"},
		{ID: 3, Verdict: "PASS", Branch: "feature/a", MergeCommit: "3333333"},
	}
	if r, ok := LandedBy(all, "feature/a"); !ok || r.ID != 3 {
		t.Errorf("LandedBy(feature/a) = R%d, %v, want R3", r.ID, ok)
	}
	if _, ok := LandedBy(all, "feature/b"); ok {
		t.Error("feature/b was never merged")
	}
}

func TestQueued(t *testing.T) {
	for _, c := range []struct {
		agents int
		gate   Gate
		want   bool
	}{
		{1, Gate{}, false},
		{2, Gate{}, true},
		{1, Gate{Command: "make test"}, true},
		{4, Gate{Command: "make test"}, true},
	} {
		if got := Queued(c.agents, c.gate); got != c.want {
			t.Errorf("Queued(%d, %+v) = %v, want %v", c.agents, c.gate, got, c.want)
		}
	}
}

func TestSendBack(t *testing.T) {
	for _, c := range []struct {
		name string
		s    SendBack
		want []string
	}{
		{"conflict", SendBack{Branch: "feature/a", Into: "main", Conflicts: []string{"x.go", "y.go"}}, []string{"conflicts in x.go, y.go", "Merge main into feature/a"}},
		{"gate failed", SendBack{Branch: "feature/a", Into: "main", Command: "make test", ExitCode: 2, Tail: "FAIL x"}, []string{`"make test" exited 2`, "FAIL x"}},
		{"gate timed out", SendBack{Branch: "feature/a", Into: "main", Command: "make test", TimedOut: true}, []string{"ran past its timeout"}},
		{"refused", SendBack{Branch: "feature/a", Into: "main", Refused: "the branch moved"}, []string{"the branch moved"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := c.s.Summary() + "\n" + c.s.Issue()
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("%q does not say %q", text, w)
				}
			}
		})
	}
}
