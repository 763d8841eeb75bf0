//go:build !unix

package gitops

import "os"

// mapReadOnly reads a file whole where memory mapping is not available.
func mapReadOnly(path string) ([]byte, error) { return os.ReadFile(path) }
