//go:build !unix

package store

import "os"

// openNonblock opens path read-only.
func openNonblock(path string) (*os.File, error) { return os.Open(path) }

// noFollow is 0 here: there is no O_NOFOLLOW to refuse a link with.
const noFollow = 0
