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
