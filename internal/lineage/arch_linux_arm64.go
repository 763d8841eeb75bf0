package lineage

import "golang.org/x/sys/unix"

// nativeArch is the audit architecture of this build's system calls.
const nativeArch = unix.AUDIT_ARCH_AARCH64

// x32Bit is x86_64's alone: arm64 has no such ABI.
const x32Bit = 0
