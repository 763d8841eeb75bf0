package workflow

import (
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/errs"
)

func TestPassNamesItems(t *testing.T) {
	debt, none := "DEBT-001,DEBT-002", ""
	batch := WorkUnderReview{StatusFeature: &debt, StatusBranch: "refactor/tech-debt-7"}
	for _, tc := range []struct {
		name    string
		r       NewReview
		refused bool
	}{
		{"a debt batch's PASS naming nothing", NewReview{AgentType: Review, Verdict: "PASS", Branch: "refactor/tech-debt-7", Work: batch}, true},
		{"PASS_WITH_COMMENTS too", NewReview{AgentType: Review, Verdict: "PASS_WITH_COMMENTS", Branch: "refactor/tech-debt-7", Work: batch}, true},
		{"naming the batch", NewReview{AgentType: Review, Verdict: "PASS", Branch: "refactor/tech-debt-7", Features: []string{"DEBT-001", "DEBT-002"}, Work: batch}, false},
		{"changes requested", NewReview{AgentType: Review, Verdict: "REQUEST_CHANGES", Branch: "refactor/tech-debt-7", Work: batch}, false},
		{"an architecture refactor names none", NewReview{AgentType: Review, Verdict: "PASS", Branch: "refactor/arch-review-3", Work: WorkUnderReview{StatusBranch: "refactor/arch-review-3"}}, false},
		{"an empty status feature", NewReview{AgentType: Review, Verdict: "PASS", Branch: "refactor/arch-review-3", Work: WorkUnderReview{StatusFeature: &none, StatusBranch: "refactor/arch-review-3"}}, false},
		{"another branch than the one sent", NewReview{AgentType: Review, Verdict: "PASS", Branch: "refactor/other", Work: batch}, false},
		{"a person", NewReview{Person: true, AgentType: Review, Verdict: "PASS", Branch: "refactor/tech-debt-7", Work: batch}, false},
		{"an architecture review", NewReview{AgentType: Architecture, Verdict: "PASS", Branch: "refactor/tech-debt-7", Work: batch}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := PassNamesItems(tc.r)
			if (err != nil) != tc.refused {
				t.Fatalf("err = %v, refused want %v", err, tc.refused)
			}
			if err != nil && (!errs.Is(err, errs.Usage) || !strings.Contains(err.Error(), "--feature-id DEBT-001,DEBT-002")) {
				t.Errorf("the refusal names the flag and the items to name: %v", err)
			}
		})
	}
}
