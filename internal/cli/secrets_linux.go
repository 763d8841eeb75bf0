//go:build linux

package cli

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// nonDumpable keeps this process's memory and environment from processes
// of the same user: /proc/PID/mem, environ and ptrace then need
// CAP_SYS_PTRACE, which the agent's helper gives up (dropPtrace).
func nonDumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("making baton's process non-dumpable: %w", err)
	}
	return nil
}

// dropPtrace gives up CAP_SYS_PTRACE on the calling (locked) thread for
// good, before it execs the agent: from its bounding, inheritable,
// permitted and effective sets, so that an agent running as root cannot
// read the memory of the non-dumpable launcher either. Without the
// capability there is nothing to drop.
func dropPtrace() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("reading the helper's capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_CAPBSET_DROP, unix.CAP_SYS_PTRACE, 0, 0, 0); err != nil && err != unix.EPERM {
		return fmt.Errorf("dropping CAP_SYS_PTRACE from the bounding set: %w", err)
	}
	bit := uint32(1) << (unix.CAP_SYS_PTRACE % 32)
	d := &data[unix.CAP_SYS_PTRACE/32]
	if (d.Effective|d.Permitted|d.Inheritable)&bit == 0 {
		return nil
	}
	d.Effective &^= bit
	d.Permitted &^= bit
	d.Inheritable &^= bit
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("dropping CAP_SYS_PTRACE: %w", err)
	}
	return nil
}
