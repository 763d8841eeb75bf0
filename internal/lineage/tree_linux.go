//go:build linux && (amd64 || arm64)

package lineage

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxDepth bounds the walk from a caller to the root.
const maxDepth = 4096

// Tree is the supervision of one agent's process tree: it counts the
// execs of each process and classifies the processes that call.
type Tree struct {
	lis  *os.File
	root proc
	self fileID // the launcher's own binary, baton's
	view view   // the launcher's: paths are resolved in it

	stopR, stopW *os.File
	done         chan struct{}
	closeOnce    sync.Once

	mu sync.Mutex
	// execs counts the execs of each process by pid; a record whose start
	// differs from a process's is that of a former process with its pid.
	execs   map[int]record
	settled bool // the root has forked, or a call has come
	tainted bool // the root exec'd after it settled
	stats   Stats
	unwatch func() bool // forgets the context Supervise was given
}

type record struct {
	start uint64
	n     int
}

// afterCheck, when set by a test, runs between the decision on an exec
// and the answer to it.
var afterCheck func(path string, refused unix.Errno)

func newTree(lis *os.File, root int) (*Tree, error) {
	rs, err := readStat(root)
	if err != nil {
		return nil, fmt.Errorf("lineage: the helper process %d: %w", root, err)
	}
	self, err := statID("/proc/self/exe")
	if err != nil {
		return nil, fmt.Errorf("lineage: baton's own binary: %w", err)
	}
	v, err := viewOf(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("lineage: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	return &Tree{lis: lis, root: rs.proc, self: self, view: v, stopR: r, stopW: w,
		done: make(chan struct{}), execs: map[int]record{}}, nil
}

// Close ends the supervision: from then on every exec of the tree fails
// (ENOSYS). Classify still answers.
func (t *Tree) Close() error {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		unwatch := t.unwatch
		t.mu.Unlock()
		if unwatch != nil {
			unwatch()
		}
		t.stopW.Close()
		<-t.done
		t.stopR.Close()
	})
	return nil
}

// Stats says what the supervision has answered so far.
func (t *Tree) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stats
}

// serve answers the tree's notifications until Close, or until no process
// of the tree is left. Closing the listener as it ends makes every later
// exec of the tree fail.
func (t *Tree) serve() {
	defer close(t.done)
	defer t.lis.Close()
	fds := []unix.PollFd{{Fd: int32(t.lis.Fd()), Events: unix.POLLIN}, {Fd: int32(t.stopR.Fd()), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		if fds[0].Revents&unix.POLLIN != 0 {
			t.next()
		} else if fds[0].Revents != 0 {
			return // POLLHUP: the tree has ended
		}
	}
}

// next takes one notification and answers it.
func (t *Tree) next() {
	var n seccompNotif
	fd := t.lis.Fd()
	if err := ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); err != nil {
		return // ENOENT: the caller was interrupted before it was taken
	}
	resp, ok := t.decide(&n)
	if !ok {
		return
	}
	resp.ID = n.ID
	// ENOENT: the caller has gone meanwhile
	_ = ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
}

// decide lets an exec through and counts it, or refuses it with the error
// the kernel would give. ok is false when the caller has gone.
func (t *Tree) decide(n *seccompNotif) (resp seccompResp, ok bool) {
	refuse := func(e unix.Errno) (seccompResp, bool) { return seccompResp{Error: -int32(e)}, true }
	tid := int(n.Pid)
	if n.Data.Arch != nativeArch || (n.Data.Nr != unix.SYS_EXECVE && n.Data.Nr != unix.SYS_EXECVEAT) || tid == 0 {
		return refuse(unix.ENOSYS)
	}
	tgid, err1 := threadGroup(tid)
	st, err2 := readStat(tgid)
	v, err3 := viewOf(tid)
	if !t.valid(n.ID) {
		return resp, false // what was read may be another process's
	}
	if err1 != nil || err2 != nil {
		return refuse(unix.EACCES) // a process that cannot be told apart may not exec
	}
	p := proc{pid: tgid, start: st.start}
	path, e, known := "", unix.Errno(0), false
	if err3 == nil && v == t.view {
		path, e, known = refusal(tgid, tid, execCallOf(&n.Data))
	}
	if afterCheck != nil {
		afterCheck(path, e)
	}
	if known && e != 0 {
		t.mu.Lock()
		t.stats.Refused++
		t.mu.Unlock()
		return refuse(e)
	}
	t.count(p)
	return seccompResp{Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}, true
}

// idValidOld is the number SECCOMP_IOCTL_NOTIF_ID_VALID had in the first
// kernels with user notification, which later ones still take.
const idValidOld = 0x80082102

// valid says whether the caller of notification id still waits for its
// answer: while it does, its pid is its own.
func (t *Tree) valid(id uint64) bool {
	err := ioctl(t.lis.Fd(), unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id))
	if err == unix.EINVAL {
		err = ioctl(t.lis.Fd(), idValidOld, unsafe.Pointer(&id))
	}
	return err == nil
}

// count records an exec that goes through. An exec of the root after it
// has forked (a child of baton's own program aside: see hasChild) taints
// the root, and so the whole tree; any other settles the root, since its
// process descends from it.
func (t *Tree) count(p proc) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.execs[p.pid]
	if r.start != p.start {
		r = record{start: p.start}
	}
	r.n++
	t.execs[p.pid] = r
	t.stats.Execs++
	if p != t.root {
		t.settled = true
		return
	}
	if !t.settled {
		s, err := readStat(p.pid)
		t.settled = err != nil || s.cminflt > 0 || hasChild(p.pid, t.self)
	}
	if t.settled {
		t.tainted = true
	}
}

// Classify says what the process pid is to the session. A call from the
// tree settles the root: the root's later execs taint it. A call from
// outside changes nothing.
func (t *Tree) Classify(pid int) Verdict {
	chain, ok := t.walk(pid)
	if !ok {
		return Verdict{Kind: Outside, Reason: "it is not a process of the agent's session"}
	}
	exe, err := statID("/proc/" + strconv.Itoa(pid) + "/exe")
	t.mu.Lock()
	defer t.mu.Unlock()
	t.settled = true
	return t.judge(chain, err == nil && exe == t.self)
}

// walk follows the parent links from pid to the root: ok is false when
// they do not lead there. A parent that started after its child is a new
// process with a gone parent's pid.
func (t *Tree) walk(pid int) (chain []procStat, ok bool) {
	after := ^uint64(0)
	for range maxDepth {
		s, err := readStat(pid)
		if err != nil || s.start > after {
			return chain, false
		}
		chain = append(chain, s)
		if s.pid == t.root.pid {
			return chain, s.proc == t.root
		}
		if s.ppid <= 0 {
			return chain, false
		}
		after, pid = s.start, s.ppid
	}
	return chain, false
}

// judge applies the rule to a chain from the caller (first) to the root
// (last): the caller is baton's binary, exec'd exactly once since it was
// forked, and no process between it and the root has exec'd. The root
// itself may call, as long as it is baton's binary.
func (t *Tree) judge(chain []procStat, isBaton bool) Verdict {
	ran := func(format string, a ...any) Verdict { return Verdict{Kind: Ran, Reason: fmt.Sprintf(format, a...)} }
	if t.tainted {
		return ran("the agent's program was replaced by another after it had started")
	}
	for i := len(chain) - 2; i >= 1; i-- {
		if p := chain[i]; t.execsOf(p.proc) > 0 {
			return ran("it was started by %q (process %d), a program the agent ran", p.comm, p.pid)
		}
	}
	if len(chain) > 1 {
		switch n := t.execsOf(chain[0].proc); {
		case n == 0:
			return ran("it did not start baton: it is a copy of the process that started it")
		case n > 1:
			return ran("its process ran %d programs in turn: a wrapper such as env, or a script that execs, came before this one", n)
		}
	}
	if !isBaton {
		return ran("its program %q is not baton", chain[0].comm)
	}
	return Verdict{Kind: Agent}
}

// execsOf is how many execs p has made since it was forked.
func (t *Tree) execsOf(p proc) int {
	if r := t.execs[p.pid]; r.start == p.start {
		return r.n
	}
	return 0
}

// ClassifyConn classifies the process at the other end of a unix socket
// connection. Where the kernel gives a descriptor of that process
// (SO_PEERPIDFD, Linux 6.5), a caller that is gone by the end of the
// classification is Outside, so that a pid reused meanwhile is not
// mistaken for it.
func (t *Tree) ClassifyConn(c syscall.Conn) Verdict {
	raw, err := c.SyscallConn()
	if err != nil {
		return Verdict{Kind: Outside, Reason: "the connection has no socket"}
	}
	pidfd, pid := -1, 0
	err = raw.Control(func(fd uintptr) {
		var e error
		if pidfd, e = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PEERPIDFD); e == nil {
			return
		}
		pidfd = -1
		cred, e := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if e == nil {
			pid = int(cred.Pid)
		}
	})
	gone := Verdict{Kind: Outside, Reason: "the calling process has exited"}
	if err != nil || (pidfd < 0 && pid <= 0) {
		return gone
	}
	if pidfd < 0 {
		return t.Classify(pid)
	}
	defer unix.Close(pidfd)
	if pid = pidOf(pidfd); pid <= 0 {
		return gone
	}
	v := t.Classify(pid)
	if unix.PidfdSendSignal(pidfd, 0, nil, 0) != nil {
		return gone
	}
	return v
}

// pidOf reads the pid a pidfd refers to: -1 once the process is gone.
func pidOf(pidfd int) int {
	b, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(pidfd))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Pid:"); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				return n
			}
		}
	}
	return -1
}
