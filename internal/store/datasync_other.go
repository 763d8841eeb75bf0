//go:build !linux

package store

import "os"

// datasync makes f's content durable (a full sync here).
func datasync(f *os.File) error { return f.Sync() }

// syncFile makes f durable: fsync.
func syncFile(f *os.File) error { return f.Sync() }

// startWriteback does nothing here: each fsync writes its own file.
func startWriteback(*os.File) {}
