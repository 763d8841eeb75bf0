//go:build linux && (amd64 || arm64)

package lineage

import (
	"golang.org/x/sys/unix"
)

// Offsets into struct seccomp_data: the call's number, its architecture,
// and the low half of its first argument (both architectures are little
// endian).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
)

// insn is one BPF instruction whose jumps name labels.
type insn struct {
	code   uint16
	k      uint32
	jt, jf string
	label  string
}

func load(off uint32) insn { return insn{code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, k: off} }

func jeq(k uint32, jt, jf string) insn {
	return insn{code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, k: k, jt: jt, jf: jf}
}

func ret(k uint32) insn { return insn{code: unix.BPF_RET | unix.BPF_K, k: k} }

func errno(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e)&unix.SECCOMP_RET_DATA }

// program is the filter: execve and execveat go to the launcher; the calls
// that read or drive another process's memory fail with EPERM, and so do a
// clone that would give the child its caller's parent and a prctl that
// would make a process adopt orphans; clone3, whose flags the filter cannot
// read, fails with ENOSYS (the C library then uses clone); a call of
// another architecture, or of x32, kills the process.
func program() []insn {
	p := []insn{
		load(offArch),
		jeq(nativeArch, "", "kill"),
		load(offNr),
	}
	if x32Bit != 0 {
		p = append(p, insn{code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, k: x32Bit, jt: "kill"})
	}
	p = append(p,
		jeq(unix.SYS_EXECVE, "notify", ""),
		jeq(unix.SYS_EXECVEAT, "notify", ""),
		jeq(unix.SYS_PTRACE, "eperm", ""),
		jeq(unix.SYS_PROCESS_VM_READV, "eperm", ""),
		jeq(unix.SYS_PROCESS_VM_WRITEV, "eperm", ""),
		jeq(unix.SYS_PIDFD_GETFD, "eperm", ""),
		jeq(unix.SYS_CLONE3, "enosys", ""),
		jeq(unix.SYS_CLONE, "clone", ""),
		jeq(unix.SYS_PRCTL, "prctl", ""),
		ret(unix.SECCOMP_RET_ALLOW),
		insn{label: "clone", code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, k: offArg0},
		insn{code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, k: unix.CLONE_PARENT, jt: "eperm"},
		ret(unix.SECCOMP_RET_ALLOW),
		insn{label: "prctl", code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, k: offArg0},
		jeq(unix.PR_SET_CHILD_SUBREAPER, "eperm", ""),
		ret(unix.SECCOMP_RET_ALLOW),
		insn{label: "notify", code: unix.BPF_RET | unix.BPF_K, k: unix.SECCOMP_RET_USER_NOTIF},
		insn{label: "eperm", code: unix.BPF_RET | unix.BPF_K, k: errno(unix.EPERM)},
		insn{label: "enosys", code: unix.BPF_RET | unix.BPF_K, k: errno(unix.ENOSYS)},
		insn{label: "kill", code: unix.BPF_RET | unix.BPF_K, k: unix.SECCOMP_RET_KILL_PROCESS},
	)
	return p
}

// assemble resolves the labels into the kernel's relative jumps; an empty
// label falls through to the next instruction.
func assemble(p []insn) []unix.SockFilter {
	at := map[string]int{}
	for i, in := range p {
		if in.label != "" {
			at[in.label] = i
		}
	}
	off := func(i int, label string) uint8 {
		if label == "" {
			return 0
		}
		to, ok := at[label]
		if !ok || to <= i || to-i-1 > 255 {
			panic("lineage: bad jump to " + label)
		}
		return uint8(to - i - 1)
	}
	out := make([]unix.SockFilter, len(p))
	for i, in := range p {
		out[i] = unix.SockFilter{Code: in.code, K: in.k, Jt: off(i, in.jt), Jf: off(i, in.jf)}
	}
	return out
}
