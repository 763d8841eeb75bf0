//go:build !unix

package gitops

import (
	"io"
	"os"
	"syscall"
)

// readLoose reads a loose ref file: only a regular file has content (any
// other reads as empty, a broken ref), and a directory is EISDIR.
func readLoose(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case fi.IsDir():
		return nil, &os.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
	case !fi.Mode().IsRegular():
		return nil, nil
	}
	return io.ReadAll(f)
}
