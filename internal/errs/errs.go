// Package errs holds baton's typed errors and the one mapping from an error's
// kind to the process exit code. Every layer returns these; only the command
// layer turns them into an exit status.
package errs

import (
	"errors"
	"fmt"
)

// Kind classifies an error by what the caller should do about it.
type Kind int

// The kinds, each with its own exit code (see Code).
const (
	Unexpected  Kind = iota // a bug or an environment failure: exit 1
	Usage                   // a bad flag, argument or input value: exit 2
	Policy                  // refused by the rules (role, fix-cycle limit): exit 3
	NotFound                // an unknown id or missing file: exit 4
	Conflict                // lock timeout, merge conflict, stale request: exit 5
	Invalid                 // a corrupt or schema-invalid state file: exit 6
	NeedAgent               // a bridge checkpoint: exit 42
	Interrupted             // Ctrl-C: exit 130
	MaxSessions             // baton run stopped at --max-sessions before DONE: exit 7
	Budget                  // baton run stopped before a session past its cost budget: exit 8
	Unreachable             // a runner that ssh cannot reach: exit 9
)

// Exit codes, documented in the README and in `baton --help`.
const (
	ExitOK          = 0
	ExitUnexpected  = 1
	ExitUsage       = 2
	ExitPolicy      = 3
	ExitNotFound    = 4
	ExitConflict    = 5
	ExitInvalid     = 6
	ExitNeedAgent   = 42
	ExitInterrupted = 130
	ExitMaxSessions = 7
	ExitBudget      = 8
	ExitUnreachable = 9
)

var codes = map[Kind]int{
	Unexpected:  ExitUnexpected,
	Usage:       ExitUsage,
	Policy:      ExitPolicy,
	NotFound:    ExitNotFound,
	Conflict:    ExitConflict,
	Invalid:     ExitInvalid,
	NeedAgent:   ExitNeedAgent,
	Interrupted: ExitInterrupted,
	MaxSessions: ExitMaxSessions,
	Budget:      ExitBudget,
	Unreachable: ExitUnreachable,
}

var names = map[Kind]string{
	Unexpected:  "unexpected",
	Usage:       "usage",
	Policy:      "refused",
	NotFound:    "not_found",
	Conflict:    "conflict",
	Invalid:     "invalid_state",
	NeedAgent:   "need_agent",
	Interrupted: "interrupted",
	MaxSessions: "max_sessions",
	Budget:      "budget",
	Unreachable: "unreachable",
}

// String names the kind as it appears in JSON error output.
func (k Kind) String() string { return names[k] }

// Error is an error with a kind. Msg is the whole human message; Err, when
// set, is the underlying cause kept for errors.Is/As.
type Error struct {
	Kind Kind
	Msg  string
	Err  error
	// Exit, when not 0, is the exit status instead of the kind's: a
	// command stopped by SIGTERM exits 143, by SIGHUP 129 (kind Interrupted).
	Exit int
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// New returns an error of the given kind with a formatted message. A %w verb
// keeps the wrapped error as the cause.
func New(k Kind, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &Error{Kind: k, Msg: err.Error(), Err: errors.Unwrap(err)}
}

// KindOf reports the kind of err: the outermost *Error in its chain, else
// Unexpected.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Unexpected
}

// Code maps an error to the process exit code: nil is 0.
func Code(err error) int {
	if err == nil {
		return ExitOK
	}
	var e *Error
	if errors.As(err, &e) && e.Exit != 0 {
		return e.Exit
	}
	return codes[KindOf(err)]
}

// Is reports whether err is of kind k.
func Is(err error, k Kind) bool {
	return err != nil && KindOf(err) == k
}
