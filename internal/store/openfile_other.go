//go:build !unix

package store

import "os"

// OpenFile is os.OpenFile.
func OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}
