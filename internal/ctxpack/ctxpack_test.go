package ctxpack_test

import (
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/ctxpack"
)

func fixInput() ctxpack.Input {
	return ctxpack.Input{
		Situation: ctxpack.FixReview, Session: 12, Project: "shop", Branch: "feature/login", Reason: "R4 asked for changes",
		Work: []ctxpack.WorkItem{{ID: "F002", Name: "Login", Kind: "feature", Description: "users log in with a password", Steps: []string{"open /login", "submit the form"}}},
		Review: &ctxpack.Review{ID: 4, Verdict: "REQUEST_CHANGES", Summary: "two problems", Issues: []ctxpack.Issue{
			{ID: "R4-S1", Severity: "suggestion", Description: "rename f"},
			{ID: "R4-C1", Severity: "critical", Description: "SQL injection", Location: "auth.go:20", Suggestion: "bind parameters"},
			{ID: "R4-m1", Severity: "minor", Description: "typo", Location: "auth.go:3"},
		}},
		Earlier: []ctxpack.Review{{ID: 2, Verdict: "REQUEST_CHANGES", Summary: "first look", Issues: []ctxpack.Issue{{ID: "R2-M1", Severity: "major", Description: "no tests"}}}},
		Fixes:   []ctxpack.Fix{{ID: 1, ReviewID: 2, Fixed: []string{"R2-M1"}}, {ID: 2, ReviewID: 4, Fixed: []string{"R4-C1"}, Deferred: []string{"R4-S1"}}},
		History: []ctxpack.Session{
			{ID: 3, Role: "IMPLEMENT", Outcome: "READY_FOR_REVIEW", Summary: "built login"},
			{ID: 5, Role: "FIX", Outcome: "READY_FOR_REVIEW", Summary: "added tests"},
		},
		FixCount: 1, MaxFixCycles: 3,
		Git:      ctxpack.Git{Branch: "feature/login", BranchExists: true, Main: "main", MergeBase: "abc1234", Head: "1111111", Tip: "def5678", Commits: []string{"def5678 login"}, DiffStat: " auth.go | 40 +++\n 1 file changed"},
		SpecFile: "app_spec.txt", AgentDocs: []string{"AGENTS.md"}, TestCommand: "go test ./...",
	}
}

func ids(p ctxpack.Package) []string {
	var out []string
	for _, it := range p.Items {
		out = append(out, it.ID)
	}
	return out
}

func TestFixPackageHasWhatFixNeeds(t *testing.T) {
	p := ctxpack.Build(fixInput(), 0)
	text := p.Text()
	for _, want := range []string{
		"You are FIX in baton session 12 of project shop: fix the issues of review R4 of F002 on branch feature/login",
		"users log in with a password", "1. open /login",
		"[R4-C1] critical: SQL injection", "Location: auth.go:20", "Suggestion: bind parameters",
		"Fix cycles used: 1 of 3 (2 left)", "Commit range: abc1234..def5678", "auth.go | 40",
		"Session 5, FIX: READY_FOR_REVIEW — added tests", "Earlier review R2", "FIX-1 answered it: fixed R2-M1", "FIX-2 answered it: fixed R4-C1; deferred R4-S1",
		"Run the tests: go test ./...", "AGENTS.md", "You may not: merge",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("package lacks %q:\n%s", want, text)
		}
	}
	if len(p.Omitted) != 0 || p.CompressionRatio != 1 {
		t.Errorf("a small package under the default budget: omitted %v, ratio %v", p.Omitted, p.CompressionRatio)
	}
	// issues by severity: critical before minor before suggestion
	got := strings.Join(ids(p), " ")
	if !(strings.Index(got, "issue-R4-C1") < strings.Index(got, "issue-R4-m1") && strings.Index(got, "issue-R4-m1") < strings.Index(got, "issue-R4-S1")) {
		t.Errorf("items not ranked by severity: %s", got)
	}
	if p.Items[0].ID != "situation" || p.Items[1].ID != "rules" {
		t.Errorf("the session and its rules come first: %s", got)
	}
}

func TestBudgetCutsWholeItems(t *testing.T) {
	in := fixInput()
	full := ctxpack.Build(in, 100000)
	for _, budget := range []int{1, 50, 120, 200, 300, 500, full.TokenCost - 1, full.TokenCost} {
		p := ctxpack.Build(in, budget)
		if p.TokenCost > budget {
			t.Errorf("budget %d: package costs %d", budget, p.TokenCost)
		}
		sum := 0
		for _, it := range p.Items {
			sum += it.TokenCost
			var orig *ctxpack.Item
			for i := range full.Items {
				if full.Items[i].ID == it.ID {
					orig = &full.Items[i]
				}
			}
			if orig == nil || orig.Payload != it.Payload {
				t.Errorf("budget %d: item %s was changed, not kept whole", budget, it.ID)
			}
		}
		if sum != p.TokenCost {
			t.Errorf("budget %d: token_cost %d, items sum to %d", budget, p.TokenCost, sum)
		}
		if len(p.Items)+len(p.Omitted) != len(full.Items) {
			t.Errorf("budget %d: %d items + %d omitted, want %d in all", budget, len(p.Items), len(p.Omitted), len(full.Items))
		}
		if len(p.Omitted) > 0 {
			if p.CompressionRatio >= 1 || !strings.Contains(p.Text(), "Left out for the budget") {
				t.Errorf("budget %d: omitted items must show in the ratio (%v) and the text", budget, p.CompressionRatio)
			}
			for _, o := range p.Omitted {
				if !strings.Contains(p.Text(), o.Title) {
					t.Errorf("budget %d: omitted %q not named in the text", budget, o.Title)
				}
			}
		}
	}
	// a higher-ranked item is never dropped for a lower one of the same size or larger
	p := ctxpack.Build(in, 300)
	for _, o := range p.Omitted {
		for _, it := range p.Items {
			if it.Importance < importanceOf(full, o.ID) && it.TokenCost >= o.TokenCost {
				t.Errorf("budget 300: %s (%.2f, %d tokens) kept over %s (%d tokens)", it.ID, it.Importance, it.TokenCost, o.ID, o.TokenCost)
			}
		}
	}
}

func importanceOf(p ctxpack.Package, id string) float64 {
	for _, it := range p.Items {
		if it.ID == id {
			return it.Importance
		}
	}
	return 0
}

func TestHistoryNewestFirst(t *testing.T) {
	in := fixInput()
	for i := 0; i < 5; i++ {
		in.History = append(in.History, ctxpack.Session{ID: 20 + i, Role: "FIX", Outcome: "ERROR", Summary: strings.Repeat("x", 200)})
	}
	p := ctxpack.Build(in, 900)
	kept := map[string]bool{}
	for _, id := range ids(p) {
		kept[id] = true
	}
	if kept["session-3"] && !kept["session-24"] {
		t.Errorf("an older session kept over the newest: %v", ids(p))
	}
}

func TestSituations(t *testing.T) {
	cases := []struct {
		role   string
		kinds  []string
		branch string
		want   ctxpack.Situation
	}{
		{"IMPLEMENT", []string{"feature"}, "feature/a", ctxpack.Implement},
		{"IMPLEMENT", []string{"bug"}, "", ctxpack.Bugfix},
		{"BUGFIX", []string{"bug"}, "", ctxpack.Bugfix},
		{"REVIEW", []string{"feature"}, "feature/a", ctxpack.ReviewFeature},
		{"REVIEW", []string{"bug"}, "bugfix/a", ctxpack.ReviewBug},
		{"REVIEW", nil, "refactor/arch-review-5", ctxpack.ReviewRefactor},
		{"REVIEW", []string{"tech_debt", "tech_debt"}, "refactor/tech-debt-7", ctxpack.ReviewDebt},
		{"FIX", []string{"feature"}, "feature/a", ctxpack.FixReview},
		{"FIX", nil, "refactor/arch-review-5", ctxpack.FixArchitecture},
		{"GLOBAL_FIX", []string{"tech_debt"}, "", ctxpack.GlobalFix},
		{"ARCHITECTURE", nil, "", ctxpack.ArchitectureReview},
		{"INITIALIZER", nil, "", ctxpack.Initializer},
		{"BROWNFIELD_INITIALIZER", nil, "", ctxpack.Brownfield},
	}
	for _, c := range cases {
		if got := ctxpack.Classify(c.role, c.kinds, c.branch); got != c.want {
			t.Errorf("Classify(%s, %v, %s) = %s, want %s", c.role, c.kinds, c.branch, got, c.want)
		}
	}
}

func TestArchitecturePackage(t *testing.T) {
	in := ctxpack.Input{Situation: ctxpack.ArchitectureReview, Session: 9, Interval: 5, MergedSince: []string{"F001", "F002"},
		LastArchitecture: &ctxpack.Review{ID: 3, Architecture: true, Verdict: "PASS", Health: "FAIR", Summary: "ok", Timestamp: "2025-01-29T15:00:00Z"},
		Git:              ctxpack.Git{Main: "main", Head: "bbb2222", MergeBase: "aaa1111", Commits: []string{"bbb2222 Merge F002"}, DiffStat: " a.go | 3 +++"}}
	text := ctxpack.Build(in, 0).Text()
	for _, want := range []string{"every 5 merged features", "Merged since the last one (2): F001, F002", "A3 (architecture, review R3), PASS, health FAIR",
		"Since the last architecture review (main at aaa1111):", "bbb2222 Merge F002", "a.go | 3"} {
		if !strings.Contains(text, want) {
			t.Errorf("architecture package lacks %q:\n%s", want, text)
		}
	}
}
