//go:build unix

package store

import (
	"os"
	"syscall"
)

// OpenFile is os.OpenFile for the files a transaction opens: the descriptor
// is blocking once open (an O_NONBLOCK in flag kept a FIFO from blocking
// the open, and is cleared then), so that os.NewFile leaves it out of the
// runtime's network poller, which a regular file or directory cannot join
// anyway: os.OpenFile tries, at five system calls per file (four fcntl and
// an epoll_ctl that fails), and a write opens about twenty files while it
// holds the lock. Errors are *os.PathError, as os.OpenFile's.
func OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := openFdMode(path, flag, uint32(perm.Perm()))
	if err == nil && flag&syscall.O_NONBLOCK != 0 {
		if flag&syscall.O_APPEND != 0 {
			err = syscall.SetNonblock(fd, false) // keeps O_APPEND
			if err != nil {
				syscall.Close(fd)
			}
		} else {
			err = clearNonblock(fd)
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// openFdMode is openFd with the mode a created file gets.
func openFdMode(path string, flags int, mode uint32) (int, error) {
	for {
		fd, err := syscall.Open(path, flags|syscall.O_CLOEXEC, mode)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}
