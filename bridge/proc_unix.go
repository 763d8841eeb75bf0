//go:build unix

package bridge

import (
	"os/exec"
	"syscall"
)

// startGroup puts the agent in a process group of its own, so that a
// timeout stops the shell and everything it started.
func startGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// stopGroup asks the agent's process group to terminate.
func stopGroup(cmd *exec.Cmd) error {
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
}

// killGroup kills whatever is left of the agent's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// interruptGroup passes Ctrl-C on to a process group of its own.
func interruptGroup(cmd *exec.Cmd) error {
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
}
