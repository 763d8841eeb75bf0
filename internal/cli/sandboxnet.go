package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/baton-cli/baton/internal/egress"
	"github.com/baton-cli/baton/internal/errs"
)

// --sandbox-net=model: the confined agent runs in a network namespace of
// its own, where only loopback exists, and reaches the hosts its CLI needs
// (and sandbox_hosts) through the launcher's egress proxy; see the egress
// package. The helper brings the namespace's loopback up, starts the
// forwarder in it, and then becomes the agent.

// The network modes of a confined agent.
const (
	netModel = "model" // its CLI's model API and sandbox_hosts, through the proxy
	netOn    = "on"    // the network as the launcher has it
	netOff   = "off"   // none
)

// egressEnv carries the forwarder's configuration from the launcher to
// the helper, which removes it before the agent starts.
const egressEnv = "BATON_EGRESS"

// egressForwardCmd is the hidden first argument of the forwarder: baton
// __egress-forward CONF.
const egressForwardCmd = "__egress-forward"

// egressConf is the forwarder's configuration.
type egressConf struct {
	Sock     string           `json:"sock"`
	Forwards []egress.Forward `json:"forwards"`
}

// checkSandboxNet refuses a network mode that is not one, and, before
// anything starts, a preset that needs its model API with the network cut.
func checkSandboxNet(o runOpts) error {
	switch o.SandboxNet {
	case netModel, netOn:
		return nil
	case netOff:
		if _, ok := egress.ModelHosts[o.Agent]; ok {
			return errs.New(errs.Usage, "--sandbox-net=off cuts the %s agent off from its model API, so its sessions could only time out; nothing was opened. Use --sandbox-net=model (the default: its model API and sandbox_hosts only)", o.Agent)
		}
		return nil
	}
	return errs.New(errs.Usage, "--sandbox-net: %q is not a mode: give model (the agent's model API and sandbox_hosts only, the default), on (the launcher's network) or off (none)", o.SandboxNet)
}

// openEgress starts session b's egress proxy and puts cmd, the helper, in
// a network namespace of its own with the forwarder's configuration.
func (b *agentBox) openEgress(ctx context.Context, cmd *exec.Cmd, preset string) error {
	hosts, err := b.a.app.SandboxHosts()
	if err != nil {
		return err
	}
	allow := append(slices.Clone(egress.ModelHosts[preset]), hosts...)
	b.proxy, err = egressNamespace(cmd, allow, filepath.Join(b.place.SockDir, "egress"), func(r egress.Refusal) { b.egressRefused(ctx, r) })
	return err
}

// egressNamespace serves an egress proxy for allow, and for the loopback
// addresses the base URLs of cmd's environment name, on a new unix socket
// at sock, and puts cmd, the helper, in a network namespace of its own
// whose forwarder reaches that proxy. refused is told of each host the
// proxy refuses.
func egressNamespace(cmd *exec.Cmd, allow []string, sock string, refused func(egress.Refusal)) (*egress.Proxy, error) {
	forwards := []egress.Forward{{Port: egress.ProxyPort}}
	for _, t := range egress.LoopbackTargets(cmd.Env) {
		allow = append(allow, t)
		_, port, _ := net.SplitHostPort(t)
		n, _ := strconv.Atoi(port)
		if n != egress.ProxyPort {
			forwards = append(forwards, egress.Forward{Port: n, Target: t})
		}
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, err
	}
	proxy := &egress.Proxy{Allow: allow, Refused: refused}
	go func() { _ = proxy.Serve(ln) }()
	conf, _ := json.Marshal(egressConf{Sock: sock, Forwards: forwards})
	cmd.Env = append(cmd.Env, egressEnv+"="+string(conf))
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	attr := cmd.SysProcAttr
	attr.Cloneflags |= syscall.CLONE_NEWNET
	if uid, gid := os.Geteuid(), os.Getegid(); uid != 0 {
		// a user namespace lets an unprivileged launcher make the network
		// one; the helper keeps only the right to bring its loopback up
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		attr.AmbientCaps = []uintptr{unix.CAP_NET_ADMIN}
	}
	return proxy, nil
}

// egressRefused records a connection the proxy refused, once for each
// host, in the audit log with the session; the session goes on.
func (b *agentBox) egressRefused(ctx context.Context, r egress.Refusal) {
	what := fmt.Sprintf("session %d (%s): a connection to %s (%s) was refused: it is outside the session's egress policy (the agent CLI's model API and sandbox_hosts)", b.st.Session, b.st.Role, r.Host, r.Method)
	b.a.notice("[baton run] %s", what)
	if err := b.a.app.LogRunNote(ctx, what); err != nil {
		b.a.warn("the refusal could not be written to the audit log: %v", err)
	}
}

// startEgress is the helper's part under --sandbox-net=model: it brings
// the namespace's loopback up and starts the forwarder, and returns the
// agent's environment without the forwarder's configuration and with the
// proxy's variables. The forwarder is not confined: it opens no file and
// only moves bytes between its sockets, and a confined agent cannot trace
// or drive a process outside its Landlock domain.
func startEgress(self string, env []string) ([]string, error) {
	var raw string
	out := env[:0:0]
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, egressEnv+"="); ok {
			raw = v
			continue
		}
		out = append(out, kv)
	}
	if raw == "" {
		return env, nil
	}
	if err := loopbackUp(); err != nil {
		return nil, fmt.Errorf("bringing up the loopback of the agent's network: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	fwd := exec.Command(self, egressForwardCmd, raw)
	fwd.ExtraFiles = []*os.File{w}
	fwd.Stderr = os.Stderr
	if err := fwd.Start(); err != nil {
		w.Close()
		return nil, err
	}
	w.Close()
	ready := make(chan error, 1)
	go func() {
		b := make([]byte, 1)
		_, err := r.Read(b)
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			return nil, fmt.Errorf("the egress forwarder did not start: %w", err)
		}
	case <-time.After(10 * time.Second):
		_ = fwd.Process.Kill()
		return nil, fmt.Errorf("the egress forwarder did not start within 10 s")
	}
	return append(out, egress.Environ()...), nil
}

// loopbackUp brings up the loopback interface of this network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// egressForward is the forwarder: it listens on the namespace's loopback,
// says so on fd 3, and forwards until the agent (its parent) is gone.
func egressForward(args []string, env Env) int {
	if len(args) != 1 {
		fmt.Fprintln(env.Stderr, "baton: "+egressForwardCmd+" is baton run's own helper: CONF")
		return 2
	}
	var conf egressConf
	if err := json.Unmarshal([]byte(args[0]), &conf); err != nil {
		fmt.Fprintf(env.Stderr, "baton: the egress configuration is not valid: %v\n", err)
		return sandboxExit
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	parent := os.Getppid()
	go func() { // the agent ended: nothing is left to forward for
		for range time.Tick(time.Second) {
			if os.Getppid() != parent {
				cancel()
				return
			}
		}
	}()
	ready := os.NewFile(3, "ready")
	err := egress.Serve(ctx, conf.Sock, conf.Forwards, func() {
		_, _ = ready.Write([]byte{1})
		ready.Close()
	})
	if err != nil {
		fmt.Fprintf(env.Stderr, "baton: the egress forwarder stopped: %v\n", err)
		return 1
	}
	return 0
}
