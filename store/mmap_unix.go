//go:build unix

package store

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// Map returns a state file's bytes mapped read-only, so that a read which
// looks at the first fields of a large file only touches those pages. The
// release function must be called when done. A missing file is (nil, nil).
func Map(path string) ([]byte, func(), error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, func() {}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if fi.Size() == 0 {
		return []byte{}, func() {}, nil
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		b, rerr := os.ReadFile(path)
		return b, func() {}, rerr
	}
	return data, func() { _ = syscall.Munmap(data) }, nil
}
