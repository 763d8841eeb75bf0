//go:build unix

package store

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// Map returns a state file's bytes mapped read-only, so that a read which
// looks at the first fields of a large file only touches those pages, and
// the file's FileInfo. The release function must be called when done. A
// missing file is (nil, nil, nil).
func Map(path string) ([]byte, os.FileInfo, func(), error) {
	f, fi, err := OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, func() {}, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	if fi.Size() == 0 {
		return []byte{}, fi, func() {}, nil
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		b, rerr := readAll(f, fi.Size())
		return b, fi, func() {}, rerr
	}
	return data, fi, func() { _ = syscall.Munmap(data) }, nil
}

// inode is the file's inode number: a rename gives a file a new one.
func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// mapOpen maps the open regular file f of size bytes read-only (read
// whole where it cannot be mapped); release unmaps it.
func mapOpen(f *os.File, size int64) ([]byte, func(), error) {
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		b, rerr := readAll(f, size)
		return b, func() {}, rerr
	}
	return data, func() { _ = syscall.Munmap(data) }, nil
}
