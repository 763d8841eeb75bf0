package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/workflow"
)

// TestDemoPromptsHaveNoBlanks runs the demo project to DONE and reads the
// prompt of every session from its log: each has the real values baton
// knows (no blank, no placeholder, no override), each of its baton command
// lines is one the session's role may run, and the run met every kind of
// session the demo goes through.
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
	seen, checked := map[string]bool{}, map[string]bool{}
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
		checkCommands(t, filepath.Base(f), prompt, checked)
	}
	for k := range kinds {
		if !seen[k] {
			t.Errorf("no session of the demo got a %s prompt", k)
		}
	}
	for _, op := range []string{"session.end", "branch.create", "features.append", "reviews.add-review", "reviews.add-fix"} {
		if !checked[op] {
			t.Errorf("no prompt of the demo's sessions has a baton command line of %s to check", op)
		}
	}
}

var (
	quoted   = regexp.MustCompile(`'[^']*'|"[^"]*"`)
	commandW = regexp.MustCompile(`^[a-z][a-z-]*$`)
	helps    = map[string]string{}
)

// checkCommands checks each baton command line of a session's prompt
// (a line "baton GROUP ...", GROUP a command operations serve) against
// what the session can do: the operation it runs exists and the session's
// role may call it, and each flag it gives is one of the command's. The
// operations checked are added to checked.
func checkCommands(t *testing.T, name, prompt string, checked map[string]bool) {
	m := promptRole.FindStringSubmatch(prompt)
	if m == nil {
		t.Errorf("%s: the prompt names no role", name)
		return
	}
	role, _ := workflow.Canonical(m[1])
	for _, line := range strings.Split(prompt, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "baton ") {
			continue
		}
		words := strings.Fields(quoted.ReplaceAllString(line, "X"))[1:]
		if len(words) == 0 || !servedGroup(words[0]) {
			continue // prose about baton
		}
		var path, flags []string
		for _, w := range words {
			switch {
			case strings.HasPrefix(w, "-"):
				flag, _, _ := strings.Cut(w, "=")
				flags = append(flags, flag)
			case len(flags) == 0 && commandW.MatchString(w):
				path = append(path, w)
			}
		}
		op, ok := app.Lookup(strings.Join(path, "."))
		if !ok {
			t.Errorf("%s: %q runs no operation a session can call", name, line)
			continue
		}
		checked[op.Info().Name] = true
		if roles := op.Info().Roles; !slices.Contains(roles, role) && !slices.Contains(roles, m[1]) {
			t.Errorf("%s: %s's prompt says %q, which %v may call", name, m[1], line, roles)
		}
		help := commandHelp(t, path)
		for _, f := range flags {
			if !regexp.MustCompile(`(^|[\s,])` + regexp.QuoteMeta(f) + `[\s,]`).MatchString(help) {
				t.Errorf("%s: %q gives %s, which 'baton %s' does not take", name, line, f, strings.Join(path, " "))
			}
		}
	}
}

// servedGroup says whether operations serve the commands of group.
func servedGroup(group string) bool {
	for _, o := range app.Operations() {
		if n := o.Info().Name; n == group || strings.HasPrefix(n, group+".") {
			return true
		}
	}
	return false
}

// commandHelp is the help of baton's command path, read once.
func commandHelp(t *testing.T, path []string) string {
	key := strings.Join(path, " ")
	if h, ok := helps[key]; ok {
		return h
	}
	out, err := exec.Command(batonBin, append(path, "--help")...).CombinedOutput()
	if err != nil {
		t.Errorf("baton %s --help: %v\n%s", key, err, out)
	}
	helps[key] = string(out)
	return string(out)
}
