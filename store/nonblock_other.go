//go:build !unix

package store

import "os"

// openNonblock opens path read-only.
func openNonblock(path string) (*os.File, error) { return os.Open(path) }

// openOverwrite is not offered here: files are replaced whole.
func openOverwrite(string) (*os.File, error) { return nil, errNotOverwritable }
