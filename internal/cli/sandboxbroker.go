package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
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
	"github.com/baton-cli/baton/internal/egress"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/lineage"
	"github.com/baton-cli/baton/internal/runner"
	"github.com/baton-cli/baton/internal/workcopy"
)

// The broker: an agent's baton, sandboxed or not, parses its own command
// line and sends each operation it calls, typed (its name and JSON input),
// to the launcher's socket; the launcher runs it with the session's caller
// and answers with the typed result, which the agent's baton prints.
// Nothing the agent sends names a session, a role or a credential: the
// credential stays in the launcher's memory. Where the kernel allows
// (the lineage package) the broker acts for the session only on the
// agent's own calls; a call of code the agent ran (a test, make, a hook)
// acts for no session: it may read, and records nothing.

// agentBox is one session's broker, and its sandbox when the run confines
// its agents (place nil: the agent works in the project's checkout).
type agentBox struct {
	a        *App // the launcher
	st       step
	copyReal string // the clone's top, links resolved ("" unconfined)
	place    *app.SandboxPlace
	sock     string // the broker's socket
	sockDir  string // removed at close, unconfined
	stateDir string // the project's state directory, unconfined
	srv      *broker.Server
	proxy    *egress.Proxy   // the egress proxy under --sandbox-net=model (nil otherwise)
	ctx      context.Context // the session's, for what the proxy logs
	pid      atomic.Int64    // the agent's process (0 before it starts)

	// lin is the launcher's end of the lineage channel, until the agent
	// starts; tree is the supervision of the agent's execs (nil where the
	// system cannot supervise them: every process of the agent's tree is
	// then served as the agent).
	lin, linHelper *os.File
	tree           *lineage.Tree

	callMu sync.Mutex // one call at a time, as from a terminal

	// remote is the lane's clone on a runner (nil: the agent runs here);
	// lost says the runner was lost while the agent ran. relay is the
	// token every call from the runner's relay carries, and relaySupervise
	// asks the relay to tell the agent's own calls from code it runs.
	remote         *runner.Lane
	lost           atomic.Bool
	relay          string
	relaySupervise bool

	mu       sync.Mutex
	attempts []string
	more     int // attempts past maxAttempts: counted, not recorded one by one
}

// maxAttempts bounds the refusals of one session recorded one by one (an
// agent that floods its broker does not flood the log).
const maxAttempts = 20

// openBox serves session st's broker, in its sandbox when the run
// confines its agents, in a working copy of its own when it does or clone
// says so (a lane's); supervise says whether the agent's own calls are to
// be told from those of the code it runs; remote, that the agent runs on
// a runner, whose relay carries its calls to the socket (runnerrelay.go).
func (a *App) openBox(ctx context.Context, st step, supervise, clone, remote bool) (*agentBox, error) {
	b := &agentBox{a: a, st: st, ctx: ctx}
	if a.box != nil || clone {
		place, err := a.app.MakeSandbox(ctx, st.Session, st.Branch, a.box != nil && a.box.net == netOff)
		if err != nil {
			return nil, err
		}
		b.place, b.copyReal = place, realPath(place.Copy.Dir)
		b.sock = filepath.Join(place.SockDir, "sock")
	} else {
		dir, _, err := a.app.StateDirs()
		if err != nil {
			return nil, err
		}
		b.stateDir = dir
		if b.sockDir, err = os.MkdirTemp(privateBase(dir, a.env.Cwd), "baton-broker-"); err != nil {
			return nil, errs.New(errs.Unexpected, "creating the session's broker socket: %v", err)
		}
		b.sock = filepath.Join(b.sockDir, "sock")
	}
	var err error
	if b.srv, err = broker.Listen(b.sock, b, b.checkPeer); err != nil {
		b.remove()
		return nil, err
	}
	if remote {
		b.relay, b.relaySupervise = newToken(), supervise
		b.srv.RequireRelay(b.relay)
	} else if supervise && a.lineageOK() {
		if b.lin, b.linHelper, err = lineage.Pair(); err != nil {
			b.srv.Close()
			b.remove()
			return nil, err
		}
	}
	go b.srv.Serve(ctx)
	return b, nil
}

// wrap turns cmd into the session's agent: started by the helper (under
// the supervision of its execs where the system allows, confined when the
// run confines its agents), with the broker's address and no credential.
func (b *agentBox) wrap(cmd *exec.Cmd) error {
	if b.place != nil && b.a.box == nil { // a lane's working copy, not confined
		if err := asHelper(cmd, noPolicy, b.linHelper); err != nil {
			return err
		}
		return b.a.brokered(cmd, b.place, b.sock, false)
	}
	if b.place != nil {
		if err := b.a.confine(cmd, b.place, b.sock, b.linHelper); err != nil {
			return err
		}
		if b.a.box.net == netModel {
			return b.openEgress(b.ctx, cmd, b.a.box.preset)
		}
		return nil
	}
	if err := asHelper(cmd, noPolicy, b.linHelper); err != nil {
		return err
	}
	cmd.Env = brokerEnviron(cmd.Env, b.sock)
	return nil
}

// remove deletes what the box made: its sandbox, or its socket's directory.
func (b *agentBox) remove() {
	if b.place != nil {
		b.place.Remove()
	}
	if b.sockDir != "" {
		_ = os.RemoveAll(b.sockDir)
	}
}

// lineageOK says whether this run can tell an agent's own calls from the
// code it runs; the first time it cannot, it says so, on stderr and in
// the log.
func (a *App) lineageOK() bool {
	err := lineage.Available()
	if err == nil {
		return true
	}
	lineageWarning.Do(func() {
		msg := fmt.Sprintf("this system cannot tell an agent's own baton calls from those of the code it runs (%v): the broker serves every process the agent starts as the agent", err)
		a.warn("%s", msg)
		_ = a.app.LogRunNote(context.Background(), "lineage unavailable: "+msg)
	})
	return false
}

// lineageWarning says once per run that the agents' execs are not
// supervised.
var lineageWarning sync.Once

// realPath resolves links where the path exists (a path that does not is
// kept, cleaned).
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// started tells the broker which process is the agent, and supervises
// its execs; a supervision that cannot start kills the agent.
func (b *agentBox) started(ctx context.Context, pid int) error {
	b.pid.Store(int64(pid))
	if b.linHelper != nil {
		b.linHelper.Close()
		b.linHelper = nil
	}
	if b.lin == nil {
		return nil
	}
	t, err := lineage.Supervise(ctx, b.lin, pid)
	b.lin = nil
	if err != nil {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		return err
	}
	b.tree = t
	return nil
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
	if b.proxy != nil {
		_ = b.proxy.Close()
	}
	if b.tree != nil {
		b.tree.Close()
	}
	for _, f := range []*os.File{b.lin, b.linHelper} {
		if f != nil {
			f.Close()
		}
	}
	if err := b.fetchRemote(ctx); err != nil {
		b.a.notice("[baton run] session %d: its branch could not be fetched from runner %s: %v", b.st.Session, b.remote.Runner.Name, err)
	}
	if b.remote != nil && !b.lost.Load() {
		b.remote.Remove(ctx)
	}
	if b.place != nil {
		if _, err := b.place.Copy.Import(ctx); err != nil {
			if errors.Is(err, workcopy.ErrNotFastForward) {
				b.attempt(ctx, fmt.Sprintf("rewrote its branch: %v", err))
			} else {
				b.a.notice("[baton run] session %d: its branch could not be brought back from its working copy: %v", b.st.Session, err)
			}
		}
	}
	b.remove()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.attempts) == 0 {
		return nil
	}
	what := "broker"
	if b.place != nil {
		what = "sandbox"
	}
	msg := "the agent tried what its " + what + " does not allow: " + strings.Join(b.attempts, "; ")
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

// checkPeer accepts only processes of this run's user; which of them may
// act for the session is the caller's kind (kindOf).
func (b *agentBox) checkPeer(p broker.Peer) error {
	if p.UID != os.Getuid() {
		return fmt.Errorf("process %d of user %d is not this run's", p.PID, p.UID)
	}
	return nil
}

// kindOf says what the calling process is to the session: the agent's own
// call, one of code the agent ran, or a process outside the agent. Where
// its execs are not supervised, every process of the agent's tree is the
// agent.
func (b *agentBox) kindOf(p broker.Peer) lineage.Verdict {
	if r := p.Relayed; b.remote != nil {
		switch {
		case r == nil:
			return lineage.Verdict{Kind: lineage.Outside, Reason: broker.ErrNotRelayed.Error()}
		case r.Kind == broker.RelayAgent:
			return lineage.Verdict{Kind: lineage.Agent}
		case r.Kind == broker.RelayRan:
			return lineage.Verdict{Kind: lineage.Ran, Reason: r.Reason}
		}
		return lineage.Verdict{Kind: lineage.Outside, Reason: r.Reason}
	}
	if b.tree != nil {
		if p.Conn == nil {
			return lineage.Verdict{Kind: lineage.Outside, Reason: "the call has no connection to ask the kernel about"}
		}
		return b.tree.ClassifyConn(p.Conn)
	}
	if pid := b.pid.Load(); pid == 0 || !broker.Descends(p.PID, int(pid)) {
		return lineage.Verdict{Kind: lineage.Outside, Reason: broker.ErrNotDescendant.Error()}
	}
	return lineage.Verdict{Kind: lineage.Agent}
}

// who names the calling process for the log: on the runner, the process
// the relay saw.
func (b *agentBox) who(p broker.Peer) string {
	if p.Relayed != nil && b.remote != nil {
		return fmt.Sprintf("process %d on runner %s", p.Relayed.PID, b.remote.Runner.Name)
	}
	if b.remote != nil {
		return "a process on runner " + b.remote.Runner.Name
	}
	return fmt.Sprintf("process %d", p.PID)
}

// supervised says whether the broker tells the agent's own calls from
// those of the code it runs: here, or through the runner's relay.
func (b *agentBox) supervised() bool {
	if b.remote != nil {
		return b.relaySupervise && b.remote.Place.Lineage == ""
	}
	return b.linHelper != nil
}

// Refuse answers a connection or call the broker would not take.
func (b *agentBox) Refuse(p broker.Peer, why error) app.Reply {
	b.attempt(context.Background(), fmt.Sprintf("%s: %v", b.who(p), why))
	return app.ReplyOf(nil, errs.New(errs.Policy, "refused: %v — this call is not open to your session; %s", why, broker.OwnRole), nil)
}

// Handle runs one call: as the session when it is the agent's own, as no
// session when it comes from code the agent ran. In a sandbox the agent's
// new commits on its branch are first brought into the main repository,
// so that the call's git checks see them.
func (b *agentBox) Handle(ctx context.Context, p broker.Peer, c app.Call) app.Reply {
	if r := p.Relayed; r != nil && r.Kind == broker.RelayEgress {
		b.egressRefused(ctx, egress.Refusal{Host: r.Host, Method: r.Method})
		return app.ReplyOf(nil, nil, nil)
	}
	b.callMu.Lock()
	defer b.callMu.Unlock()
	v := b.kindOf(p)
	if v.Kind == lineage.Outside {
		return b.Refuse(p, errors.New(v.Reason))
	}
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
	if err := b.fetchRemote(ctx); err != nil {
		b.a.notice("[baton run] session %d: its branch could not be fetched from runner %s: %v", b.st.Session, b.remote.Runner.Name, err)
		return app.ReplyOf(nil, errs.New(errs.Unexpected, "your branch's commits could not be brought to the project; keep your work committed on your branch and try again"), nil)
	}
	if b.place != nil {
		if _, err := b.place.Copy.Import(ctx); err != nil {
			if errors.Is(err, workcopy.ErrNotFastForward) {
				b.attempt(ctx, fmt.Sprintf("rewrote its branch: %v", err))
				return app.ReplyOf(nil, errs.New(errs.Conflict, "%v: commits already on your branch stay as they are; add new commits on top of them", err), nil)
			}
			b.a.notice("[baton run] session %d: its branch could not be brought back from its working copy: %v", b.st.Session, err)
			return app.ReplyOf(nil, errs.New(errs.Unexpected, "your branch's commits could not be brought to the project; keep your work committed on your branch and try again"), nil)
		}
	}
	if v.Kind == lineage.Ran {
		return b.handleRan(ctx, p, c, cwd, v)
	}
	return broker.Dispatch(ctx, b.callApp(c, cwd, b.st.Credential), app.Bound(b.st.Credential), c)
}

// refused answers a call the session may not make, and records that the
// agent tried it.
func (b *agentBox) refused(ctx context.Context, p broker.Peer, err error) app.Reply {
	b.attempt(ctx, fmt.Sprintf("%s: %v", b.who(p), err))
	return app.ReplyOf(nil, err, nil)
}

// handleRan runs a call of code the agent ran as no session: a read is
// answered, anything it would record is refused by the operation itself
// (no session binds the call), and the refusal goes to the audit log.
func (b *agentBox) handleRan(ctx context.Context, p broker.Peer, c app.Call, cwd string, v lineage.Verdict) app.Reply {
	r := broker.Dispatch(ctx, b.callApp(c, cwd, ""), app.Caller{}, c)
	note := app.Note{Warning: true, Text: fmt.Sprintf("this call comes from a program the agent ran, not from the agent itself (%s): it acts for no session, so it may read and records nothing; an agent CLI records its work with baton's MCP tools", v.Reason)}
	r.Notes = append([]app.Note{note}, r.Notes...)
	if r.Error != nil {
		if err := b.a.app.LogBrokerRefusal(ctx, b.st.Session, b.st.Role, fmt.Sprintf("%s, code the agent ran (%s), called %s: %s", b.who(p), v.Reason, c.Op, r.Error.Message)); err != nil {
			b.a.warn("the refusal could not be written to the audit log: %v", err)
		}
	}
	return r
}

// callApp is the application a call runs in: the project's state, the
// call's working directory (in a sandbox, its clone's), and cred as the
// session's credential in its environment ("" for none).
func (b *agentBox) callApp(c app.Call, cwd, cred string) *app.App {
	getenv := func(k string) string {
		if k == "BATON_SESSION" {
			return cred
		}
		return b.getenv(k)
	}
	env := app.Env{Stdin: bytes.NewReader(c.Stdin), Getenv: getenv, Now: b.a.env.Now, FileDir: cwd}
	if b.place == nil {
		env.Cwd = cwd
		return app.New(env, &app.Options{StateDir: b.stateDir, Agents: b.a.g.Agents}, nil)
	}
	env.Cwd, env.Head = b.place.Top, b.place.Copy.Head
	return app.New(env, &app.Options{StateDir: b.place.StateDir, Agents: b.a.g.Agents}, nil)
}

// checkCall refuses a call whose working directory is outside the agent's
// clone, or an argument that names a path outside it (the launcher reads
// with the person's rights): a file argument of its input, another state
// directory or file. It returns the directory relative file arguments are
// read from.
func (b *agentBox) checkCall(c app.Call) (string, error) {
	cwd := realPath(c.Cwd)
	if !filepath.IsAbs(c.Cwd) {
		return "", fmt.Errorf("the working directory %q is not an absolute path", c.Cwd)
	}
	if b.copyReal == "" {
		return cwd, nil // unconfined, the agent reads what the launcher can
	}
	paths := []string{c.StateDir, c.File}
	if op, ok := app.Lookup(c.Op); ok && len(c.Input) > 0 {
		in := op.NewInput()
		if err := json.Unmarshal(c.Input, in); err == nil {
			paths = append(paths, app.FileArgs(in)...)
		}
	}
	if b.remote != nil {
		return b.remoteCall(c, paths)
	}
	if !beneath(cwd, b.copyReal) {
		return "", fmt.Errorf("the working directory %q is outside your working copy", c.Cwd)
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
	case "BATON_SESSION", "BATON_BROKER", "BATON_STATE_DIR", "AGENT_STATE_DIR", "BATON_ROLE", "BATON_HOST_TOKEN", app.EnvNoSandbox:
		return ""
	}
	return b.a.env.Getenv(k)
}

// agentSide runs the calls of a sandboxed agent's baton: the helper that
// confines the agent, and every other call with its operations sent to
// the broker. ok is false for a call that runs here as usual.
func agentSide(args []string, env Env) (code int, ok bool) {
	if isAgentShell() {
		return agentShell(args, env), true
	}
	if len(args) > 0 && args[0] == sandboxExecCmd {
		return sandboxExec(args[1:], env), true
	}
	if len(args) > 0 && args[0] == egressForwardCmd {
		return egressForward(args[1:], env), true
	}
	if len(args) > 0 && args[0] == runner.Hidden {
		return runnerSide(args[1:], env), true
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
var localCommands = map[string]bool{"help": true, "mcp": true, "man": true, "schema": true, "completion": true, "demo agent": true,
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

// newToken is a fresh secret for a runner's relay to prove its calls
// with.
func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
