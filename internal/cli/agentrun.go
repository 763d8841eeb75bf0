package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/baton-cli/baton/internal/agentcli"
	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
)

// checkAgentOpts checks --agent and --agent-cmd, and that the agent's
// program exists, before anything is opened or recorded.
func (a *App) checkAgentOpts(o runOpts) error {
	if o.Agent != "" && o.AgentCmd != "" {
		return errs.New(errs.Usage, "--agent and --agent-cmd: give one (--agent names a preset, --agent-cmd any other command)")
	}
	if o.Follow && o.Agent == "" && o.AgentCmd == "" {
		return errs.New(errs.Usage, "--follow streams the output of an agent baton runs: give --agent or --agent-cmd")
	}
	if o.Agent == "" && o.AgentCmd == "" {
		return nil
	}
	prog := shellProgram(o.AgentCmd)
	if o.Agent != "" {
		argv, err := agentcli.Command(o.Agent, agentcli.Options{})
		if err != nil {
			return errs.New(errs.Usage, "--agent: %v", err)
		}
		prog = argv[0]
	}
	if prog == "" {
		return nil
	}
	if _, err := exec.LookPath(prog); err != nil {
		fix := "install it or correct --agent-cmd"
		if o.Agent != "" {
			fix = "install it (or put it on PATH), or run another agent CLI with --agent-cmd"
		}
		return errs.New(errs.NotFound, "the agent command %q is not found on PATH: %s; no session was opened", prog, fix)
	}
	return nil
}

// shellBuiltins are first words of a shell command that name no program.
var shellBuiltins = map[string]bool{
	"exit": true, "true": true, "false": true, "cd": true, "echo": true, "printf": true, "test": true, "[": true,
	":": true, ".": true, "eval": true, "exec": true, "set": true, "export": true, "if": true, "for": true,
	"while": true, "until": true, "case": true, "{": true, "(": true, "!": true, "read": true, "command": true,
}

// shellProgram is the program a shell command line starts, when it plainly
// names one: its first word, unless that is a shell builtin, keyword or
// variable assignment (then "": nothing to check).
func shellProgram(cmdline string) string {
	f := strings.Fields(cmdline)
	if len(f) == 0 {
		return ""
	}
	w := strings.Trim(f[0], `'"`)
	if shellBuiltins[w] || strings.Contains(w, "=") || strings.ContainsAny(w, "$`;|&<>(){}") {
		return ""
	}
	return w
}

// execSimple makes a simple command line (one program and its arguments,
// no operator, redirection or substitution) replace the shell that runs it,
// so that the program it names is the agent's own program: a script given
// as --agent-cmd is then the agent, and its baton calls are the agent's.
func execSimple(cmdline string) string {
	if shellProgram(cmdline) == "" || strings.ContainsAny(cmdline, ";&|<>()`$\n\\") && !simpleVars(cmdline) {
		return cmdline
	}
	return "exec " + cmdline
}

// simpleVars says whether the only shell syntax of cmdline is plain
// variable expansions ($NAME, ${NAME}) in its words.
func simpleVars(cmdline string) bool {
	rest := strings.NewReplacer("${", "", "}", "", "$", "").Replace(cmdline)
	return !strings.ContainsAny(rest, ";&|<>()`\n\\")
}

// agentCommand is the process that runs st's agent: the preset's command
// line with the role's model and baton's MCP server, or --agent-cmd
// through sh.
func (a *App) agentCommand(ctx context.Context, o runOpts, st step, server *agentcli.MCP, shell string) *exec.Cmd {
	if o.Agent == "" {
		return exec.CommandContext(ctx, "sh", "-c", execSimple(o.AgentCmd))
	}
	preset := o.Agent
	if o.Prompts != "" && preset == "claude" { // as the predecessor ran Claude Code
		preset = agentcli.Predecessor
	}
	argv, env := a.presetCommand(preset, st, server, a.box != nil, shell)
	if preset == "codex" {
		if p, err := exec.LookPath(argv[0]); err == nil {
			if bin, extra, ok := nativeCodex(p); ok {
				argv[0], env = bin, append(env, extra...)
			}
		}
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	return cmd
}

// presetCommand is the command line of preset for st's role, and what its
// CLI needs in its environment; sandboxed says the agent runs confined,
// shell is its agent shell (agentshell.go; "" for none).
func (a *App) presetCommand(preset string, st step, server *agentcli.MCP, sandboxed bool, shell string) (argv, env []string) {
	opts := a.app.AgentOptions(st.Role)
	opts.MCP, opts.Shell = server, shell
	if sandboxed {
		opts.WritableDirs = nil // the agent's clone is its working directory, and all it writes
		opts.Sandboxed = true
	}
	argv, _ = agentcli.Command(preset, opts)
	return argv, agentcli.Env(preset, opts)
}

// agentProcess is st's agent process, started by the helper with the
// prompt on its stdin and the address of the session's broker (box) in its
// environment, never a credential; and the cleanup of what was written
// for it (the MCP configuration). command is the agent's command line,
// for its log.
func (a *App) agentProcess(ctx context.Context, o runOpts, st step, box *agentBox) (cmd *exec.Cmd, command string, cleanup func(), err error) {
	if box.remote != nil {
		cmd, command = a.remoteProcess(ctx, o, st, box)
		return cmd, command, func() {}, nil
	}
	base := ""
	if box.place != nil {
		base = box.place.Tmp // the sandboxed agent's CLI reads it there
	}
	server, cleanup, err := agentMCP(o.Agent, box.sock, base, box.stateDir, a.env.Cwd)
	if err != nil {
		return nil, "", cleanup, err
	}
	shell := ""
	if a.box != nil && o.Agent == "claude" && o.Prompts == "" {
		if shell, err = agentShellLink(box.place.SockDir); err != nil {
			cleanup()
			return nil, "", func() {}, err
		}
	}
	cmd = a.agentCommand(ctx, o, st, server, shell)
	cmd.Dir = a.env.Cwd
	cmd.Stdin = strings.NewReader(st.Prompt)
	cmd.Env = append(withSelfOnPath(agentEnviron(os.Environ()), agentBaton()), cmd.Env...)
	if o.Prompts != "" {
		cmd.Env = append(cmd.Env, a.predecessorEnv()...)
	}
	command = strings.Join(cmd.Args, " ")
	usageDone := a.offerUsageFile(cmd)
	if err := box.wrap(cmd); err != nil {
		cleanup()
		usageDone()
		return nil, "", func() {}, err
	}
	mcpDone := cleanup
	return cmd, command, func() { mcpDone(); usageDone() }, nil
}

// superviseAgents says whether the run tells its agents' own baton calls
// from those of the code they run. The predecessor's prompts call baton
// through its Python scripts, a program between the agent and baton, so
// a run of them serves every process of the agent as the agent, and says
// so once.
func (a *App) superviseAgents(o runOpts) bool {
	if o.Prompts == "" {
		return true
	}
	predecessorWarning.Do(func() {
		a.warn("the predecessor's prompts call baton through their scripts: code the agents run cannot be told from their own calls, and acts for their sessions (docs/security.md, Project code)")
	})
	return false
}

// predecessorWarning says once per run that a run of the predecessor's
// prompts does not supervise its agents' execs.
var predecessorWarning sync.Once

// agentOutput collects an agent's output for its log, keeps its latest
// line for the progress line, and with --follow streams it to stderr.
type agentOutput struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	partial []byte
	latest  string
	preset  string
	follow  io.Writer
	onWrite func() // told of every write (the stall watch)
}

func (w *agentOutput) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.onWrite != nil {
		w.onWrite()
	}
	w.buf.Write(p)
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		line := string(w.partial[:i])
		w.partial = w.partial[i+1:]
		if shown := agentcli.Latest(w.preset, line); shown != "" {
			w.latest = shown
			if w.follow != nil {
				fmt.Fprintf(w.follow, "  | %s\n", shown)
			}
		}
	}
	return len(p), nil
}

// Latest is the last line worth showing.
func (w *agentOutput) Latest() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.latest
}

// Bytes is everything the agent wrote.
func (w *agentOutput) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]byte(nil), w.buf.Bytes()...)
}

func (a *App) newAgentOutput(o runOpts) *agentOutput {
	w := &agentOutput{preset: o.Agent}
	if o.Follow {
		w.follow = a.env.Stderr
	}
	return w
}

// logSession saves what a session was given and what its agent did in
// .baton/logs/session-N.log: the command, the prompt, the output, and how
// the agent exited.
func (a *App) logSession(st step, command string, out []byte, exit string) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "=== baton session %d: %s %s on %s\n=== command: %s\n=== prompt\n%s\n=== output\n", st.Session, st.Role, app.OrDash(st.Feature), app.OrDash(st.Branch), command, strings.TrimRight(st.Prompt, "\n"))
	b.Write(out)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "=== exit: %s\n", exit)
	a.app.WriteSessionLog(st.Session, b.Bytes())
}

// exitText says how an agent process ended.
func exitText(err error) string {
	if err == nil {
		return "0"
	}
	return err.Error()
}

// maxProgressText is how much of the agent's latest line the progress
// line shows.
const maxProgressText = 80

// progressText is the progress line: who, how long, and the agent's latest
// output, cut short and with control characters (which could move the
// cursor or recolour the terminal) replaced.
func progressText(label string, took time.Duration, latest string) string {
	latest = strings.Map(func(r rune) rune {
		if jsondoc.UnsafeRune(r) {
			return '?'
		}
		return r
	}, latest)
	if r := []rune(latest); len(r) > maxProgressText {
		latest = string(r[:maxProgressText-1]) + "…"
	}
	if latest == "" {
		return fmt.Sprintf("%s — %s", label, took)
	}
	return fmt.Sprintf("%s — %s — %s", label, took, latest)
}

// progress is what the progress line reads: nil with --follow, which
// streams the output instead.
func (w *agentOutput) progress() func() string {
	if w.follow != nil {
		return nil
	}
	return w.Latest
}

// logBridgeAnswer adds the bridge's answer to the session's log, written
// with the prompt when the request was made: the agent's output and how
// it ended.
func (a *App) logBridgeAnswer(st step, out string, answerErr error) {
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	a.app.AppendSessionLog(st.Session, fmt.Sprintf("=== answer through the bridge\n%s=== exit: %s\n", out, exitText(answerErr)))
}
