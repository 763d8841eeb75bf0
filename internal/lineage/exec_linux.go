//go:build linux && (amd64 || arm64)

package lineage

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pathMax is the kernel's limit on a path, its terminating NUL included.
const pathMax = unix.PathMax

// execCall is an execve or execveat as the notification gives it.
type execCall struct {
	at    bool   // execveat
	dirfd int32  // execveat's directory, or AT_FDCWD
	path  uint64 // the path's address in the caller's memory
	flags int    // execveat's flags
}

func execCallOf(d *seccompData) execCall {
	if d.Nr == unix.SYS_EXECVEAT {
		return execCall{at: true, dirfd: int32(d.Args[0]), path: d.Args[1], flags: int(d.Args[4])}
	}
	return execCall{dirfd: unix.AT_FDCWD, path: d.Args[0]}
}

// refusal is the error the kernel would give the exec of c by thread tid
// (of process pid), known says whether it could be told, and path is the
// path the exec names. It is 0 when the path names an executable regular
// file; the exec is then let through and counted, whatever the kernel
// decides of it later.
func refusal(pid, tid int, c execCall) (path string, e unix.Errno, known bool) {
	path, e, known = readPath(tid, c.path)
	if e != 0 || !known {
		if e == unix.EFAULT && c.at && c.flags&unix.AT_EMPTY_PATH != 0 {
			return "", 0, false // a NULL path with AT_EMPTY_PATH: newer kernels take it
		}
		return path, e, known
	}
	full, e := target(pid, tid, c, path)
	if e != 0 {
		return path, e, true
	}
	flag := 0
	if c.flags&unix.AT_SYMLINK_NOFOLLOW != 0 && path != "" {
		flag = unix.AT_SYMLINK_NOFOLLOW
	}
	var st unix.Stat_t
	if err := unix.Fstatat(unix.AT_FDCWD, full, &st, flag); err != nil {
		e, known = walkErrno(err)
		return path, e, known
	}
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return path, unix.ELOOP, true
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return path, unix.EACCES, true
	}
	if err := unix.Faccessat(unix.AT_FDCWD, full, unix.X_OK, unix.AT_EACCESS); err != nil {
		e, known = walkErrno(err)
		return path, e, known
	}
	return path, 0, true
}

// walkErrno keeps the errors a path walk gives the exec as well; any other
// is not known to be the exec's.
func walkErrno(err error) (unix.Errno, bool) {
	var e unix.Errno
	if errors.As(err, &e) {
		switch e {
		case unix.ENOENT, unix.ENOTDIR, unix.EACCES, unix.ELOOP, unix.ENAMETOOLONG:
			return e, true
		}
	}
	return 0, false
}

// target is the path, as the launcher may open it, of the file the exec of
// path names: relative paths lead from the caller's working directory or
// execveat's directory, through /proc; /proc/self is the caller's.
func target(pid, tid int, c execCall, path string) (string, unix.Errno) {
	dir := "/proc/" + strconv.Itoa(pid)
	if path == "" && (!c.at || c.flags&unix.AT_EMPTY_PATH == 0) {
		return "", unix.ENOENT
	}
	if strings.HasPrefix(path, "/") {
		if rest, ok := strings.CutPrefix(path, "/proc/self/"); ok {
			return dir + "/" + rest, 0
		}
		if rest, ok := strings.CutPrefix(path, "/proc/thread-self/"); ok {
			return dir + "/task/" + strconv.Itoa(tid) + "/" + rest, 0
		}
		return path, 0
	}
	if c.dirfd == unix.AT_FDCWD {
		if path == "" {
			return dir + "/cwd", 0
		}
		return dir + "/cwd/" + path, 0
	}
	fd := dir + "/fd/" + strconv.Itoa(int(c.dirfd))
	var st unix.Stat_t
	if err := unix.Stat(fd, &st); err != nil {
		return "", unix.EBADF
	}
	if path == "" {
		return fd, 0
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return "", unix.ENOTDIR
	}
	return fd + "/" + path, 0
}

// readPath reads the NUL-terminated path at addr in the memory of thread
// tid, as the kernel would: EFAULT when it is not all readable, and
// ENAMETOOLONG when it does not end within pathMax bytes. Known is false
// when the memory could not be read for another reason.
func readPath(tid int, addr uint64) (path string, e unix.Errno, known bool) {
	buf := make([]byte, pathMax)
	page := uint64(unix.Getpagesize())
	first := min(page-addr%page, pathMax)
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: int(first)}}
	if first < pathMax {
		// a page that is not mapped ends the read there, not the whole of it
		remote = append(remote, unix.RemoteIovec{Base: uintptr(addr + first), Len: int(pathMax - first)})
	}
	local := []unix.Iovec{{Base: unsafe.SliceData(buf)}}
	local[0].SetLen(len(buf))
	n, err := unix.ProcessVMReadv(tid, local, remote, 0)
	if errors.Is(err, unix.EFAULT) {
		return "", unix.EFAULT, true
	}
	if err != nil {
		return "", 0, false
	}
	if i := bytes.IndexByte(buf[:n], 0); i >= 0 {
		return string(buf[:i]), 0, true
	}
	if n < len(buf) {
		return "", unix.EFAULT, true
	}
	return "", unix.ENAMETOOLONG, true
}
