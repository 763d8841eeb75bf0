package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/baton-cli/baton/internal/agentcli"
	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/broker"
	"github.com/baton-cli/baton/internal/egress"
	"github.com/baton-cli/baton/internal/lineage"
	"github.com/baton-cli/baton/internal/runner"
	"github.com/baton-cli/baton/internal/sandbox"
)

// The runner's side of a remote lane's agent: baton __runner exec ROOT
// MODE BRANCH -- ARGV, which the launcher's ssh runs there. It is the
// relay between the agent and the launcher's broker, whose socket ssh
// forwards into the lane's place: it starts the agent as baton's helper
// does on the launcher (confined by Landlock, its execs supervised, in a
// network namespace whose only way out is an egress proxy), tells each
// of the agent's baton calls as the agent's own or as code the agent ran,
// and carries it to the launcher with that verdict and the token the
// launcher gave it on the ssh session's stdin. No process of the agent can
// read the token (the relay is not dumpable, and the sandbox and the
// supervision keep the agent from tracing it), so a call that reaches the
// forwarded socket without the relay is refused there.

// relayConf is the first line of the relay's stdin; the prompt follows.
type relayConf struct {
	Token string `json:"token"`
	// Supervise: tell the agent's own calls from those of the code it runs.
	Supervise bool `json:"supervise"`
	// Preset is the agent CLI preset ("" for --agent-cmd): Claude Code's
	// MCP configuration is written for it, Codex runs as its native binary.
	Preset string `json:"preset,omitempty"`
	// Env is what the preset's CLI needs in its environment.
	Env []string `json:"env,omitempty"`
	// Net is the confined agent's network: netModel (through an egress
	// proxy allowing Allow), netOn or netOff.
	Net   string   `json:"net"`
	Allow []string `json:"allow,omitempty"`
}

// maxRelayConf bounds the relay's configuration line.
const maxRelayConf = 1 << 20

// runnerExec is the relay: it returns the agent's exit status, or
// sandboxExit when nothing of the agent ran.
func runnerExec(home string, args []string, env Env) int {
	fail := func(err error) int {
		fmt.Fprintf(env.Stderr, "baton %s: %v\n", runner.Hidden, err)
		return sandboxExit
	}
	if len(args) < 5 || args[3] != "--" {
		return fail(errors.New("exec: ROOT MODE BRANCH -- COMMAND... (the launcher's ssh runs it)"))
	}
	root, mode, branch, argv := args[0], args[1], args[2], args[4:]
	// nothing of the runner user's may read the token from this process;
	// the programs the agent leaves behind come to it, to be stopped
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fail(err)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail(err)
	}
	conf, err := readRelayConf(os.Stdin)
	if err != nil {
		return fail(err)
	}
	p, err := runner.OpenPlace(home, root, branch)
	if err != nil {
		return fail(err)
	}
	self, err := selfPath()
	if err != nil {
		return fail(err)
	}
	r := &relay{conf: conf, place: p}
	go r.endWithSession()
	code, err := r.run(self, home, mode, argv, func(s string) { fmt.Fprintf(env.Stderr, "baton: %s\n", s) })
	if err != nil {
		return fail(err)
	}
	return code
}

// readRelayConf reads the first line of in, a byte at a time: what
// follows is the agent's.
func readRelayConf(in io.Reader) (relayConf, error) {
	var line []byte
	b := make([]byte, 1)
	for len(line) < maxRelayConf {
		if _, err := in.Read(b); err != nil {
			return relayConf{}, fmt.Errorf("reading the lane's configuration from the launcher: %w", err)
		}
		if b[0] == '\n' {
			var c relayConf
			if err := json.Unmarshal(line, &c); err != nil || c.Token == "" {
				return relayConf{}, fmt.Errorf("the lane's configuration from the launcher is not one (a baton of another version?)")
			}
			return c, nil
		}
		line = append(line, b[0])
	}
	return relayConf{}, errors.New("the lane's configuration from the launcher is over 1 MiB")
}

// relay is one lane's agent on this runner and the calls it makes.
type relay struct {
	conf  relayConf
	place runner.Place
	tree  *lineage.Tree
	pid   atomic.Int64 // the agent's helper, once started
	// sweeping is held by the sweep under way
	sweeping sync.Mutex
}

// run starts the agent, serves its calls until it exits, and stops what it
// left running.
func (r *relay) run(self, home, mode string, argv []string, warn func(string)) (int, error) {
	p := r.place
	runner.WaitSocket(p.Sock)
	_ = os.Remove(p.Relay)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: p.Relay, Net: "unix"})
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	cmd, policy, err := r.command(self, home, mode, argv, warn)
	if err != nil {
		return 0, err
	}
	var lin, helper *os.File
	if r.conf.Supervise {
		if err := lineage.Available(); err != nil {
			return 0, fmt.Errorf("this runner can no longer supervise the agent's execs, which the launcher counted on: %w", err)
		}
		if lin, helper, err = lineage.Pair(); err != nil {
			return 0, err
		}
		defer lin.Close()
	}
	if err := asHelper(cmd, policy, helper); err != nil {
		return 0, err
	}
	if policy != noPolicy && r.conf.Net == netModel {
		proxy, err := egressNamespace(cmd, r.conf.Allow, p.Egress(), r.egressRefused)
		if err != nil {
			return 0, err
		}
		defer proxy.Close()
	}
	// the parent-death signal follows the thread that starts the agent
	runtime.LockOSThread()
	err = r.start(cmd)
	if helper != nil {
		helper.Close()
	}
	if err != nil {
		return 0, err
	}
	defer r.sweep() // what the agent left running
	if lin != nil {
		if r.tree, err = lineage.Supervise(context.Background(), lin, int(r.pid.Load())); err != nil {
			_ = cmd.Wait()
			return 0, err
		}
	}
	if r.tree != nil {
		defer r.tree.Close()
	}
	go r.serve(ln)
	err = cmd.Wait()
	ln.Close()
	return exitStatus(err)
}

// command is the agent's command, in its clone with its environment and
// the preset's configuration, and its sandbox policy (noPolicy where the
// runner offers none and its config lets its agents run unconfined).
func (r *relay) command(self, home, mode string, argv []string, warn func(string)) (*exec.Cmd, string, error) {
	p := r.place
	env := append(withSelfOnPath(runner.AgentEnv(os.Environ(), p), self), r.conf.Env...)
	switch r.conf.Preset {
	case "claude":
		cfg := agentcli.ClaudeConfig(self, map[string]string{broker.EnvSocket: p.Relay})
		if err := os.WriteFile(p.MCPConfig(), cfg, 0o600); err != nil {
			return nil, "", err
		}
		if _, err := agentShellLink(p.Root); err != nil {
			return nil, "", fmt.Errorf("making the agent shell's link: %v", err)
		}
	case "codex":
		if path, err := exec.LookPath(argv[0]); err == nil {
			if bin, extra, ok := nativeCodex(path); ok {
				argv = append([]string{bin}, argv[1:]...)
				env = append(env, extra...)
			}
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, p.Repo
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if sandbox.ABI() < sandbox.MinABI {
		if mode != runner.SandboxAuto {
			return nil, "", errors.New("this runner offers no sandbox (Landlock, Linux 6.2 or later) and its lanes must be confined")
		}
		warn("this runner offers no sandbox (Landlock, Linux 6.2 or later): the agent runs NOT confined, as the runner's \"sandbox\": \"auto\" allows")
		return cmd, noPolicy, nil
	}
	pol := runner.Policy(home, p, self)
	pol.NoNet = r.conf.Net == netOff
	b, _ := json.Marshal(pol)
	return cmd, string(b), nil
}

// endWithSession stops the relay and everything beneath it when its ssh
// session ends (a lost connection, a stopped launcher): its parent, the
// session, is gone, or it is told to stop.
func (r *relay) endWithSession() {
	ended := make(chan os.Signal, 1)
	signal.Notify(ended, syscall.SIGTERM, syscall.SIGHUP)
	parent := os.Getppid()
	tick := time.NewTicker(time.Second)
	for os.Getppid() == parent {
		select {
		case <-ended:
			parent = -1
		case <-tick.C:
		}
	}
	r.sweep()
	_ = os.Remove(r.place.Relay)
	os.Exit(128 + int(syscall.SIGTERM))
}

// start starts cmd, the agent's helper. A helper given a user namespace
// of its own needs this process dumpable while it starts (the kernel lets
// only a dumpable parent write the namespace's maps): for that moment,
// before any of the agent runs, a process of the runner user's that is
// not confined could read it.
func (r *relay) start(cmd *exec.Cmd) error {
	userns := cmd.SysProcAttr.Cloneflags&syscall.CLONE_NEWUSER != 0
	if userns {
		if err := unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0); err != nil {
			return err
		}
	}
	err := cmd.Start()
	if userns {
		if perr := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); perr != nil {
			if err == nil {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				_ = cmd.Wait()
			}
			return perr
		}
	}
	if err == nil {
		r.pid.Store(int64(cmd.Process.Pid))
	}
	return err
}

// sweep kills what is left of the agent: its process group, and every
// program that left it, which comes to the relay (a subreaper) once its
// parent is gone. It goes on until the relay has had no child for a
// while (a program that keeps forking is caught as its children come),
// for 10 seconds at most; one sweep runs at a time.
func (r *relay) sweep() {
	r.sweeping.Lock()
	defer r.sweeping.Unlock()
	if pid := int(r.pid.Load()); pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	quiet := 0
	for end := time.Now().Add(10 * time.Second); quiet < 5 && time.Now().Before(end); {
		kids := childrenOf(os.Getpid())
		if len(kids) == 0 {
			quiet++
		} else {
			quiet = 0
		}
		for _, k := range kids {
			_ = syscall.Kill(k, syscall.SIGKILL)
		}
		for {
			if pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// childrenOf are the processes whose parent is pid.
func childrenOf(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			if ppid, ok := broker.ParentOf(n); ok && ppid == pid {
				out = append(out, n)
			}
		}
	}
	return out
}

// exitStatus is the relay's exit status for the agent's end: its own,
// or 128 and the signal that killed it.
func exitStatus(err error) (int, error) {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 0, err
}

// serve carries each connection of the agent to the launcher's broker.
func (r *relay) serve(ln *net.UnixListener) {
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			return
		}
		go r.carry(c)
	}
}

// carry sends one call to the launcher with the relay's verdict on its
// caller at its head, and the answer back.
func (r *relay) carry(c *net.UnixConn) {
	defer c.Close()
	h := r.verdict(c)
	up, err := net.Dial("unix", r.place.Sock)
	if err != nil {
		return
	}
	defer up.Close()
	if broker.WriteRelayed(up, h) != nil {
		return
	}
	go func() { _, _ = io.Copy(up, c) }()
	_, _ = io.Copy(c, up)
}

// verdict is what the relay knows of the process at the other end of c.
func (r *relay) verdict(c *net.UnixConn) broker.Relayed {
	h := broker.Relayed{Token: r.conf.Token, Kind: broker.RelayOutside}
	raw, err := c.SyscallConn()
	var cred *unix.Ucred
	if err == nil {
		_ = raw.Control(func(fd uintptr) { cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
	}
	if err != nil || cred == nil {
		h.Reason = "the runner could not tell which process called"
		return h
	}
	h.PID = int(cred.Pid)
	if int(cred.Uid) != os.Getuid() {
		h.Reason = fmt.Sprintf("process %d of user %d on the runner is not the lane's", cred.Pid, cred.Uid)
		return h
	}
	if r.tree != nil {
		v := r.tree.ClassifyConn(c)
		switch v.Kind {
		case lineage.Agent:
			h.Kind = broker.RelayAgent
		case lineage.Ran:
			h.Kind = broker.RelayRan
		}
		h.Reason = v.Reason
		return h
	}
	if broker.Descends(h.PID, int(r.pid.Load())) {
		h.Kind = broker.RelayAgent
	} else {
		h.Reason = broker.ErrNotDescendant.Error()
	}
	return h
}

// egressRefused tells the launcher of a connection the runner's egress
// proxy refused, for its log.
func (r *relay) egressRefused(f egress.Refusal) {
	h := broker.Relayed{Token: r.conf.Token, Kind: broker.RelayEgress, Host: f.Host, Method: f.Method}
	_, _ = broker.CallRelayed(r.place.Sock, h, app.Call{})
}

// relayLine is the relay's configuration line for a lane's agent.
func relayLine(c relayConf) string {
	b, _ := json.Marshal(c)
	return strings.TrimSpace(string(b)) + "\n"
}
