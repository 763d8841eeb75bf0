package lineage

import "golang.org/x/sys/unix"

// nativeArch is the audit architecture of this build's system calls.
const nativeArch = unix.AUDIT_ARCH_X86_64

// x32Bit marks the x32 ABI's system calls, which share the x86_64
// architecture: the filter kills a process that makes one.
const x32Bit = 0x40000000
