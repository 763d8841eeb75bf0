//go:build !linux

package runner

// dieWithSession has no kernel support here: the agent outlives a lost
// session until it exits.
func dieWithSession() error { return nil }
