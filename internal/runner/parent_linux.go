package runner

import "golang.org/x/sys/unix"

// dieWithSession makes the kernel kill this process, and the agent it
// becomes, when its parent (the runner's sshd session) ends: a lost
// connection or a stopped launcher leaves no agent running on the runner.
func dieWithSession() error {
	return unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
}
