package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/lineage"
	"github.com/baton-cli/baton/internal/runner"
)

// Runners: 'baton runner check NAME' before a run, and the runner's side
// of a remote lane (baton __runner ..., run there by the launcher's ssh).
// The lanes' placement and their ssh are in runlanes.go and
// sandboxbroker.go; the commands themselves are the runner package's.

// newRunnerCmd is 'baton runner'.
func (a *App) newRunnerCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "runner",
		Short: "Check the machines lanes may run on over SSH (\"runners\" in .baton/config)",
		Long: `A runner is another machine a lane of 'baton run --agents K' may run on, reached with your
ssh and git: "runners": [{"name": "box1", "ssh": "agent@box1", "slots": 4}] in .baton/config.
The state, the lock, the log and your key stay here; the runner gets a clone of the lane's
branch and the session's broker socket, forwarded by ssh. See docs/runners.md.`,
		Args: cobra.NoArgs,
	}
	c.AddCommand(a.newRunnerCheckCmd())
	return c
}

// runnerCheckOpts are the options of 'baton runner check'.
type runnerCheckOpts struct {
	Name     string
	Agent    string
	AgentCmd string
}

// RunnerCheck is what 'baton runner check' found.
type RunnerCheck struct {
	Runner   string `json:"runner"`
	SSH      string `json:"ssh"`
	Protocol int    `json:"protocol"`
	Version  string `json:"version"`
	Git      string `json:"git"`
	Sandbox  string `json:"sandbox"`
	// Lineage is why the runner cannot tell an agent's own baton calls
	// from those of the code it runs ("": it can).
	Lineage  string            `json:"lineage"`
	Programs map[string]string `json:"programs"`
	Missing  []string          `json:"missing"`
}

func (a *App) newRunnerCheckCmd() *cobra.Command {
	var o runnerCheckOpts
	c := &cobra.Command{
		Use:   "check NAME",
		Short: "Check a runner over ssh: reachable, a compatible baton, git, the agent CLI, the sandbox",
		Long: `Check the runner NAME of .baton/config over ssh, as a run would reach it: it answers (exit 9
when it does not), its baton speaks this baton's runner protocol, it has git, the agent program
(--agent or the first word of --agent-cmd) is on its PATH, and its kernel offers the sandbox
("sandbox": "auto" for the runner accepts none). Anything missing: exit 4, each named.
baton never turns host-key checking off: a host your ssh does not know fails here, as it would in
ssh; add it to your known_hosts first.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.Name = args[0]
			res, err := a.runnerCheck(c.Context(), o)
			if err != nil {
				return err
			}
			return a.emit(res, func(w io.Writer) { writeRunnerCheck(w, res) })
		},
	}
	c.Flags().StringVar(&o.Agent, "agent", "", "the agent CLI preset the run uses (claude or codex)")
	c.Flags().StringVar(&o.AgentCmd, "agent-cmd", "", "the agent command the run uses: its first word must be on the runner's PATH")
	return c
}

// runnerCheck checks one configured runner.
func (a *App) runnerCheck(ctx context.Context, o runnerCheckOpts) (RunnerCheck, error) {
	r, err := a.configuredRunner(o.Name)
	if err != nil {
		return RunnerCheck{}, err
	}
	programs := agentPrograms(o.Agent, o.AgentCmd)
	if err := r.Reachable(ctx); err != nil {
		return RunnerCheck{}, runnerError(err)
	}
	f, err := r.Probe(ctx, programs)
	if err != nil {
		return RunnerCheck{}, runnerError(err)
	}
	res := RunnerCheck{Runner: r.Name, SSH: r.SSH, Protocol: f.Protocol, Version: f.Version, Git: f.Git, Sandbox: f.Sandbox, Lineage: f.Lineage, Programs: f.Programs, Missing: checkMissing(r, f, programs)}
	if len(res.Missing) > 0 {
		if !a.g.JSON {
			writeRunnerCheck(a.env.Stderr, res)
		}
		return res, errs.New(errs.NotFound, "runner %s cannot run lanes: it lacks %s", r.Name, strings.Join(res.Missing, "; "))
	}
	return res, nil
}

// agentPrograms are the programs a runner must have on its PATH to run
// the preset or the command line's program (one named by a path is not
// looked for).
func agentPrograms(preset, cmdline string) []string {
	var programs []string
	if preset != "" {
		programs = append(programs, preset)
	}
	if p := shellProgram(cmdline); p != "" && !strings.Contains(p, "/") {
		programs = append(programs, p)
	}
	return programs
}

// checkMissing names what r lacks of what a lane needs.
func checkMissing(r runner.Runner, f runner.Facts, programs []string) []string {
	missing := []string{}
	if f.Protocol != runner.Protocol {
		missing = append(missing, fmt.Sprintf("a baton speaking runner protocol %d (its baton %s speaks %d: install this baton's version there)", runner.Protocol, f.Version, f.Protocol))
	}
	if f.Git == "" {
		missing = append(missing, "git on its PATH")
	}
	for _, p := range programs {
		if f.Programs[p] == "" {
			missing = append(missing, fmt.Sprintf("the agent program %s on its PATH", p))
		}
	}
	if f.Sandbox == "" && r.Confined() {
		missing = append(missing, `a sandbox (Landlock, Linux 6.2 or later; "sandbox": "auto" for this runner runs its agents unconfined)`)
	}
	return missing
}

func writeRunnerCheck(w io.Writer, r RunnerCheck) {
	printf(w, "Runner:    %s (%s): reachable over ssh", r.Runner, r.SSH)
	printf(w, "Baton:     %s (runner protocol %d)", orNone(r.Version), r.Protocol)
	printf(w, "Git:       %s", orNone(r.Git))
	printf(w, "Sandbox:   %s", orNone(r.Sandbox))
	if r.Lineage == "" {
		printf(w, "Calls:     the agent's own told from those of the code it runs (exec supervision)")
	} else {
		printf(w, "Calls:     every process of the agent acts as the agent: %s", r.Lineage)
	}
	for p, at := range r.Programs {
		printf(w, "Agent:     %s at %s", p, orNone(at))
	}
	for _, m := range r.Missing {
		printf(w, "MISSING:   %s", m)
	}
	if len(r.Missing) == 0 {
		printf(w, "OK:        runner %s can run lanes", r.Runner)
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// configuredRunner is the runner name of the project's config.
func (a *App) configuredRunner(name string) (runner.Runner, error) {
	cfg, err := a.app.Config()
	if err != nil {
		return runner.Runner{}, err
	}
	r, ok := runner.Find(cfg.Runners, name)
	if !ok || !r.Remote() {
		var names []string
		for _, r := range cfg.Runners {
			if r.Remote() {
				names = append(names, r.Name)
			}
		}
		return runner.Runner{}, errs.New(errs.Usage, "runner %q: not a runner of the project's config (its runners: %s); add it to its \"runners\", as docs/runners.md shows", name, orNone(strings.Join(names, ", ")))
	}
	return r, nil
}

// runnerError gives a runner's failure its exit code.
func runnerError(err error) error {
	var ue *runner.UnreachableError
	var me *runner.MissingError
	switch {
	case errors.As(err, &ue):
		return errs.New(errs.Unreachable, "%v (check the destination, the port, your ssh configuration and your known_hosts: ssh must log in there with no prompt)", err)
	case errors.As(err, &me):
		return errs.New(errs.NotFound, "%v", err)
	}
	return errs.New(errs.Unexpected, "%v", err)
}

// runnerProject is the key of the project at top on every runner: its
// lanes' places there are beneath it.
func runnerProject(top string) string {
	host, _ := os.Hostname()
	sum := sha256.Sum256([]byte(host + "\x00" + filepath.Clean(top)))
	return hex.EncodeToString(sum[:8])
}

// runnerSide runs the runner's side of a remote lane: baton __runner
// probe|prepare|exec|remove|clean, each as the runner package says.
func runnerSide(args []string, env Env) int {
	home, err := os.UserHomeDir()
	if err == nil && len(args) == 0 {
		err = errors.New("a command: probe, prepare, exec, remove or clean")
	}
	if err == nil && args[0] == "exec" {
		return runnerExec(home, args[1:], env)
	}
	if err == nil {
		err = runnerCommand(home, args, env)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "baton %s: %v\n", runner.Hidden, err)
		return 1
	}
	return 0
}

// lineageMissing is why this machine cannot supervise an agent's execs
// ("": it can).
func lineageMissing() string {
	if err := lineage.Available(); err != nil {
		return err.Error()
	}
	return ""
}

func runnerCommand(home string, args []string, env Env) error {
	switch cmd, rest := args[0], args[1:]; {
	case cmd == "probe":
		return json.NewEncoder(env.Stdout).Encode(runner.Probe(version(), lineageMissing(), rest))
	case cmd == "prepare" && len(rest) == 4:
		session, err := strconv.Atoi(rest[1])
		if err != nil {
			return err
		}
		self, err := selfPath()
		if err != nil {
			return err
		}
		p, err := runner.Prepare(home, version(), self, lineageMissing(), rest[0], session, rest[2], rest[3])
		if err != nil {
			return err
		}
		return json.NewEncoder(env.Stdout).Encode(p)
	case cmd == "remove" && len(rest) == 1:
		return runner.Remove(home, rest[0])
	case cmd == "clean" && len(rest) == 1:
		return runner.Clean(home, rest[0])
	}
	return fmt.Errorf("%q: not a runner command with those arguments (the launcher's ssh runs them)", strings.Join(args, " "))
}
