//go:build !unix

package bridge

import "os/exec"

func startGroup(*exec.Cmd) {}

func stopGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }

func killGroup(*exec.Cmd) {}

func interruptGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
