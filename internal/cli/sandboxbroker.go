package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/broker"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/workcopy"
)

// The broker: a sandboxed agent's baton parses its own command line and
// sends each operation it calls, typed (its name and JSON input), to the
// launcher's socket; the launcher runs it with the session's caller and
// answers with the typed result, which the agent's baton prints. Nothing
// the agent sends names a session, a role or a credential.

// agentBox is one sandboxed session: its clone, its broker, and what its
// agent tried that the broker refused.
type agentBox struct {
	a        *App // the launcher
	st       step
	copyReal string // the clone's top, links resolved
	place    *app.SandboxPlace
	srv      *broker.Server
	pid      atomic.Int64 // the agent's process (0 before it starts)

	callMu sync.Mutex // one call at a time, as from a terminal

	mu       sync.Mutex
	attempts []string
	more     int // attempts past maxAttempts: counted, not recorded one by one
}

// maxAttempts bounds the refusals of one session recorded one by one (an
// agent that floods its broker does not flood the log).
const maxAttempts = 20

// openBox makes session st's sandbox and serves its broker, and turns cmd
// into the confined agent.
func (a *App) openBox(ctx context.Context, cmd *exec.Cmd, st step) (*agentBox, error) {
	place, err := a.app.MakeSandbox(ctx, st.Session, st.Branch, a.box.noNet)
	if err != nil {
		return nil, err
	}
	b := &agentBox{a: a, st: st, place: place, copyReal: realPath(place.Copy.Dir)}
	sock := filepath.Join(place.SockDir, "sock")
	if b.srv, err = broker.Listen(sock, b, b.checkPeer); err != nil {
		place.Remove()
		return nil, err
	}
	if err := a.confine(cmd, place, sock); err != nil {
		b.srv.Close()
		place.Remove()
		return nil, err
	}
	go b.srv.Serve(ctx)
	return b, nil
}

// realPath resolves links where the path exists (a path that does not is
// kept, cleaned).
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// started tells the broker which process is the agent.
func (b *agentBox) started(pid int) {
	if b != nil {
		b.pid.Store(int64(pid))
	}
}

// close stops the broker, brings the session's branch back, removes the
// clone, and says what the agent tried (nil when nothing).
func (b *agentBox) close(ctx context.Context) *failureSignature {
	if b == nil {
		return nil
	}
	if pid := b.pid.Load(); pid > 0 {
		_ = syscall.Kill(-int(pid), syscall.SIGKILL) // what the agent left running in its group
	}
	b.srv.Close()
	if _, err := b.place.Copy.Import(ctx); err != nil {
		if errors.Is(err, workcopy.ErrNotFastForward) {
			b.attempt(ctx, fmt.Sprintf("rewrote its branch: %v", err))
		} else {
			b.a.notice("[baton run] session %d: its branch could not be brought back from its working copy: %v", b.st.Session, err)
		}
	}
	b.place.Remove()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.attempts) == 0 {
		return nil
	}
	msg := "the agent tried what its sandbox does not allow: " + strings.Join(b.attempts, "; ")
	if b.more > 0 {
		msg += fmt.Sprintf("; and %d more refused calls", b.more)
	}
	return &failureSignature{Code: "plan_invalid", Message: msg, StageID: b.st.Role, Severity: "error"}
}

// attempt records something the agent tried and the broker refused: in the
// run's report and in the audit log.
func (b *agentBox) attempt(ctx context.Context, what string) {
	b.mu.Lock()
	full := len(b.attempts) >= maxAttempts
	if full {
		b.more++
	} else {
		b.attempts = append(b.attempts, what)
	}
	b.mu.Unlock()
	if full {
		return
	}
	if err := b.a.app.LogBrokerRefusal(ctx, b.st.Session, b.st.Role, what); err != nil {
		b.a.warn("the refusal could not be written to the audit log: %v", err)
	}
}

// checkPeer accepts only the agent's own processes: the kernel names the
// caller, and it must descend from the agent the socket serves.
func (b *agentBox) checkPeer(p broker.Peer) error {
	if p.UID != os.Getuid() {
		return fmt.Errorf("process %d of user %d is not this run's", p.PID, p.UID)
	}
	if pid := b.pid.Load(); pid == 0 || !broker.Descends(p.PID, int(pid)) {
		return fmt.Errorf("process %d: %w", p.PID, broker.ErrNotDescendant)
	}
	return nil
}

// Refuse answers a connection or call the broker would not take.
func (b *agentBox) Refuse(p broker.Peer, why error) app.Reply {
	b.attempt(context.Background(), fmt.Sprintf("process %d: %v", p.PID, why))
	return app.ReplyOf(nil, errs.New(errs.Policy, "refused: %v — this call is not open to your session; %s", why, broker.OwnRole), nil)
}

// Handle runs one call as the session: the operation it names, if one the
// session may call, after bringing the agent's new commits on its branch
// into the main repository, so that the call's git checks see them.
func (b *agentBox) Handle(ctx context.Context, p broker.Peer, c app.Call) app.Reply {
	b.callMu.Lock()
	defer b.callMu.Unlock()
	cwd, err := b.checkCall(c)
	if err != nil {
		return b.Refuse(p, err)
	}
	if err := broker.Callable(c.Op); err != nil {
		return b.refused(ctx, p, err)
	}
	if err := broker.Overrides(c); err != nil {
		return b.refused(ctx, p, err)
	}
	if _, err := b.place.Copy.Import(ctx); err != nil {
		if errors.Is(err, workcopy.ErrNotFastForward) {
			b.attempt(ctx, fmt.Sprintf("rewrote its branch: %v", err))
			return app.ReplyOf(nil, errs.New(errs.Conflict, "%v: commits already on your branch stay as they are; add new commits on top of them", err), nil)
		}
		b.a.notice("[baton run] session %d: its branch could not be brought back from its working copy: %v", b.st.Session, err)
		return app.ReplyOf(nil, errs.New(errs.Unexpected, "your branch's commits could not be brought to the project; keep your work committed on your branch and try again"), nil)
	}
	env := app.Env{Stdin: bytes.NewReader(c.Stdin), Getenv: b.getenv, Cwd: b.place.Top, Now: b.a.env.Now, FileDir: cwd, Head: b.place.Copy.Head}
	x := app.New(env, &app.Options{StateDir: b.place.StateDir, Agents: b.a.g.Agents}, nil)
	return broker.Dispatch(ctx, x, app.Bound(b.st.Credential), c)
}

// refused answers a call the session may not make, and records that the
// agent tried it.
func (b *agentBox) refused(ctx context.Context, p broker.Peer, err error) app.Reply {
	b.attempt(ctx, fmt.Sprintf("process %d: %v", p.PID, err))
	return app.ReplyOf(nil, err, nil)
}

// checkCall refuses a call whose working directory is outside the agent's
// clone, or an argument that names a path outside it (the launcher reads
// with the person's rights): a file argument of its input, another state
// directory or file. It returns the directory relative file arguments are
// read from.
func (b *agentBox) checkCall(c app.Call) (string, error) {
	cwd := realPath(c.Cwd)
	if !filepath.IsAbs(c.Cwd) || !beneath(cwd, b.copyReal) {
		return "", fmt.Errorf("the working directory %q is outside your working copy", c.Cwd)
	}
	paths := []string{c.StateDir, c.File}
	if op, ok := app.Lookup(c.Op); ok && len(c.Input) > 0 {
		in := op.NewInput()
		if err := json.Unmarshal(c.Input, in); err == nil {
			paths = append(paths, app.FileArgs(in)...)
		}
	}
	for _, v := range paths {
		if pathArg(v) && !beneath(resolveExisting(v, cwd), b.copyReal) {
			return "", fmt.Errorf("the argument %q names a path outside your working copy", v)
		}
	}
	return cwd, nil
}

// pathArg says whether v may be read as a path: not empty, not stdin's
// "-", not inline JSON.
func pathArg(v string) bool {
	t := strings.TrimSpace(v)
	return t != "" && t != "-" && !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[")
}

// beneath says whether p is dir or lies beneath it.
func beneath(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// resolveExisting is where v (relative to cwd) leads: links resolved in
// the part that exists, and a dangling link followed to where it points.
func resolveExisting(v, cwd string) string {
	return resolveDepth(v, cwd, 0)
}

func resolveDepth(v, cwd string, depth int) string {
	p := v
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	p = filepath.Clean(p)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if target, err := os.Readlink(p); err == nil { // a link to nothing (yet)
			if depth > 40 {
				return "/" // a loop: leads nowhere the agent may name
			}
			return resolveDepth(filepath.Join(target, rest), filepath.Dir(p), depth+1)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// getenv is the environment of a brokered call: the launcher's, bound to
// the session, with nothing that points elsewhere.
func (b *agentBox) getenv(k string) string {
	switch k {
	case "BATON_SESSION":
		return b.st.Credential
	case "BATON_BROKER", "BATON_STATE_DIR", "AGENT_STATE_DIR", "BATON_ROLE", "BATON_HOST_TOKEN", app.EnvNoSandbox:
		return ""
	}
	return b.a.env.Getenv(k)
}

// agentSide runs the calls of a sandboxed agent's baton: the helper that
// confines the agent, and every other call with its operations sent to
// the broker. ok is false for a call that runs here as usual.
func agentSide(args []string, env Env) (code int, ok bool) {
	if len(args) > 0 && args[0] == sandboxExecCmd {
		return sandboxExec(args[1:], env), true
	}
	sock := brokerSocket(env)
	if sock == "" {
		return 0, false
	}
	a := newApp(env)
	a.app.UseRemote(brokerClient(sock))
	a.guard = a.brokerGuard
	a.trapSignals = true
	return execute(context.Background(), a, args), true
}

// brokerClient sends a sandboxed agent's calls to the broker at its path.
type brokerClient string

// Do sends the call and waits for the broker's answer.
func (sock brokerClient) Do(_ context.Context, c app.Call) (app.Reply, error) {
	r, err := broker.Call(string(sock), c)
	if err != nil {
		return r, errs.New(errs.Unexpected, "the run's broker at %s did not answer (%v): the run that started this agent may have ended", string(sock), err)
	}
	return r, nil
}

// localCommands need no state: a sandboxed agent's baton runs them itself
// (the demo's scripted agent sends its own calls on).
var localCommands = map[string]bool{"help": true, "man": true, "schema": true, "completion": true, "demo agent": true,
	cobra.ShellCompRequestCmd: true, cobra.ShellCompNoDescRequestCmd: true}

// brokerGuard asks the broker about a command that runs no operation of
// its own — one no operation serves (run, init, key, ...), or one given
// what no session's call gets (--as, --reason, another state directory or
// file) — so that the broker refuses it and records the attempt. The
// operations of every other command go to the broker as they run.
func (a *App) brokerGuard(c *cobra.Command) error {
	path := strings.Fields(c.CommandPath())[1:]
	op := ""
	if len(path) > 0 && !localCommands[path[0]] && !localCommands[strings.Join(path, " ")] && !served(path[0]) {
		op = strings.Join(path, ".")
	}
	if op == "" && a.g.As == "" && a.g.Reason == "" && a.g.StateDir == "" && a.g.File == "" {
		return nil
	}
	return a.app.Probe(c.Context(), a.caller(), op)
}

// served says whether operations serve the commands of group: an
// operation is named group, or group.something.
func served(group string) bool {
	for _, o := range app.Operations() {
		if n := o.Info().Name; n == group || strings.HasPrefix(n, group+".") {
			return true
		}
	}
	return false
}

// brokerSocket is the broker a sandboxed agent's baton sends its calls to:
// $BATON_BROKER, else the one its working copy names (.git/baton-broker).
func brokerSocket(env Env) string {
	if s := env.Getenv(broker.EnvSocket); s != "" {
		return s
	}
	for dir := env.Cwd; dir != ""; {
		if b, err := os.ReadFile(filepath.Join(dir, ".git", "baton-broker")); err == nil {
			return strings.TrimSpace(string(b))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return ""
}

// sandboxed makes session st's sandbox when the run confines its agents
// (nil otherwise), turning cmd into the confined agent.
func (a *App) sandboxed(ctx context.Context, cmd *exec.Cmd, st step) (*agentBox, error) {
	if a.box == nil {
		return nil, nil
	}
	return a.openBox(ctx, cmd, st)
}

// stopOnAttempts stops the run for a person when the session's agent tried
// what its sandbox's broker refused: the failure signature names it.
func (a *App) stopOnAttempts(st step, failure *failureSignature) error {
	if a.tried == nil {
		return nil
	}
	a.tried = nil
	sig := failureSignature{Code: "sandbox_violation", Message: fmt.Sprintf("in session %d (%s), %s", st.Session, st.Role, failure.Message), StageID: st.Role, Severity: "error"}
	b, _ := json.Marshal(sig)
	a.notice("[baton run] STOPPED: failure signature %s", b)
	return errs.New(errs.Policy, "the run is STOPPED for a person: %s (see 'baton log')", sig.Message)
}
