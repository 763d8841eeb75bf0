package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// The broker: a sandboxed agent's baton sends its arguments, standard input
// and working directory to the launcher's socket, and the launcher runs the
// call in its own process, bound to the session the socket serves. Nothing
// the agent sends names a session, a role or a credential.

// brokerCommands are the commands an agent's call may run through the
// broker: its role's work and reading. The launcher's and the person's own
// commands (run, init, key, reconcile, bridge, demo) are refused.
var brokerCommands = map[string]bool{
	"progress": true, "reviews": true, "features": true, "session": true, "status": true, "next": true,
	"log": true, "verify": true, "branch": true, "context": true, "show": true, "schema": true,
	"man": true, "help": true, "completion": true, "report": true,
}

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

// brokerRefusal is what a refused caller reads.
const brokerRefusal = "baton: refused: %v — this call is not open to your session; " + ownRole + "\n"

// Refuse answers a connection or request the broker would not take.
func (b *agentBox) Refuse(p broker.Peer, why error) broker.Response {
	b.attempt(context.Background(), fmt.Sprintf("process %d: %v", p.PID, why))
	return broker.Response{Stderr: fmt.Appendf(nil, brokerRefusal, why), Code: errs.Code(errs.New(errs.Policy, "refused"))}
}

// Handle runs one call as the session: after bringing the agent's new
// commits on its branch into the main repository, so that the call's git
// checks see them.
func (b *agentBox) Handle(ctx context.Context, p broker.Peer, r broker.Request) broker.Response {
	b.callMu.Lock()
	defer b.callMu.Unlock()
	cwd, err := b.checkRequest(r)
	if err != nil {
		return b.Refuse(p, err)
	}
	if _, err := b.place.Copy.Import(ctx); err != nil {
		if errors.Is(err, workcopy.ErrNotFastForward) {
			b.attempt(ctx, fmt.Sprintf("rewrote its branch: %v", err))
			return broker.Response{Stderr: fmt.Appendf(nil, "baton: %v: commits already on your branch stay as they are; add new commits on top of them\n", err), Code: errs.Code(errs.New(errs.Conflict, ""))}
		}
		b.a.notice("[baton run] session %d: its branch could not be brought back from its working copy: %v", b.st.Session, err)
		return broker.Response{Stderr: []byte("baton: your branch's commits could not be brought to the project; keep your work committed on your branch and try again\n"), Code: 1}
	}
	return b.call(ctx, p, r, cwd)
}

// checkRequest refuses a call whose working directory is outside the
// agent's clone or an argument that names a path outside it (the launcher
// reads and writes with the person's rights); it returns the directory
// relative file arguments are read from.
func (b *agentBox) checkRequest(r broker.Request) (string, error) {
	cwd := realPath(r.Cwd)
	if !filepath.IsAbs(r.Cwd) || !beneath(cwd, b.copyReal) {
		return "", fmt.Errorf("the working directory %q is outside your working copy", r.Cwd)
	}
	for i, arg := range r.Args {
		if i > 0 && freeText(r.Args[i-1], r.Args[:i-1]) {
			continue
		}
		if k, _, ok := strings.Cut(arg, "="); ok && brokerTextFlags[k] {
			continue
		}
		for _, v := range argValues(arg) {
			if pathArg(v) && !beneath(resolveExisting(v, cwd), b.copyReal) {
				return "", fmt.Errorf("the argument %q names a path outside your working copy", arg)
			}
		}
	}
	return cwd, nil
}

// brokerTextFlags are the flags whose value is free text an agent writes (a
// summary, the name of its source), never read or written as a path: a
// summary such as "/health added" is no path argument.
var brokerTextFlags = map[string]bool{"-s": true, "--summary": true, "--source-appspec": true}

// freeText says whether the argument after flag is a text flag's value:
// flag is a text flag given on its own, and not itself the value of the
// flag before it (as in "-o -s", where "-s" is -o's value).
func freeText(flag string, before []string) bool {
	if !brokerTextFlags[flag] {
		return false
	}
	if n := len(before); n > 0 {
		prev := before[n-1]
		if strings.HasPrefix(prev, "-") && !strings.Contains(prev, "=") && !brokerTextFlags[prev] {
			return false
		}
	}
	return true
}

// argValues are the strings an argument may carry a path in: itself, the
// value of --flag=value, and of a short flag written -fVALUE.
func argValues(arg string) []string {
	vs := []string{arg}
	if k, v, ok := strings.Cut(arg, "="); ok && strings.HasPrefix(k, "--") {
		vs = append(vs, v)
	} else if len(arg) > 2 && arg[0] == '-' && arg[1] != '-' {
		vs = append(vs, arg[2:])
	}
	return vs
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

// call runs the request in this process: the project's state directory
// and repository (with the clone's HEAD), the session's credential, the
// launcher's environment otherwise; relative file arguments are read in
// the agent's clone.
func (b *agentBox) call(ctx context.Context, p broker.Peer, r broker.Request, cwd string) broker.Response {
	var out, errOut bytes.Buffer
	env := Env{Stdin: bytes.NewReader(r.Stdin), Stdout: &out, Stderr: &errOut, Getenv: b.getenv, Cwd: b.place.Top,
		FileDir: cwd, Head: b.place.Copy.Head, Now: b.a.env.Now}
	x := newApp(env)
	var refused error
	x.guard = func(c *cobra.Command) error {
		refused = b.guard(x, c)
		return refused
	}
	code := execute(ctx, x, append([]string{"--state-dir", b.place.StateDir}, r.Args...))
	if refused != nil {
		b.attempt(ctx, fmt.Sprintf("process %d: %v", p.PID, refused))
	}
	return broker.Response{Stdout: out.Bytes(), Stderr: errOut.Bytes(), Code: code}
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

// ownRole is what a refused agent should do instead.
const ownRole = "do your role's work with baton's commands from your working copy, then end your session with the outcome that fits"

// guard refuses, once the arguments are parsed, a command that is not an
// agent's, an override, and another state directory or file.
func (b *agentBox) guard(x *App, c *cobra.Command) error {
	path := strings.Fields(c.CommandPath())
	switch {
	case len(path) > 1 && !brokerCommands[path[1]]:
		return errs.New(errs.Policy, "refused: 'baton %s' is the launcher's or a person's command, not one an agent runs: %s", path[1], ownRole)
	case len(path) > 2 && path[1] == "session" && path[2] == "start":
		return errs.New(errs.Policy, "refused: the launcher opens sessions, and yours is open: %s", ownRole)
	case x.g.As != "" || x.g.Reason != "":
		return errs.New(errs.Policy, "refused: a person's override is not open to an agent's session: %s", ownRole)
	case x.g.File != "" || filepath.Clean(x.g.StateDir) != b.place.StateDir:
		return errs.New(errs.Policy, "refused: an agent's calls use its project's state files, and no other: %s", ownRole)
	}
	return nil
}

// agentSide runs the calls of a sandboxed agent's baton: the helper that
// confines the agent, and every other call forwarded to the broker. ok is
// false for a call that runs here as usual.
func agentSide(args []string, env Env) (code int, ok bool) {
	if len(args) > 0 && args[0] == sandboxExecCmd {
		return sandboxExec(args[1:], env), true
	}
	if len(args) >= 2 && args[0] == "demo" && args[1] == "agent" {
		return 0, false // the demo's agent runs in the sandbox; its calls go through forward
	}
	sock := brokerSocket(env)
	if sock == "" {
		return 0, false
	}
	return forward(sock, args, env), true
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

// forward sends a call to the broker and prints its answer: standard input
// goes along when an argument reads it ("-").
func forward(sock string, args []string, env Env) int {
	req := broker.Request{Args: args, Cwd: env.Cwd}
	for _, a := range args {
		if a == "-" || strings.HasSuffix(a, "=-") {
			in, err := io.ReadAll(io.LimitReader(env.Stdin, broker.MaxRequest))
			if err != nil {
				fmt.Fprintf(env.Stderr, "baton: reading standard input: %v\n", err)
				return 1
			}
			req.Stdin = in
			break
		}
	}
	resp, err := broker.Call(sock, req)
	if err != nil {
		fmt.Fprintf(env.Stderr, "baton: the run's broker at %s did not answer (%v): the run that started this agent may have ended\n", sock, err)
		return 1
	}
	_, _ = env.Stdout.Write(resp.Stdout)
	_, _ = env.Stderr.Write(resp.Stderr)
	return resp.Code
}

// brokered runs a baton call as the agent's baton would: through the
// broker when there is one (a sandboxed agent), else in this process.
func (a *App) brokered(ctx context.Context, args ...string) ([]byte, error) {
	sock := brokerSocket(a.env)
	if sock == "" {
		return a.sub(ctx, nil, args...)
	}
	var out, errOut bytes.Buffer
	e := a.env
	e.Stdout, e.Stderr = &out, &errOut
	code := forward(sock, args, e)
	_, _ = a.env.Stderr.Write(errOut.Bytes())
	if code != 0 {
		var je struct {
			Error struct{ Message string } `json:"error"`
		}
		msg := strings.TrimSpace(errOut.String())
		if json.Unmarshal(errOut.Bytes(), &je) == nil && je.Error.Message != "" {
			msg = je.Error.Message
		}
		return out.Bytes(), fmt.Errorf("baton %s: exit %d: %s", strings.Join(args, " "), code, msg)
	}
	return out.Bytes(), nil
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
