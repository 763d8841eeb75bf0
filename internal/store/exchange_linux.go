//go:build linux

package store

import "golang.org/x/sys/unix"

// exchange swaps the files at a and b atomically (both must exist).
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
