package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/sandbox"
)

// baton run --sandbox: every agent runs in a private clone of the project,
// confined by Landlock (see the sandbox package and docs/security.md), and
// reaches the state only through the launcher's broker (sandboxbroker.go).
// The working copy and the policy are the application's (app/sandbox.go);
// this front end starts the helper and serves the broker.

// sandboxExecCmd is the hidden first argument of the helper that confines
// itself and becomes the agent: baton __sandbox-exec POLICY -- ARGV...
const sandboxExecCmd = "__sandbox-exec"

// sandboxExit is the exit status of a helper that could not confine itself:
// nothing of the agent ran.
const sandboxExit = 125

// sandboxConf is how a run confines its agents.
type sandboxConf struct {
	noNet bool
}

// prepareSandbox decides whether the run confines its agents: with mode on
// and no mechanism it refuses before anything is opened (exit 4); with
// auto it warns, on stderr and in the log, and runs them unconfined.
func (a *App) prepareSandbox(ctx context.Context, o runOpts, agents bool) error {
	mode, err := a.app.SandboxMode(o.Sandbox)
	if err != nil {
		return err
	}
	if mode == app.SandboxOff {
		return a.app.NoteSandbox("")
	}
	if o.SandboxNet != "on" && o.SandboxNet != "off" {
		return errs.New(errs.Usage, "--sandbox-net: %q is neither on nor off", o.SandboxNet)
	}
	if !agents {
		if o.Sandbox != "" {
			return errs.New(errs.Usage, "--sandbox confines the agents baton runs: give --agent or --agent-cmd (through the bridge, the host runs them)")
		}
		a.notice("[baton run] the agents run through the bridge: the project's sandbox setting applies to the agents baton runs itself")
		return nil
	}
	if a.app.SandboxABI() == 0 {
		why := "this system offers no Landlock (Linux 6.2 or later)"
		if a.env.Getenv(app.EnvNoSandbox) != "" {
			why = app.EnvNoSandbox + " is set in your environment"
		}
		if mode == app.SandboxOn {
			return errs.New(errs.NotFound, "--sandbox: no OS sandbox is available (%s); nothing was opened. Run with --sandbox=auto to go on unconfined, or without --sandbox", why)
		}
		msg := fmt.Sprintf("the agents of this run are NOT sandboxed: %s; baton's own checks still apply", why)
		a.warn("%s", msg)
		if err := a.app.NoteSandbox(why); err != nil {
			return err
		}
		return a.app.LogRunNote(ctx, "sandbox unavailable: "+msg)
	}
	a.box = &sandboxConf{noNet: o.SandboxNet == "off"}
	return a.app.NoteSandbox("")
}

// confine turns cmd into its sandboxed form: the helper that confines
// itself with the policy and then becomes the agent's command, in the
// clone, without the session's credential, with the broker's socket.
func (a *App) confine(cmd *exec.Cmd, p *app.SandboxPlace, sock string) error {
	self, err := selfPath()
	if err != nil {
		return err
	}
	pj, err := json.Marshal(p.Policy)
	if err != nil {
		return err
	}
	cmd.Path = self
	cmd.Args = append([]string{self, sandboxExecCmd, string(pj), "--"}, cmd.Args...)
	return a.brokered(cmd, p, sock)
}

// brokered makes cmd an agent that works in its clone and reaches the
// state only through the broker at sock: no session credential, no state
// directory, the clone's temp directory.
func (a *App) brokered(cmd *exec.Cmd, p *app.SandboxPlace, sock string) error {
	cmd.Dir = p.Copy.Top(a.env.Cwd)
	if _, err := os.Stat(cmd.Dir); err != nil {
		cmd.Dir = p.Copy.Dir
	}
	env := make([]string, 0, len(cmd.Env)+2)
	for _, kv := range cmd.Env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "BATON_SESSION", "BATON_STATE_DIR", "AGENT_STATE_DIR", "BATON_BROKER", "TMPDIR":
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = append(env, "BATON_BROKER="+sock, "TMPDIR="+p.Tmp)
	// the agent's baton finds the broker even without the variable
	return os.WriteFile(filepath.Join(p.Copy.Dir, ".git", "baton-broker"), []byte(sock+"\n"), 0o644)
}

// sandboxExec is the helper: it confines this process with the policy and
// replaces it with the agent's command. It returns only on failure.
func sandboxExec(args []string, env Env) int {
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(env.Stderr, "baton: "+sandboxExecCmd+" is baton run's own helper: POLICY -- COMMAND...")
		return 2
	}
	var pol sandbox.Policy
	if err := json.Unmarshal([]byte(args[0]), &pol); err != nil {
		fmt.Fprintf(env.Stderr, "baton: the sandbox policy is not valid: %v\n", err)
		return sandboxExit
	}
	err := sandbox.Exec(pol, args[2:], os.Environ())
	fmt.Fprintf(env.Stderr, "baton: the agent could not be sandboxed, and was not started: %v\n", err)
	return sandboxExit
}
