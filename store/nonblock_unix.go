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

// openOverwrite opens path for writing in place: never through a symbolic
// link, never waiting on a FIFO, and only a regular file with no other
// link (so that the write changes no other name's content).
func openOverwrite(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
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
		return nil, err
	}
	return f, nil
}
