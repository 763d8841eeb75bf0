package prompts_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/ctxpack"
	"github.com/baton-cli/baton/internal/prompts"
)

// situationData is a realistic session of each situation, with the
// values baton run fills in.
func situationData(s ctxpack.Situation) prompts.Data {
	d := prompts.Data{Role: s.Role(), Situation: string(s), Session: 7, Project: "shop", ProjectPath: "/src/shop",
		StateDir: "/src/shop", MainBranch: "main", Reason: "the workflow says so", MaxFixCycles: 3, FixCount: 1,
		SpecFile: "app_spec.txt", TestCommand: "go test ./...", AgentDocs: []string{"AGENTS.md"},
		FeatureCount: 12, FeaturesCompleted: 4, ArchitectureInterval: 5, TechDebtThreshold: 5, NextReviewID: 9}
	switch s {
	case ctxpack.Initializer, ctxpack.Brownfield:
		d.FixCount, d.NextReviewID = 0, 1
	case ctxpack.Implement:
		d.Feature, d.Branch = "FEAT-003", "feature/feat-003"
	case ctxpack.Bugfix:
		d.Feature, d.Branch = "BUG-001", "bugfix/bug-001"
	case ctxpack.ReviewFeature:
		d.Feature, d.Branch, d.BranchExists, d.PrevReviewID = "FEAT-003", "feature/feat-003", true, 8
	case ctxpack.ReviewBug:
		d.Feature, d.Branch, d.BranchExists = "BUG-001", "bugfix/bug-001", true
	case ctxpack.ReviewRefactor:
		d.Branch, d.BranchExists = "refactor/arch-review-5", true
	case ctxpack.ReviewDebt:
		d.Feature, d.Branch, d.BranchExists = "DEBT-001,DEBT-002", "refactor/tech-debt-6", true
	case ctxpack.FixReview:
		d.Feature, d.Branch, d.BranchExists, d.ReviewID, d.IssuePrefix = "FEAT-003", "feature/feat-003", true, 8, "R8-"
		d.IssueIDs = []string{"R8-M1", "R8-m1"}
	case ctxpack.FixArchitecture:
		d.Branch, d.ReviewID, d.IssuePrefix, d.IssueIDs = "refactor/arch-review-5", 5, "A5-", []string{"A5-C1", "A5-M1"}
	case ctxpack.GlobalFix:
		d.Feature, d.Branch = "DEBT-001,DEBT-002", "refactor/tech-debt-7"
	}
	in := ctxpack.Input{Situation: s, Session: 7, Project: "shop", Branch: d.Branch, MaxFixCycles: 3, FixCount: 1,
		SpecFile: d.SpecFile, TestCommand: d.TestCommand, AgentDocs: d.AgentDocs, Git: ctxpack.Git{Main: "main", Branch: d.Branch}}
	for _, id := range strings.Split(d.Feature, ",") {
		if id != "" {
			in.Work = append(in.Work, ctxpack.WorkItem{ID: id, Name: "Item " + id, Description: "what " + id + " does", Steps: []string{"run it", "see it work"}})
		}
	}
	if d.ReviewID > 0 {
		in.Review = &ctxpack.Review{ID: d.ReviewID, Architecture: s == ctxpack.FixArchitecture, Verdict: "REQUEST_CHANGES", Summary: "two problems"}
		for _, id := range d.IssueIDs {
			in.Review.Issues = append(in.Review.Issues, ctxpack.Issue{ID: id, Severity: "major", Description: "problem " + id, Location: "a.go:1"})
		}
	}
	d.Context = ctxpack.Build(in, 0).Text()
	return d
}

// placeholders are the marks of a value baton should have filled in.
var placeholders = []*regexp.Regexp{
	regexp.MustCompile(`\{\{|\}\}|<no value>|%!|\bnil\b|<nil>`),
	regexp.MustCompile(`\b(REVIEW_ID|FEATURE_ID|FIX_ID|SPEC_FILE|INPUT_FILE|BRANCH_NAME|HASH|PERCENT|VERDICT|OUTCOME|ROLE)\b`),
	regexp.MustCompile(`(^|\s)(ID|NAME|BRANCH|FEATURE)(\s|$)`),
	regexp.MustCompile(`feature/NAME|R<|A<|REVIEW_ID`),
	regexp.MustCompile(`\S  +-`),                  // a gap where a value was: "-b  -v"
	regexp.MustCompile(` -(b|r|s|v|e)( -|$| \\)`), // a flag with no value
	regexp.MustCompile(`--(feature-id|branch|review-id|review)( -|$)`),
	regexp.MustCompile(`branch \.|branch ,|on branch\s*$|R0\b|A0\b|R0-|A0-|session 0\b`),
	regexp.MustCompile(`(?i)--as\b|BATON_ROLE|BATON_ALLOW_MAIN|by hand|another session|--branch`),
}

func TestEveryRoleInEverySituation(t *testing.T) {
	for _, s := range ctxpack.Situations() {
		t.Run(string(s), func(t *testing.T) {
			d := situationData(s)
			out, err := prompts.Render("", d)
			if err != nil {
				t.Fatal(err)
			}
			checkClean(t, string(s), out)
			must := []string{"baton session end -o ", "session 7", "shop", "# When something goes wrong", "exit 3", "baton context"}
			if d.Branch != "" {
				must = append(must, d.Branch)
			}
			if d.Feature != "" {
				must = append(must, d.Feature)
			}
			switch s {
			case ctxpack.Initializer, ctxpack.Brownfield:
				must = append(must, "baton features append -s app_spec.txt -e ")
			case ctxpack.Implement, ctxpack.Bugfix, ctxpack.GlobalFix:
				must = append(must, "baton branch create "+d.Branch, "git switch "+d.Branch, "-o READY_FOR_REVIEW", "go test ./...")
			case ctxpack.ReviewFeature, ctxpack.ReviewBug, ctxpack.ReviewDebt:
				must = append(must, "baton reviews add-review -a REVIEW --feature-id "+d.Feature+" -b "+d.Branch+" -v PASS",
					"baton reviews merge", "baton reviews reject", "may not end before baton reviews merge has succeeded", "conflict", "R9")
			case ctxpack.ReviewRefactor:
				must = append(must, "baton reviews add-review -a REVIEW -b refactor/arch-review-5 -v PASS", "baton reviews merge", "conflict")
			case ctxpack.FixReview:
				must = append(must, `baton reviews add-fix -r R8 -b feature/feat-003 --issues-fixed '["R8-M1", "R8-m1"]'`, "1 of 3")
			case ctxpack.FixArchitecture:
				must = append(must, "baton branch create refactor/arch-review-5", `add-fix -r R5 -b refactor/arch-review-5 --issues-fixed '["A5-C1", "A5-M1"]'`, "A5-")
			case ctxpack.ArchitectureReview:
				must = append(must, "baton reviews add-review -a ARCHITECTURE -v PASS", "A9-C1", "refactor/arch-review-9")
			}
			for _, m := range must {
				if !strings.Contains(out, m) {
					t.Errorf("%s: the prompt lacks %q:\n%s", s, m, out)
				}
			}
			if s == ctxpack.GlobalFix && strings.Contains(out, "show-issues") {
				t.Errorf("GLOBAL_FIX is sent to show-issues, which shows a review, not the debt items")
			}
		})
	}
}

// checkClean fails on every line with a placeholder, blank or override.
func checkClean(t *testing.T, name, out string) {
	t.Helper()
	for _, re := range placeholders {
		for _, line := range strings.Split(out, "\n") {
			if re.MatchString(line) {
				t.Errorf("%s: placeholder or blank %q in line:\n%s", name, re.FindString(line), line)
			}
		}
	}
}

func TestFixAfterMergeConflict(t *testing.T) {
	d := situationData(ctxpack.FixReview)
	d.IssueIDs = nil
	out, err := prompts.Render("", d)
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, "FIX after a merge conflict", out)
	if strings.Contains(out, "add-fix -r") || !strings.Contains(out, "git merge main") || !strings.Contains(out, "conflicted") {
		t.Errorf("a FIX sent back by a merge conflict must merge main in, with no issues to record:\n%s", out)
	}
}

func TestReviewWithoutBranchSaysSo(t *testing.T) {
	d := situationData(ctxpack.ReviewFeature)
	d.Branch = ""
	out, err := prompts.Render("", d)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "add-review") || !strings.Contains(out, `baton session end -o ERROR -s "no branch is recorded for FEAT-003"`) {
		t.Errorf("a review with no branch must not be told to review a blank branch:\n%s", out)
	}
}

func TestOverrides(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := situationData(ctxpack.Implement)
	write("IMPLEMENT.md", "Project {{PROJECT_NAME}} at {{ PROJECT_PATH }} on {{MAIN_BRANCH}}, {{FEATURE_COUNT}} features,\n{{FEATURES_COMPLETED}} done, every {{ARCHITECTURE_INTERVAL}}, debt {{TECH_DEBT_THRESHOLD}}, state {{AGENT_STATE_DIR}}, spec {{INPUT_FILE}}; {{.Feature}}\n{{template \"lost\" .}}\n")
	out, err := prompts.Render(dir, d)
	if err != nil {
		t.Fatal(err)
	}
	want := "Project shop at /src/shop on main, 12 features,\n4 done, every 5, debt 5, state /src/shop, spec app_spec.txt; FEAT-003\n"
	if !strings.HasPrefix(out, want) || !strings.Contains(out, "baton context") {
		t.Errorf("override = %q, want it to start %q and use the shared parts", out, want)
	}
	// BUGFIX falls back to the IMPLEMENT override
	d.Role = "BUGFIX"
	if out, err := prompts.Render(dir, d); err != nil || !strings.HasPrefix(out, "Project shop") {
		t.Errorf("BUGFIX with an IMPLEMENT override = %q, %v", out, err)
	}
	bad := map[string]struct {
		body string
		line int
		msg  string
	}{
		"unknown placeholder": {"line one\nline two {{NO_SUCH}}\n", 2, "unknown placeholder {{NO_SUCH}}"},
		"parse error":         {"a\n{{end}}\nc\n", 2, "unexpected {{end}}"},
		"unknown field":       {"a\n\nc {{.Nope}}\n", 3, "Nope"},
		"unknown function":    {"{{nope .Feature}}\n", 1, `function "nope" not defined`},
	}
	for name, c := range bad {
		write("REVIEW.md", c.body)
		_, err := prompts.Render(dir, situationData(ctxpack.ReviewFeature))
		var pe *prompts.Error
		if !errors.As(err, &pe) || pe.Line != c.line || pe.File != filepath.Join(dir, "REVIEW.md") || !strings.Contains(pe.Msg, c.msg) {
			t.Errorf("%s: err = %#v, want line %d of REVIEW.md with %q", name, err, c.line, c.msg)
		}
	}
}

// TestPrintPrompts prints every prompt and its size (go test -run
// TestPrintPrompts -v ./prompts with PRINT_PROMPTS=1).
func TestPrintPrompts(t *testing.T) {
	if os.Getenv("PRINT_PROMPTS") == "" {
		t.Skip("set PRINT_PROMPTS=1 to print the prompts")
	}
	for _, s := range ctxpack.Situations() {
		out, err := prompts.Render("", situationData(s))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("==== %s: %d bytes\n%s", s, len(out), out)
	}
}

func TestInitializersWithoutSpec(t *testing.T) {
	d := situationData(ctxpack.Initializer)
	d.SpecFile = ""
	out, err := prompts.Render("", d)
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, "INITIALIZER without a spec", out)
	if strings.Contains(out, "features append") || !strings.Contains(out, `baton session end -o ERROR -s "no specification file in the project"`) {
		t.Errorf("an INITIALIZER without a spec must not be told to append from a blank source:\n%s", out)
	}
	d = situationData(ctxpack.Brownfield)
	d.SpecFile = ""
	if out, err = prompts.Render("", d); err != nil {
		t.Fatal(err)
	}
	checkClean(t, "BROWNFIELD_INITIALIZER without a spec", out)
	if !strings.Contains(out, "baton features append -s existing-code -e") || strings.Contains(out, "Read ,") {
		t.Errorf("a brownfield initializer without a spec takes the code as its source:\n%s", out)
	}
}

func TestNothingAssigned(t *testing.T) {
	for _, c := range []struct {
		s    ctxpack.Situation
		edit func(*prompts.Data)
		want string
	}{
		{ctxpack.Implement, func(d *prompts.Data) { d.Feature, d.Branch = "", "" }, `baton session end -o ERROR -s "no work item was assigned to this session"`},
		{ctxpack.Bugfix, func(d *prompts.Data) { d.Feature, d.Branch = "", "" }, `baton session end -o ERROR -s "no bug was assigned to this session"`},
		{ctxpack.FixReview, func(d *prompts.Data) { d.ReviewID, d.IssuePrefix, d.IssueIDs = 0, "", nil }, `baton session end -o ERROR -s "no review found for this fix"`},
	} {
		d := situationData(c.s)
		c.edit(&d)
		out, err := prompts.Render("", d)
		if err != nil {
			t.Fatal(err)
		}
		checkClean(t, string(c.s)+" with nothing assigned", out)
		if !strings.Contains(out, c.want) || strings.Contains(out, "# Steps") {
			t.Errorf("%s with nothing assigned must end for a person, not work on blanks:\n%s", c.s, out)
		}
	}
}
