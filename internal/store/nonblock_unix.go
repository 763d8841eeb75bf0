//go:build unix

package store

import (
	"os"
	"syscall"
)

// openNonblock opens path read-only without waiting for a writer (a FIFO
// opened this way returns at once, and its type is then refused).
func openNonblock(path string) (*os.File, error) {
	fd, err := openFd(path, syscall.O_RDONLY|syscall.O_NONBLOCK)
	if err == nil {
		err = clearNonblock(fd)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// openFd opens path (close-on-exec) for a file whose descriptor is blocking
// when the caller makes it an *os.File: os.NewFile then leaves it out of
// the runtime's network poller, which a regular file cannot join anyway.
// (os.OpenFile tries, at the cost of five system calls per file, and sets
// the poller up, with its own descriptors, on the first file a process
// opens: a --field read opens nothing else.)
func openFd(path string, flags int) (int, error) {
	for {
		fd, err := syscall.Open(path, flags|syscall.O_CLOEXEC, 0o644)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// openOverwrite opens path for writing in place: never through a symbolic
// link, never waiting on a FIFO, and only a regular file with no other
// link (so that the write changes no other name's content).
func openOverwrite(path string) (*os.File, error) {
	f, _, err := openOverwriteSize(path)
	return f, err
}

// openOverwriteSize is openOverwrite that also gives the file's size.
func openOverwriteSize(path string) (*os.File, int64, error) {
	f, err := OpenFile(path, os.O_WRONLY|nonBlock|noFollow, 0)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err == nil {
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !fi.Mode().IsRegular() || !ok || st.Nlink != 1 {
			err = errNotOverwritable
		}
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// noFollow makes an open of baton's own files (the locks, the log) fail on
// a symbolic link planted in their place, rather than create or write the
// file it leads to.
const noFollow = syscall.O_NOFOLLOW

// nonBlock makes an open of a FIFO planted in place of one of baton's files
// return at once instead of waiting for the other end (the file's type is
// then refused); it changes nothing for a regular file.
const nonBlock = syscall.O_NONBLOCK

// clearNonblock makes the descriptor fd, opened with O_NONBLOCK and none
// of the other flags F_SETFL sets (O_APPEND, O_ASYNC, O_DIRECT, O_NOATIME),
// blocking: one fcntl, where syscall.SetNonblock reads the flags first. On
// an error fd is closed.
func clearNonblock(fd int) error {
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFL, 0); e != 0 {
		syscall.Close(fd)
		return e
	}
	return nil
}
