//go:build linux && (amd64 || arm64)

package lineage

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/baton-cli/baton/internal/sandbox"
)

// The test binary plays every part of a session but the agent's shell: the
// helper that starts the agent (lineage-helper), the agent's baton (baton:
// the launcher's own binary, by device and inode), a copy of it that is
// another binary (notbaton), a process that execs from a thread that is
// not its leader (threadexec), and ones that try what the filter denies
// (denied, x32). Which part it plays is the name it was started by.
func TestMain(m *testing.M) {
	switch filepath.Base(os.Args[0]) {
	case "baton", "notbaton":
		os.Exit(standIn(os.Args[1:]))
	case "lineage-helper":
		os.Exit(helperMain(os.Args[1:]))
	case "threadexec":
		os.Exit(threadExec(os.Args[1:]))
	case "denied":
		os.Exit(denied())
	case "x32":
		// an x32 call (getpid) where the kernel has no x32 fails with ENOSYS;
		// the filter kills the process instead
		_, _, e := unix.RawSyscall(x32Bit|unix.SYS_GETPID, 0, 0, 0)
		fmt.Println("x32:", e)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// envSock names the test's socket; envPolicy, a Landlock policy for the
// helper to apply.
const (
	envSock   = "LINEAGE_TEST_SOCK"
	envPolicy = "LINEAGE_TEST_POLICY"
	envPlain  = "LINEAGE_TEST_PLAIN" // the helper installs nothing
)

// standIn is the agent's baton: it sends its label to the test's socket
// and prints what the test says of it; with -- ARGV... after the label, it
// then execs ARGV.
func standIn(args []string) int {
	if len(args) > 2 && args[1] == "--" {
		defer func() {
			path, err := exec.LookPath(args[2])
			if err == nil {
				err = syscall.Exec(path, args[2:], os.Environ())
			}
			fmt.Fprintln(os.Stderr, "stand-in:", err)
			os.Exit(126)
		}()
	} else if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "stand-in: LABEL [-- ARGV...]")
		return 2
	}
	c, err := net.Dial("unix", os.Getenv(envSock))
	if err != nil {
		fmt.Fprintln(os.Stderr, "stand-in:", err)
		return 1
	}
	defer c.Close()
	fmt.Fprintln(c, args[0])
	reply, err := io.ReadAll(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stand-in:", err)
		return 1
	}
	fmt.Printf("%s=%s\n", args[0], reply)
	return 0
}

// helperMain is the helper: lineage-helper -- ARGV...
func helperMain(args []string) int {
	if len(args) < 2 || args[0] != "--" {
		fmt.Fprintln(os.Stderr, "helper: -- ARGV...")
		return 2
	}
	if os.Getenv(envPlain) == "" {
		if err := Install(os.NewFile(3, "lineage")); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 125
		}
	}
	if pj := os.Getenv(envPolicy); pj != "" {
		var p sandbox.Policy
		if err := json.Unmarshal([]byte(pj), &p); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 125
		}
		if err := sandbox.Restrict(p); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 125
		}
	}
	path, err := exec.LookPath(args[1])
	if err == nil {
		err = syscall.Exec(path, args[1:], os.Environ())
	}
	fmt.Fprintln(os.Stderr, "helper:", err)
	return 126
}

// threadExec execs its arguments from a thread that is not the process's
// leader: a goroutine that finds itself on the leader keeps it, so that
// the next one runs on another thread.
func threadExec(args []string) int {
	path, err := exec.LookPath(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "threadexec:", err)
		return 127
	}
	errc := make(chan error)
	var try func()
	try = func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			go try()
			select {}
		}
		errc <- syscall.Exec(path, args, os.Environ())
	}
	go try()
	fmt.Fprintln(os.Stderr, "threadexec:", <-errc)
	return 126
}

// denied tries, on its parent, each call the filter denies, and prints
// what each gave. None of them has an effect when it is not denied: each
// is made so that the kernel would refuse it, or it is undone.
func denied() int {
	ppid := os.Getppid()
	var out []string
	res := func(name string, err error) {
		var e unix.Errno
		switch {
		case err == nil:
			out = append(out, name+"=ok")
		case errors.As(err, &e):
			out = append(out, name+"="+unix.ErrnoName(e))
		default:
			out = append(out, name+"="+err.Error())
		}
	}
	err := unix.PtraceAttach(ppid)
	if err == nil {
		unix.PtraceDetach(ppid)
	}
	res("ptrace", err)
	var b [1]byte
	local := []unix.Iovec{{Base: &b[0], Len: 1}}
	_, err = unix.ProcessVMReadv(ppid, local, []unix.RemoteIovec{{Base: 1, Len: 1}}, 0)
	res("process_vm_readv", err)
	_, err = unix.ProcessVMWritev(ppid, local, []unix.RemoteIovec{{Base: 1, Len: 1}}, 0)
	res("process_vm_writev", err)
	if pidfd, err := unix.PidfdOpen(ppid, 0); err != nil {
		res("pidfd_getfd", err)
	} else {
		fd, err := unix.PidfdGetfd(pidfd, 0, 0)
		if err == nil {
			unix.Close(fd)
		}
		res("pidfd_getfd", err)
	}
	_, _, e := unix.RawSyscall(unix.SYS_CLONE, unix.CLONE_PARENT|unix.CLONE_SIGHAND, 0, 0) // EINVAL: no CLONE_VM
	res("clone_parent", errOf(e))
	_, _, e = unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0) // EINVAL: no arguments
	res("clone3", errOf(e))
	res("subreaper", unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
	fmt.Println(strings.Join(out, " "))
	return 0
}

func errOf(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// harness serves the test's socket and starts agents under supervision.
type harness struct {
	dir, bin, sock string
	ln             *net.UnixListener
	ctx            context.Context // the supervision's, Background if nil

	mu    sync.Mutex
	tree  *Tree
	ready chan struct{}
	got   map[string]Verdict
	dup   []string
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if self, err = filepath.EvalSymlinks(self); err != nil {
		t.Fatal(err)
	}
	h := &harness{dir: dir, bin: filepath.Join(dir, "bin"), sock: filepath.Join(dir, "sock")}
	if err := os.Mkdir(h.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"baton", "threadexec", "denied", "x32"} {
		if err := os.Symlink(self, filepath.Join(h.bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(t, self, filepath.Join(h.bin, "notbaton"))
	if h.ln, err = net.ListenUnix("unix", &net.UnixAddr{Name: h.sock, Net: "unix"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.ln.Close() })
	go h.serve()
	return h
}

// copyFile copies src to dst, executable: the same program in another
// file.
func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	if err := copyExec(src, dst); err != nil {
		t.Fatal(err)
	}
}

func copyExec(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o755)
}

func (h *harness) serve() {
	for {
		c, err := h.ln.AcceptUnix()
		if err != nil {
			return
		}
		go h.answer(c)
	}
}

// answer classifies a stand-in's connection and tells it the verdict.
func (h *harness) answer(c *net.UnixConn) {
	defer c.Close()
	label, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return
	}
	label = strings.TrimSpace(label)
	h.mu.Lock()
	ready := h.ready
	h.mu.Unlock()
	<-ready
	h.mu.Lock()
	tree := h.tree
	h.mu.Unlock()
	v := tree.ClassifyConn(c)
	h.mu.Lock()
	if _, ok := h.got[label]; ok {
		h.dup = append(h.dup, label)
	}
	h.got[label] = v
	h.mu.Unlock()
	fmt.Fprint(c, v.Kind)
}

// verdict waits up to d for label's verdict.
func (h *harness) verdict(label string, d time.Duration) (Verdict, bool) {
	for end := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		h.mu.Lock()
		v, ok := h.got[label]
		h.mu.Unlock()
		if ok || time.Now().After(end) {
			return v, ok
		}
	}
}

// agent is one supervised run of argv.
type agent struct {
	h      *harness
	cmd    *exec.Cmd
	tree   *Tree
	stdout strings.Builder
	stderr strings.Builder
}

// start runs argv as the agent under a helper, confined by Landlock when
// landlock is set.
func (h *harness) start(t testing.TB, argv []string, landlock bool) *agent {
	t.Helper()
	h.mu.Lock()
	h.got, h.dup, h.ready = map[string]Verdict{}, nil, make(chan struct{})
	h.mu.Unlock()
	self, _ := os.Executable()
	a := &agent{h: h, cmd: exec.Command(self, append([]string{"--"}, argv...)...)}
	a.cmd.Args[0] = "lineage-helper"
	a.cmd.Dir = h.dir
	a.cmd.Env = append(childEnv(), "PATH="+h.bin+":"+os.Getenv("PATH"), envSock+"="+h.sock, "W="+h.dir)
	if landlock {
		pj, _ := json.Marshal(sandbox.Policy{ReadWrite: []string{h.dir, "/dev/null"}, ReadOnly: []string{"/"}})
		a.cmd.Env = append(a.cmd.Env, envPolicy+"="+string(pj))
	}
	a.cmd.Stdout, a.cmd.Stderr = &a.stdout, &a.stderr
	a.cmd.WaitDelay = 5 * time.Second // for the output of what the agent left behind
	launcher, helper, err := Pair()
	if err != nil {
		t.Fatal(err)
	}
	a.cmd.ExtraFiles = []*os.File{helper}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	helper.Close()
	ctx := h.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	if a.tree, err = Supervise(ctx, launcher, a.cmd.Process.Pid); err != nil {
		a.cmd.Process.Kill()
		a.cmd.Wait()
		t.Fatal(err)
	}
	h.mu.Lock()
	h.tree = a.tree
	close(h.ready)
	h.mu.Unlock()
	return a
}

// wait waits for the agent's process and requires it to succeed within a
// minute.
func (a *agent) wait(t testing.TB) {
	t.Helper()
	timer := time.AfterFunc(time.Minute, func() { a.cmd.Process.Kill() })
	defer timer.Stop()
	if err := a.cmd.Wait(); err != nil {
		t.Errorf("agent: %v\nstdout:\n%s\nstderr:\n%s", err, &a.stdout, &a.stderr)
	}
}

// outside connects from processes that are not of the agent's tree: the
// test's own, and a stand-in the test starts itself.
func (h *harness) outside(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	tree := h.tree
	h.mu.Unlock()
	if v := tree.Classify(os.Getpid()); v.Kind != Outside {
		t.Errorf("the launcher itself: %v, want outside", v)
	}
	c := exec.Command(filepath.Join(h.bin, "baton"), "outside")
	c.Env = append(childEnv(), envSock+"="+h.sock)
	if out, err := c.CombinedOutput(); err != nil {
		t.Errorf("outside stand-in: %v: %s", err, out)
	}
}

// childEnv is the test's environment for the processes it starts: under
// the race detector, they do not wait a second as they exit.
func childEnv() []string {
	return append(os.Environ(), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}

// writeFiles writes the scenario's files into the harness's directory; a
// name ending in * is made executable.
func (h *harness) writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for name, body := range files {
		mode := os.FileMode(0o644)
		if n, ok := strings.CutSuffix(name, "*"); ok {
			name, mode = n, 0o755
		}
		p := filepath.Join(h.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
}
