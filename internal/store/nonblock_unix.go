//go:build unix

package store

import (
	"os"
	"syscall"
)

// openNonblock opens path read-only without waiting for a writer (a FIFO
// opened this way returns at once, and its type is then refused).
func openNonblock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// noFollow makes an open of baton's own files (the locks, the log) fail on
// a symbolic link planted in their place, rather than create or write the
// file it leads to.
const noFollow = syscall.O_NOFOLLOW
