//go:build !linux

package store

import "errors"

// exchange is not available here: the caller renames instead.
func exchange(a, b string) error { return errors.New("exchanging names is not supported here") }
