package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/internal/app"
)

// demoOpts are `baton demo`'s options.
type demoOpts struct {
	Dir     string
	Bridge  bool
	Keep    bool
	Sandbox string
}

func (a *App) newDemoCmd() *cobra.Command {
	var o demoOpts
	c := &cobra.Command{
		Use:   "demo",
		Short: "Run a whole multi-agent project on a scratch repository with a built-in scripted agent",
		Long: `Create a scratch git repository with four features and drive it to DONE with 'baton run'
and a built-in scripted agent that really edits files, commits, reviews and fixes through baton's
commands. The script includes a REQUEST_CHANGES -> FIX -> PASS cycle, a REJECT, architecture
reviews (one sends FIX to a refactor branch), the fix-cycle limit (leftovers become tech debt) and
the tech debt worked off. At the end it prints the timeline and runs 'baton verify'.
--bridge runs the agents through the exit-42 bridge instead of --agent-cmd. The scratch project
is a new temporary directory, removed at the end unless --keep (or --dir DIR) is given.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.runDemo(c.Context(), o) },
	}
	c.Flags().StringVar(&o.Dir, "dir", "", "where to create the scratch project (default: a new temp directory)")
	c.Flags().BoolVar(&o.Bridge, "bridge", false, "run the agents through the bridge (exit 42 / --resume) instead of --agent-cmd")
	c.Flags().BoolVar(&o.Keep, "keep", false, "keep the scratch project (a --dir is always kept)")
	c.Flags().StringVar(&o.Sandbox, "sandbox", "", "run the agents as 'baton run --sandbox' does: on, auto or off")
	c.Flags().Lookup("sandbox").NoOptDefVal = app.SandboxOn
	agent := &cobra.Command{
		Use: "agent", Short: "The scripted agent (run by baton run during the demo)", Hidden: true, Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.demoAgent(c.Context()) },
	}
	c.AddCommand(agent)
	return c
}

// demoConfig makes every kind of transition happen in a few sessions.
const demoConfig = `{"max_fix_cycles": 1, "architecture_interval": 2, "tech_debt_threshold": 5, "max_error_retries": 1, "lock_timeout_seconds": 10}
`

func (a *App) runDemo(ctx context.Context, o demoOpts) error {
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "baton-demo-")
		if err != nil {
			return err
		}
		dir = d
		if !o.Keep {
			defer os.RemoveAll(d)
		}
	}
	keep := o.Keep || o.Dir != ""
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	exe, err := selfPath()
	if err != nil {
		return err
	}
	a.notice("== scratch project: %s", dir)
	if err := demoRepo(dir); err != nil {
		return err
	}
	d := a.at(dir)
	keyFile, err := a.demoKey()
	if err != nil {
		return err
	}
	d.app.SetKeyFile(keyFile)
	if !keep {
		defer a.demoCleanup(d, dir)
	}
	d.env.Stderr = a.messages()
	// the demo's limits are in place before init, which records them
	if err := os.MkdirAll(filepath.Join(dir, ".baton"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ".baton", "config"), []byte(demoConfig), 0o644); err != nil {
		return err
	}
	if _, err := d.sub(ctx, nil, "init", "--name", "greeter"); err != nil {
		return err
	}
	agentCmd := fmt.Sprintf("%q demo agent", exe)
	if o.Bridge {
		err = d.demoThroughBridge(ctx, exe, agentCmd)
	} else {
		args := []string{"run", "--agent-cmd", agentCmd, "--max-sessions", "60"}
		if o.Sandbox != "" {
			args = append(args, "--sandbox="+o.Sandbox)
		}
		_, err = d.sub(ctx, nil, args...)
	}
	if err != nil {
		return err
	}
	if a.g.JSON {
		return a.demoJSON(ctx, d, dir, keep)
	}
	return d.demoReport(ctx, dir, keep)
}

// selfPath is how to run this baton again: the path it was started as
// (which a test harness may have installed under the name baton), else the
// executable.
func selfPath() (string, error) {
	if p, err := exec.LookPath(os.Args[0]); err == nil {
		return filepath.Abs(p)
	}
	return os.Executable()
}

// at is the app working in dir, with that as its state directory.
func (a *App) at(dir string) *App {
	e := a.env
	e.Cwd = dir
	d := newApp(e)
	d.g.StateDir = dir
	return d
}

// demoThroughBridge runs the same loop through the bridge: 'baton bridge
// loop' is the host (seed 001), 'baton run' the orchestrator that exits 42
// for each agent and is re-run with --resume.
func (a *App) demoThroughBridge(ctx context.Context, exe, agentCmd string) error {
	orchestrator := []string{exe, "--state-dir", a.env.Cwd, "run"}
	if keyFile := a.app.KeyFile(); keyFile != "" {
		// only the orchestrator (the launcher) is told where the key is;
		// the agents the loop starts are not
		orchestrator = append([]string{"env", "XDG_CONFIG_HOME=" + filepath.Dir(filepath.Dir(keyFile))}, orchestrator...)
	}
	_, err := a.sub(ctx, nil, append([]string{"bridge", "loop", "--max-iterations", "100", "--agent-cmd", agentCmd, "--"}, orchestrator...)...)
	return err
}

// demoKey is the key the demo's launcher uses: the person's own, or, for
// someone who has none yet, a throwaway key outside the scratch project
// ("" means the person's own).
func (a *App) demoKey() (string, error) {
	if has, err := a.app.HasPersonKey(); err != nil || has {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "baton-demo-key-")
	if err != nil {
		return "", err
	}
	k, err := app.NewKeyAt(filepath.Join(tmp, "baton", "key"))
	if err != nil {
		return "", err
	}
	a.notice("== you have no personal key yet: the demo uses a throwaway one, %s (a person makes their own once: docs/security.md, 'Operating the key')", k.Path)
	return k.Path, nil
}

// demoCleanup removes what a demo that keeps nothing left outside its
// scratch project: the log's anchor in the person's state directory and a
// throwaway key.
func (a *App) demoCleanup(d *App, dir string) {
	for _, p := range a.app.AnchorPaths(dir) {
		_ = os.Remove(p)
	}
	if keyFile := d.app.KeyFile(); keyFile != "" {
		_ = os.RemoveAll(filepath.Dir(filepath.Dir(keyFile)))
	}
}

func demoRepo(dir string) error {
	steps := [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.name", "demo agent"},
		{"config", "user.email", "agent@baton.demo"},
	}
	for _, s := range steps {
		if err := git(dir, s...); err != nil {
			return err
		}
	}
	files := map[string]string{
		"README.md":    "# greeter\n\nA tiny greeting tool built by baton's demo agents.\n",
		"app_spec.txt": "greeter: say hello, goodbye, shout and whisper.\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	if err := git(dir, "add", "README.md", "app_spec.txt"); err != nil {
		return err
	}
	return git(dir, "commit", "-q", "-m", "Initial project setup")
}

func git(dir string, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// demoReport prints what happened, for a person to follow.
func (a *App) demoReport(ctx context.Context, dir string, keep bool) error {
	for _, s := range []struct {
		title string
		args  []string
	}{
		{"Status", []string{"status"}},
		{"Features", []string{"features", "list"}},
		{"Sessions", []string{"progress", "list"}},
		{"Reviews and fixes", []string{"reviews", "list"}},
		{"Timeline (the audit log)", []string{"log"}},
		{"Verify", []string{"verify"}},
	} {
		out, err := a.sub(ctx, nil, s.args...)
		fmt.Fprintf(a.env.Stdout, "\n== %s ($ baton %s)\n%s", s.title, strings.Join(s.args, " "), out)
		if err != nil {
			return err
		}
	}
	graph, err := app.GitOut(dir, "log", "--oneline", "--graph", "main")
	if err != nil {
		return err
	}
	where := "the project is in " + dir
	if !keep {
		where = "removed " + dir + " (keep it with --keep)"
	}
	fmt.Fprintf(a.env.Stdout, "\n== main's history\n%s\n\ndemo: done — %s\n", graph, where)
	return nil
}

// demoJSON prints the demo's outcome as one document: each report
// command's own document, and main's history.
func (a *App) demoJSON(ctx context.Context, d *App, dir string, keep bool) error {
	doc := map[string]any{"dir": dir, "kept": keep}
	for _, s := range []struct {
		key  string
		args []string
	}{{"status", []string{"status"}}, {"features", []string{"features", "list"}}, {"sessions", []string{"progress", "list"}},
		{"reviews", []string{"reviews", "list"}}, {"log", []string{"log"}}, {"verify", []string{"verify"}}} {
		out, err := d.sub(ctx, nil, append([]string{"--json"}, s.args...)...)
		if err != nil {
			return err
		}
		doc[s.key] = json.RawMessage(out)
	}
	graph, err := app.GitOut(dir, "log", "--oneline", "main")
	if err != nil {
		return err
	}
	doc["main_history"] = strings.Split(graph, "\n")
	return a.writeJSON(a.env.Stdout, doc)
}
