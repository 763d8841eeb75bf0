//go:build linux && (amd64 || arm64)

package lineage

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's structures of a user notification (linux/seccomp.h).
type seccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Data  seccompData
}

type seccompResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// Available says whether this system can supervise an agent's execs: nil,
// or why not. It tries the filter on a thread of its own, which then ends.
func Available() error { return available() }

var available = sync.OnceValue(func() error {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return fmt.Errorf("lineage: uname: %w", err)
	}
	rel := unix.ByteSliceToString(u.Release[:])
	if !atLeast(rel, 5, 5) {
		return fmt.Errorf("lineage: Linux %s predates seccomp's user notifications that let a call continue (5.5)", rel)
	}
	errc := make(chan error, 1)
	go func() {
		// never unlocked: the thread, with its filter, ends with this goroutine
		runtime.LockOSThread()
		fd, err := installFilter()
		if err == nil {
			unix.Close(fd)
		}
		errc <- err
	}()
	return <-errc
})

// atLeast says whether the kernel release rel is major.minor or later.
func atLeast(rel string, major, minor int) bool {
	f := strings.FieldsFunc(rel, func(r rune) bool { return r < '0' || r > '9' })
	if len(f) < 2 {
		return false
	}
	a, _ := strconv.Atoi(f[0])
	b, _ := strconv.Atoi(f[1])
	return a > major || a == major && b >= minor
}

// installFilter sets no_new_privs and the filter on the calling thread,
// and returns the filter's listener.
func installFilter() (int, error) {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return -1, fmt.Errorf("lineage: no_new_privs: %w", err)
	}
	prog := assemble(program())
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// once the launcher has taken a notification, only a fatal signal
	// interrupts the exec, so that no exec is seen twice (Linux 5.19)
	flags := uintptr(unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
	for {
		fd, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
		runtime.KeepAlive(prog)
		if e == unix.EINVAL && flags&unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV != 0 {
			flags &^= unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
			continue
		}
		if e != 0 {
			return -1, fmt.Errorf("lineage: installing the seccomp filter: %w", e)
		}
		return int(fd), nil
	}
}

// Pair makes the channel between the launcher and the helper that starts
// the agent: the helper's end goes to the helper (exec.Cmd's ExtraFiles),
// and the launcher closes its copy of it once the helper has started.
func Pair() (launcher, helper *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("lineage: socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "lineage-launcher"), os.NewFile(uintptr(fds[1]), "lineage-helper"), nil
}

// Install is the helper's part, right before it execs the agent: it sets
// no_new_privs and the filter on the calling thread, hands the filter's
// listener to the launcher over sock, and waits for the launcher's
// go-ahead. sock is closed. On success the calling goroutine stays locked
// to its thread, which carries the filter: exec the agent from it.
func Install(sock *os.File) error {
	defer sock.Close()
	runtime.LockOSThread()
	fd, err := installFilter()
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	s := int(sock.Fd())
	err = unix.Sendmsg(s, []byte{0}, unix.UnixRights(fd), nil, 0)
	unix.Close(fd)
	if err != nil {
		return fmt.Errorf("lineage: handing the listener to the launcher: %w", err)
	}
	var b [1]byte
	for {
		n, err := unix.Read(s, b[:])
		if err == unix.EINTR {
			continue
		}
		if n != 1 {
			return fmt.Errorf("lineage: the launcher did not take the agent's supervision (%v)", err)
		}
		return nil
	}
}

// Supervise is the launcher's part: it takes the listener the helper
// process root sends over sock, supervises the execs of the tree that
// grows from root until ctx ends or Close, and gives the helper its
// go-ahead. sock is closed.
func Supervise(ctx context.Context, sock *os.File, root int) (*Tree, error) {
	c, err := net.FileConn(sock)
	sock.Close()
	if err != nil {
		return nil, fmt.Errorf("lineage: %w", err)
	}
	defer c.Close()
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, errors.New("lineage: the helper's channel is not a unix socket")
	}
	stop := context.AfterFunc(ctx, func() { uc.SetDeadline(time.Now()) })
	lis, err := receive(uc)
	stop()
	if err != nil {
		return nil, err
	}
	t, err := newTree(lis, root)
	if err != nil {
		lis.Close()
		return nil, err
	}
	go t.serve()
	t.mu.Lock()
	t.unwatch = context.AfterFunc(ctx, func() { t.Close() })
	t.mu.Unlock()
	if _, err := uc.Write([]byte{1}); err != nil {
		t.Close()
		return nil, fmt.Errorf("lineage: giving the helper its go-ahead: %w", err)
	}
	return t, nil
}

// receive takes the one descriptor the helper sends, and checks that it is
// a seccomp listener.
func receive(c *net.UnixConn) (*os.File, error) {
	b, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4*4))
	_, oobn, _, _, err := c.ReadMsgUnix(b, oob)
	if err != nil {
		return nil, fmt.Errorf("lineage: the helper sent no listener: %w", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	var fds []int
	for _, m := range msgs {
		got, _ := unix.ParseUnixRights(&m)
		fds = append(fds, got...)
	}
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, fmt.Errorf("lineage: the helper sent %d descriptors, not its listener", len(fds))
	}
	unix.CloseOnExec(fds[0])
	f := os.NewFile(uintptr(fds[0]), "seccomp-listener")
	if l, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(fds[0])); l != "anon_inode:seccomp notify" {
		f.Close()
		return nil, fmt.Errorf("lineage: the helper sent %q, not a seccomp listener", l)
	}
	return f, nil
}

// ioctl on the listener.
func ioctl(fd uintptr, req uint, arg unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, fd, uintptr(req), uintptr(arg))
	if e != 0 {
		return e
	}
	return nil
}
