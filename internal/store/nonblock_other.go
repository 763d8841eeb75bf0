//go:build !unix

package store

import "os"

// openNonblock opens path read-only.
func openNonblock(path string) (*os.File, error) { return os.Open(path) }

// openOverwrite is not offered here: files are replaced whole.
func openOverwrite(string) (*os.File, error) { return nil, errNotOverwritable }

// openOverwriteSize is not offered either.
func openOverwriteSize(string) (*os.File, int64, error) { return nil, 0, errNotOverwritable }

// noFollow is 0 here: there is no O_NOFOLLOW to refuse a link with.
const noFollow = 0

// nonBlock is 0 here.
const nonBlock = 0
