package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/workflow"
)

// The demo's scripted agent. baton run starts it for every session; it
// finds its session, does that role's work in the repository with git and
// baton's own commands (the same ones a real agent's prompt teaches), and
// ends its session. What each reviewer says is scripted so that the demo
// goes through every kind of transition.

// demoFeatures is what the INITIALIZER writes.
const demoFeatures = `[
  {"id": "F001", "name": "Greeting", "description": "greet NAME prints hello, NAME", "type": "feature"},
  {"id": "F002", "name": "Farewell", "description": "bye NAME prints goodbye, NAME", "type": "feature"},
  {"id": "F003", "name": "Shouting", "description": "shout TEXT prints TEXT in capitals", "type": "feature"},
  {"id": "F004", "name": "Whisper", "description": "whisper TEXT prints TEXT in lower case", "type": "feature"}
]`

// verdict is a scripted review.
type verdict struct {
	Verdict string
	Issues  string
	Summary string
}

// demoReview says what REVIEW decides for a feature at its n-th review.
func demoReview(feature string, n int) verdict {
	switch {
	case feature == "F001" && n == 0:
		return verdict{"REQUEST_CHANGES", `[{"severity": "major", "description": "An empty name prints 'hello, '", "location": "src/f001.sh:2", "suggestion": "Default the name to world"}]`, "Works, but the empty name is not handled"}
	case feature == "F002" && n == 0:
		return verdict{"REJECT", `[{"severity": "critical", "description": "Farewell is written to stderr, so pipes see nothing", "location": "src/f002.sh:2"}]`, "Wrong approach: output goes to stderr"}
	case feature == "F003" && n == 0:
		return verdict{"PASS_WITH_COMMENTS", `[{"severity": "minor", "description": "No usage line", "location": "src/f003.sh:1"}]`, "Fine apart from a nit"}
	case feature == "F003":
		return verdict{"REQUEST_CHANGES", `[{"severity": "minor", "description": "Shouting an empty text prints an empty line", "location": "src/f003.sh:3"}, {"severity": "suggestion", "description": "Share argument handling with greet"}]`, "Still two small things"}
	}
	return verdict{"PASS", "", "Looks good: tests pass, code is clear"}
}

func (a *App) demoAgent(ctx context.Context) error {
	_, _ = io.ReadAll(a.env.Stdin) // the prompt: this agent follows a script instead
	cur, err := a.query(ctx, "session", "current")
	if err != nil {
		return err
	}
	open := cur.Get("sessions").Array()
	if len(open) != 1 {
		return fmt.Errorf("demo agent: expected one open session, found %d", len(open))
	}
	s := open[0]
	status, err := a.query(ctx, "progress", "get-status")
	if err != nil {
		return err
	}
	role := s.Get("agent_type").String()
	var ids []string
	s.Get("features").ForEach(func(_, v gjson.Result) bool { ids = append(ids, v.String()); return true })
	feature := strings.Join(ids, ",")
	if feature == "" {
		feature = status.Get("current_feature").String()
	}
	branch := s.Get("branch").String()
	if branch == "" {
		branch = status.Get("current_branch").String()
	}
	fmt.Fprintf(a.env.Stdout, "demo agent: %s session %d on %s %s\n", role, s.Get("session_id").Int(), app.OrDash(feature), app.OrDash(branch))
	canon, _ := workflow.Canonical(role)
	switch canon {
	case workflow.Initializer:
		return a.demoInitialize(ctx)
	case workflow.Implement:
		return a.demoImplement(ctx, feature)
	case workflow.Review:
		return a.demoReviewStep(ctx, feature, branch)
	case workflow.Fix:
		return a.demoFix(ctx, role, feature, branch, s.Get("session_id").Int())
	case workflow.Architecture:
		return a.demoArchitecture(ctx)
	}
	return fmt.Errorf("demo agent: no script for role %s", role)
}

// query runs a baton command with --json and parses its output.
func (a *App) query(ctx context.Context, args ...string) (gjson.Result, error) {
	out, err := a.sub(ctx, nil, append([]string{"--json"}, args...)...)
	if err != nil {
		return gjson.Result{}, err
	}
	return gjson.ParseBytes(out), nil
}

func (a *App) baton(ctx context.Context, args ...string) error {
	out, err := a.sub(ctx, nil, args...)
	fmt.Fprintf(a.env.Stdout, "$ baton %s\n%s", strings.Join(args, " "), out)
	return err
}

func (a *App) demoInitialize(ctx context.Context) error {
	if err := a.baton(ctx, "features", "append", "-s", "app_spec.txt", "-e", demoFeatures); err != nil {
		return err
	}
	return a.baton(ctx, "session", "end", "-o", "SUCCESS", "-s", "Wrote the feature list: 4 features from app_spec.txt")
}

// write creates or appends to a file in the repository.
func (a *App) write(path, text string, appendTo bool) error {
	p := filepath.Join(a.env.Cwd, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	flag := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appendTo {
		flag = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(p, flag, 0o755)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(text)
	return err
}

func (a *App) commit(msg string, paths ...string) (string, error) {
	if err := git(a.env.Cwd, append([]string{"add"}, paths...)...); err != nil {
		return "", err
	}
	if err := git(a.env.Cwd, "commit", "-q", "-m", msg); err != nil {
		return "", err
	}
	return app.GitOut(a.env.Cwd, "rev-parse", "--short", "HEAD")
}

// switchTo checks out branch, creating it through baton from main first
// when it does not exist.
func (a *App) switchTo(ctx context.Context, branch string) error {
	if _, err := app.GitOut(a.env.Cwd, "rev-parse", "--verify", "-q", "refs/heads/"+branch); err != nil {
		if err := a.baton(ctx, "branch", "create", branch); err != nil {
			return err
		}
	}
	return git(a.env.Cwd, "switch", "-q", branch)
}

func (a *App) demoImplement(ctx context.Context, feature string) error {
	f, err := a.query(ctx, "features", "get", feature)
	if err != nil {
		return err
	}
	branch := "feature/" + strings.ToLower(feature)
	if err := a.switchTo(ctx, branch); err != nil {
		return err
	}
	file := "src/" + strings.ToLower(feature) + ".sh"
	body := fmt.Sprintf("#!/bin/sh\n# %s: %s\necho \"%s ${1:-world}\"\n", feature, f.Get("description").String(), strings.ToLower(f.Get("name").String()))
	if err := a.write(file, body, false); err != nil {
		return err
	}
	if _, err := a.commit(fmt.Sprintf("Implement %s (%s)", feature, f.Get("name").String()), file); err != nil {
		return err
	}
	return a.baton(ctx, "session", "end", "-o", "READY_FOR_REVIEW", "-s", "Implemented "+feature+" on "+branch)
}

func (a *App) demoReviewStep(ctx context.Context, feature, branch string) error {
	if err := a.baton(ctx, "progress", "get-review-type"); err != nil {
		return err
	}
	list, err := a.query(ctx, "reviews", "list")
	if err != nil {
		return err
	}
	n := 0
	list.Get("reviews").ForEach(func(_, r gjson.Result) bool {
		if feature != "" && r.Get("feature_id").String() == feature {
			n++
		}
		return true
	})
	v := demoReview(feature, n)
	if strings.HasPrefix(branch, "refactor/") || strings.HasPrefix(feature, "DEBT-") {
		v = verdict{"PASS", "", "The refactoring keeps behaviour and removes the duplication"}
	}
	args := []string{"reviews", "add-review", "-a", "REVIEW", "-b", branch, "-v", v.Verdict, "-s", v.Summary}
	if feature != "" {
		args = append(args, "--feature-id", feature)
	}
	if v.Issues != "" {
		args = append(args, "--issues", v.Issues)
	}
	out, err := a.sub(ctx, nil, append([]string{"--json"}, args...)...)
	fmt.Fprintf(a.env.Stdout, "$ baton %s\n%s", strings.Join(args, " "), out)
	if err != nil {
		return err
	}
	var rv struct {
		ReviewID int `json:"review_id"`
		Decision struct {
			Merge, Reject bool
			Reason        string
		} `json:"decision"`
	}
	if err := json.Unmarshal(out, &rv); err != nil {
		return err
	}
	outcome := "NEEDS_FIX"
	switch {
	case rv.Decision.Merge:
		outcome = "SUCCESS"
		if err := git(a.env.Cwd, "switch", "-q", "main"); err != nil {
			return err
		}
		if err := a.baton(ctx, "reviews", "merge", "--review", fmt.Sprint(rv.ReviewID)); err != nil {
			return err
		}
	case rv.Decision.Reject:
		outcome = "REJECTED"
		if err := git(a.env.Cwd, "switch", "-q", "main"); err != nil {
			return err
		}
		if err := a.baton(ctx, "reviews", "reject", "--review", fmt.Sprint(rv.ReviewID)); err != nil {
			return err
		}
	}
	return a.baton(ctx, "session", "end", "-o", outcome, "-s", fmt.Sprintf("R%d: %s — %s", rv.ReviewID, v.Verdict, rv.Decision.Reason))
}

func (a *App) demoFix(ctx context.Context, role, feature, branch string, session int64) error {
	if branch == "" { // tech debt has no branch yet: FIX may open a refactor branch
		branch = fmt.Sprintf("refactor/debt-%d", session)
	}
	if err := a.switchTo(ctx, branch); err != nil {
		return err
	}
	if err := a.write("src/NOTES.md", fmt.Sprintf("- %s session %d: %s\n", role, session, app.OrDash(feature)), true); err != nil {
		return err
	}
	hash, err := a.commit(fmt.Sprintf("%s: address review findings (%s)", role, app.OrDash(feature)), "src/NOTES.md")
	if err != nil {
		return err
	}
	if !strings.HasPrefix(feature, "DEBT-") {
		issues, err := a.query(ctx, "reviews", "show-issues")
		if err != nil {
			return err
		}
		var fixed []map[string]string
		issues.Get("issues").ForEach(func(_, is gjson.Result) bool {
			fixed = append(fixed, map[string]string{"issue_id": is.Get("id").String(), "fix_description": "Fixed: " + is.Get("description").String(), "commit": hash})
			return true
		})
		b, _ := json.Marshal(fixed)
		if err := a.baton(ctx, "reviews", "add-fix", "-r", issues.Get("review_id").String(), "-b", branch, "--issues-fixed", string(b), "--tests-added", "demo_regression"); err != nil {
			return err
		}
	}
	return a.baton(ctx, "session", "end", "-o", "READY_FOR_REVIEW", "-s", "Fixed the findings on "+branch)
}

func (a *App) demoArchitecture(ctx context.Context) error {
	list, err := a.query(ctx, "reviews", "list")
	if err != nil {
		return err
	}
	n := 0
	list.Get("reviews").ForEach(func(_, r gjson.Result) bool {
		if r.Get("agent_type").String() == "ARCHITECTURE" {
			n++
		}
		return true
	})
	args := []string{"reviews", "add-review", "-a", "ARCHITECTURE", "-v", "PASS", "--coverage", "86", "-s", "Healthy: small scripts, tested"}
	if n == 0 {
		args = []string{"reviews", "add-review", "-a", "ARCHITECTURE", "-v", "REQUEST_CHANGES", "--coverage", "72",
			"-s", "Each script parses its arguments its own way",
			"--issues", `[{"severity": "major", "description": "Argument handling duplicated across src/*.sh", "location": "src/", "suggestion": "Extract a shared helper"}]`}
	}
	if err := a.baton(ctx, args...); err != nil {
		return err
	}
	return a.baton(ctx, "session", "end", "-o", "SUCCESS", "-s", fmt.Sprintf("Architecture review %d done", n+1))
}
