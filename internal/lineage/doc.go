// Package lineage tells an agent's own baton calls from the calls of code
// the agent ran. A call is the agent's own when the calling process is
// baton's binary (the launcher's own, by device and inode), started by
// exactly one exec from the agent's program with no other program in
// between: every process from the caller up to the
// session's first process has exec'd nothing since it was forked. A test
// the agent runs (make, then sh, then baton), a script that execs baton,
// `env baton` or a git hook all put another program in between, so their
// calls are code the agent ran, and may not act for the session.
//
// The kernel counts the execs: the helper that starts the agent installs a
// seccomp filter that hands every execve and execveat of the agent's tree
// to the launcher (user notification), which counts each exec it lets
// through, and answers itself for one that names no executable file, so
// that a failed attempt of a PATH search is not counted. The same filter
// keeps every process of the tree from reading or driving another's
// memory through ptrace and its kin, from giving a child its own parent,
// and from adopting orphans, so that the parent links the classification
// follows stay true.
// Installing it sets no_new_privs: setuid programs such as sudo gain no
// privileges inside an agent's session.
//
// Available says whether the system can do this (Linux 5.5 or later on
// amd64 or arm64, with seccomp); where it cannot, a launcher falls back to
// serving any descendant of the agent, and says so.
package lineage

import "fmt"

// Kind is what a calling process is to the session.
type Kind int

const (
	// Outside: not a process of the session's tree (or no longer one).
	Outside Kind = iota
	// Ran: a process of code the agent ran, not the agent's own call.
	Ran
	// Agent: the agent's own call.
	Agent
)

func (k Kind) String() string {
	switch k {
	case Outside:
		return "outside"
	case Ran:
		return "ran"
	case Agent:
		return "agent"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Verdict is the classification of one calling process.
type Verdict struct {
	Kind Kind
	// Reason says, for the log, why a call is not the agent's own; empty
	// for Agent.
	Reason string
}

// Stats counts what a supervisor answered.
type Stats struct {
	// Execs are the execs it let through, each counted for its process.
	Execs int
	// Refused are the execs it answered with an error itself, since they
	// named no executable file (the kernel would have failed them too).
	Refused int
}
