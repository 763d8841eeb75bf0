package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDemoPromptsHaveNoBlanks runs the demo project to DONE and reads the
// prompt of every session from its log: each has the real values baton
// knows (no blank, no placeholder, no override), and the run met every
// kind of session the demo goes through.
func TestDemoPromptsHaveNoBlanks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	if r := baton(t, t.TempDir(), "demo", "--dir", dir); r.code != 0 {
		t.Fatalf("baton demo: %s", r)
	}
	logs, err := filepath.Glob(filepath.Join(dir, ".baton", "logs", "session-*.log"))
	if err != nil || len(logs) < 10 {
		t.Fatalf("session logs: %v %v", logs, err)
	}
	bad := []*regexp.Regexp{
		regexp.MustCompile(`\{\{|\}\}|<no value>|%!|<nil>`),
		regexp.MustCompile(`\b(REVIEW_ID|FEATURE_ID|FIX_ID|SPEC_FILE|INPUT_FILE|BRANCH_NAME|HASH|PERCENT|VERDICT|OUTCOME)\b`),
		regexp.MustCompile(`\S  +-|branch \.|branch ,|on branch\s*$|\bR0\b|\bA0\b|session 0\b| -(b|r|s|v|e)( -|$)`),
		regexp.MustCompile(`(?i)--as\b|BATON_ROLE|BATON_ALLOW_MAIN|by hand|another session|--branch`),
	}
	seen := map[string]bool{}
	kinds := map[string]*regexp.Regexp{
		"INITIALIZER":      regexp.MustCompile(`baton features append -s app_spec\.txt`),
		"IMPLEMENT":        regexp.MustCompile(`baton branch create feature/f00\d`),
		"REVIEW":           regexp.MustCompile(`baton reviews add-review -a REVIEW --feature-id F00\d -b feature/f00\d -v PASS`),
		"RE-REVIEW":        regexp.MustCompile(`This is a re-review: review R\d+ asked for changes`),
		"REVIEW_REFACTOR":  regexp.MustCompile(`baton reviews add-review -a REVIEW -b refactor/arch-review-\d+ -v PASS`),
		"REVIEW_DEBT":      regexp.MustCompile(`--feature-id DEBT-\d+\S* -b refactor/tech-debt-\d+ -v PASS`),
		"FIX":              regexp.MustCompile(`baton reviews add-fix -r R\d+ -b feature/f00\d --issues-fixed '\["R\d+-`),
		"FIX_ARCHITECTURE": regexp.MustCompile(`baton branch create refactor/arch-review-\d+[\s\S]*add-fix -r R\d+ -b refactor/arch-review-\d+ --issues-fixed '\["A\d+-`),
		"GLOBAL_FIX":       regexp.MustCompile(`work off the tech-debt items DEBT-\d+`),
		"ARCHITECTURE":     regexp.MustCompile(`baton reviews add-review -a ARCHITECTURE -v PASS`),
	}
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, rest, ok := strings.Cut(string(b), "=== prompt\n")
		prompt, _, ok2 := strings.Cut(rest, "=== output\n")
		if !ok || !ok2 {
			t.Errorf("%s keeps no prompt", f)
			continue
		}
		for i, line := range strings.Split(prompt, "\n") {
			if strings.Contains(line, "prints") && strings.Contains(line, "NAME") {
				continue // the demo's own feature descriptions ("greet NAME prints ...")
			}
			for _, re := range bad {
				if re.MatchString(line) {
					t.Errorf("%s, prompt line %d: %q in %q", filepath.Base(f), i+1, re.FindString(line), line)
				}
			}
		}
		for k, re := range kinds {
			if re.MatchString(prompt) {
				seen[k] = true
			}
		}
	}
	for k := range kinds {
		if !seen[k] {
			t.Errorf("no session of the demo got a %s prompt", k)
		}
	}
}
