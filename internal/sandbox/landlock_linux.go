package sandbox

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ABI is the Landlock ABI version the kernel offers: 0 when Landlock is
// missing or disabled.
func ABI() int {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0
	}
	return int(v)
}

const (
	fileRead  = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_EXECUTE
	dirRead   = fileRead | unix.LANDLOCK_ACCESS_FS_READ_DIR
	fileWrite = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// handledFS is every file-system right the ABI knows: what a rule does not
// grant is denied.
func handledFS(abi int) uint64 {
	h := uint64(0x1fff) // ABI 1: execute … make_sym
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return h
}

// Exec applies p to this process and replaces it with argv (looked up on
// PATH) in env. It returns only on failure, with nothing started.
func Exec(p Policy, argv, env []string) error {
	if len(argv) == 0 {
		return errors.New("sandbox: no command to run")
	}
	prog, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	// Landlock restricts the calling thread; execve then keeps that
	// thread's domain for the new program and all it starts.
	runtime.LockOSThread()
	if err := Restrict(p); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	return syscall.Exec(prog, argv, env)
}

// Restrict applies p to the calling (locked) thread, for good.
func Restrict(p Policy) error {
	abi := ABI()
	if abi < MinABI {
		return fmt.Errorf("sandbox: Landlock ABI %d is below the %d needed", abi, MinABI)
	}
	handled := handledFS(abi)
	attr := unix.LandlockRulesetAttr{Access_fs: handled}
	if p.NoNet && abi >= 4 {
		attr.Access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if abi >= 6 { // no signals to, nor abstract sockets of, processes outside
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return fmt.Errorf("sandbox: landlock_create_ruleset: %w", e)
	}
	defer unix.Close(int(fd))
	for _, path := range p.ReadWrite {
		if err := addRule(int(fd), path, handled, handled); err != nil {
			return err
		}
	}
	for _, path := range p.ReadOnly {
		if err := addRule(int(fd), path, dirRead, handled); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: no_new_privs: %w", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); e != 0 {
		return fmt.Errorf("sandbox: landlock_restrict_self: %w", e)
	}
	return nil
}

// addRule grants access beneath path (a file gets only the rights that
// apply to files). A path that does not exist is skipped, and so is a read
// rule on a path this user cannot open.
func addRule(ruleset int, path string, access, handled uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) || (access&^dirRead == 0 && (errors.Is(err, unix.EACCES) || errors.Is(err, unix.ELOOP))) {
		return nil // gone, or a read rule on what this user cannot reach anyway
	}
	if err != nil {
		return fmt.Errorf("sandbox: %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("sandbox: %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileRead | fileWrite
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: access & handled, Parent_fd: int32(fd)}
	if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); e != 0 {
		return fmt.Errorf("sandbox: landlock_add_rule %s: %w", path, e)
	}
	return nil
}
