//go:build !unix

package gitops

import "os"

// processGone says whether no process of id pid runs.
func processGone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	_ = p.Release()
	return false
}

// processStart is "" here: the id alone names the process.
func processStart(int) string { return "" }
