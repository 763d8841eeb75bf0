//go:build !unix

package store

import (
	"errors"
	"io/fs"
	"os"
)

// Map reads a state file whole where memory mapping is not available.
func Map(path string) ([]byte, os.FileInfo, func(), error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, func() {}, nil
	}
	if err != nil {
		return nil, nil, func() {}, err
	}
	fi, err := os.Stat(path)
	return b, fi, func() {}, err
}

// inode is not available here; size and modification time identify a file.
func inode(os.FileInfo) uint64 { return 0 }
