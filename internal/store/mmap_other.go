//go:build !unix

package store

import "os"

// Map reads a state file whole where memory mapping is not available.
func Map(path string) ([]byte, os.FileInfo, func(), error) {
	b, err := ReadRegular(path)
	if err != nil || b == nil {
		return nil, nil, func() {}, err
	}
	fi, err := os.Stat(path)
	return b, fi, func() {}, err
}

// inode is not available here; size and modification time identify a file.
func inode(os.FileInfo) uint64 { return 0 }

// mapOpen reads the open file f whole.
func mapOpen(f *os.File, size int64) ([]byte, func(), error) {
	b, err := readAll(f, size)
	return b, func() {}, err
}
