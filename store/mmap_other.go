//go:build !unix

package store

import (
	"errors"
	"io/fs"
	"os"
)

// Map reads a state file whole where memory mapping is not available.
func Map(path string) ([]byte, func(), error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, func() {}, nil
	}
	return b, func() {}, err
}
