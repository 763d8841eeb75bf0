//go:build !unix

package gitops

import "os"

// openRead is os.Open.
func openRead(path string) (*os.File, error) { return os.Open(path) }

// readFile is os.ReadFile.
func readFile(path string) ([]byte, error) { return os.ReadFile(path) }
