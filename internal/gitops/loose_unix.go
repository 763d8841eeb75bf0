//go:build unix

package gitops

import (
	"os"
	"syscall"
)

// readLoose reads a loose ref file. Only a regular file has content: a
// FIFO, device or socket left under refs/ (which a plain read would block
// on) reads as empty — a broken ref — and a directory is EISDIR. Raw
// system calls keep the descriptor out of the runtime's poller (see
// openRead) at fewer calls than a plain read: open, fstat, one read (of
// the size fstat gave), close.
func readLoose(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
	case syscall.S_IFDIR:
		return nil, &os.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
	default:
		return nil, nil
	}
	buf := make([]byte, 0, min(st.Size, 1<<16)+1)
	for {
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return buf, nil
		}
		buf = buf[:len(buf)+n]
		if int64(len(buf)) == st.Size { // all fstat saw: refs are replaced, never appended to
			return buf, nil
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}
