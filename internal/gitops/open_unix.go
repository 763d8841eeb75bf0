//go:build unix

package gitops

import (
	"io"
	"os"
	"syscall"
)

// openRead opens path for reading with a blocking descriptor, which
// os.NewFile leaves out of the runtime's network poller: os.Open tries to
// add every file to it, at five system calls per file, and a write reads
// main, HEAD and the current branch while it holds the state lock.
func openRead(path string) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// readFile is os.ReadFile through openRead.
func readFile(path string) ([]byte, error) {
	f, err := openRead(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
