//go:build !linux

package cli

// nonDumpable has no portable form: the docs say what holds elsewhere.
func nonDumpable() error { return nil }

// dropPtrace has nothing to drop outside Linux.
func dropPtrace() error { return nil }
