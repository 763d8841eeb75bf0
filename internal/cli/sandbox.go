package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/broker"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/lineage"
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
	net    string // netModel, netOn or netOff
	preset string // the agent CLI preset ("" for --agent-cmd)
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
	if err := checkSandboxNet(o); err != nil {
		return err
	}
	if !agents {
		if o.Sandbox != "" {
			return errs.New(errs.Usage, "--sandbox confines the agents baton runs: give --agent or --agent-cmd (through the bridge, the host runs them)")
		}
		if a.app.SandboxConfigured() {
			a.notice("[baton run] the agents run through the bridge: the project's sandbox setting applies to the agents baton runs itself")
		}
		return nil
	}
	why := a.app.SandboxUnavailable()
	if why == "" && o.Prompts != "" {
		why = "the predecessor's prompts (--prompts) work in the project's own checkout and scripts, not in a clone"
	}
	if why != "" {
		if mode == app.SandboxOn {
			return errs.New(errs.NotFound, "--sandbox: the agents cannot be confined here (%s); nothing was opened. Run with --sandbox=auto or --sandbox=off to go on unconfined", why)
		}
		msg := fmt.Sprintf("the agents of this run are NOT sandboxed: %s; baton's own checks still apply", why)
		a.warn("%s", msg)
		if err := a.app.NoteSandbox(why); err != nil {
			return err
		}
		return a.app.LogRunNote(ctx, "sandbox unavailable: "+msg)
	}
	a.box = &sandboxConf{net: o.SandboxNet, preset: o.Agent}
	return a.app.NoteSandbox("")
}

// noPolicy stands for the policy of a helper that confines nothing: the
// agent of a run without --sandbox, still started under the supervision
// of its execs.
const noPolicy = "none"

// lineageFlag tells the helper to put the agent under the supervision of
// its execs (the lineage package) before it becomes the agent.
const lineageFlag = "--lineage"

// asHelper turns cmd into the helper that becomes cmd: confined by policy
// (noPolicy: not confined), and supervised when sock is the helper's end
// of the lineage channel (nil: not supervised).
func asHelper(cmd *exec.Cmd, policy string, sock *os.File) error {
	self, err := selfPath()
	if err != nil {
		return err
	}
	args := []string{self, sandboxExecCmd}
	if sock != nil {
		args = append(args, lineageFlag)
		cmd.ExtraFiles = []*os.File{sock} // descriptor 3
	}
	cmd.Path = self
	cmd.Args = append(append(args, policy, "--"), cmd.Args...)
	return nil
}

// confine turns cmd into its sandboxed form: the helper that confines
// itself with the policy and then becomes the agent's command, in the
// clone, with the broker's socket and no credential.
func (a *App) confine(cmd *exec.Cmd, p *app.SandboxPlace, sock string, lin *os.File) error {
	self, err := selfPath()
	if err != nil {
		return err
	}
	pol := p.Policy
	// the agent's PATH starts with this binary's directory (agentpath.go),
	// which may lie in the project the sandbox hides: this one file it
	// may read and run
	pol.ReadOnly = append(slices.Clip(pol.ReadOnly), self)
	pj, err := json.Marshal(pol)
	if err != nil {
		return err
	}
	if err := asHelper(cmd, string(pj), lin); err != nil {
		return err
	}
	return a.brokered(cmd, p, sock, true)
}

// brokered makes cmd an agent that works in its clone and reaches the
// state only through the broker at sock: no session credential, no state
// directory, the clone's temp directory (and, confined, its own home).
func (a *App) brokered(cmd *exec.Cmd, p *app.SandboxPlace, sock string, confined bool) error {
	cmd.Dir = p.Copy.Top(a.env.Cwd)
	if _, err := os.Stat(cmd.Dir); err != nil {
		cmd.Dir = p.Copy.Dir
	}
	for i, kv := range cmd.Env {
		if strings.HasPrefix(kv, usageFileEnv+"=") { // where the confined agent may write: its temp directory
			cmd.Env[i] = usageFileEnv + "=" + filepath.Join(p.Tmp, "baton-usage.json")
		}
	}
	cmd.Env = append(brokerEnviron(cmd.Env, sock), "TMPDIR="+p.Tmp)
	if confined {
		cmd.Env = append(sandbox.WithoutLoginSockets(cmd.Env), p.AgentEnv()...)
	}
	// the agent's baton finds the broker even without the variable
	return os.WriteFile(filepath.Join(p.Copy.Dir, ".git", "baton-broker"), []byte(sock+"\n"), 0o644)
}

// brokerEnviron is env without any binding, state directory or broker of
// its own, with the session's broker: all an agent gets of its session.
func brokerEnviron(env []string, sock string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "BATON_SESSION", "BATON_STATE_DIR", "AGENT_STATE_DIR", "BATON_BROKER", "BATON_ROLE", "BATON_HOST_TOKEN", "TMPDIR":
			continue
		}
		out = append(out, kv)
	}
	return append(out, broker.EnvSocket+"="+sock)
}

// sandboxExec is the helper: it puts this process under the supervision
// of its execs when told to, confines it with the policy, and replaces it
// with the agent's command. It returns only on failure.
func sandboxExec(args []string, env Env) int {
	supervised := len(args) > 0 && args[0] == lineageFlag
	if supervised {
		args = args[1:]
	}
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(env.Stderr, "baton: "+sandboxExecCmd+" is baton run's own helper: [--lineage] POLICY -- COMMAND...")
		return 2
	}
	var pol *sandbox.Policy
	if args[0] != noPolicy {
		pol = &sandbox.Policy{}
		if err := json.Unmarshal([]byte(args[0]), pol); err != nil {
			fmt.Fprintf(env.Stderr, "baton: the sandbox policy is not valid: %v\n", err)
			return sandboxExit
		}
	}
	// the egress forwarder starts before the supervision, which counts the
	// agent's execs only
	agentEnv, err := helperEgress(env)
	if err != nil {
		return sandboxExit
	}
	if supervised {
		if err := lineage.Install(os.NewFile(3, "lineage")); err != nil {
			fmt.Fprintf(env.Stderr, "baton: the agent could not be put under baton's supervision, and was not started: %v\n", err)
			return sandboxExit
		}
	} else {
		runtime.LockOSThread() // the capabilities below are this thread's, which execs the agent
	}
	if err := dropPtrace(); err != nil {
		fmt.Fprintf(env.Stderr, "baton: the agent was not started: %v\n", err)
		return sandboxExit
	}
	if pol != nil {
		err = sandbox.Exec(*pol, args[2:], agentEnv)
	} else {
		err = execArgv(args[2:], agentEnv)
	}
	fmt.Fprintf(env.Stderr, "baton: the agent could not be started: %v\n", err)
	return sandboxExit
}

// execArgv replaces this process with argv, found on PATH, in env.
func execArgv(argv, env []string) error {
	prog, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	return syscall.Exec(prog, argv, env)
}

// helperEgress starts the egress forwarder when the launcher asked for
// one (--sandbox-net=model) and returns the agent's environment.
func helperEgress(env Env) ([]string, error) {
	self, err := selfPath()
	if err == nil {
		var agentEnv []string
		if agentEnv, err = startEgress(self, os.Environ()); err == nil {
			return agentEnv, nil
		}
	}
	fmt.Fprintf(env.Stderr, "baton: the agent could not be sandboxed, and was not started: %v\n", err)
	return nil, err
}
