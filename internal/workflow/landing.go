package workflow

import (
	"fmt"
	"strings"
)

// The landing queue's rules: when a passing review's merge waits in the
// queue rather than moving main at once, who lands it, and what a
// conflict or a failing gate sends back.

// GateActor is the landing queue's own actor: it records the reviews that
// send queued work back. No session is ever opened as it.
const GateActor = "GATE"

// Land is the landing queue's act. No agent role may take it: the
// launcher lands, one item at a time.
const Land Action = "land queued work on main"

// Queued says whether a passing review's merge enters the landing queue:
// when several agents run at once or a gate is configured. With one agent
// and no gate it moves main at once.
func Queued(agents int, g Gate) bool { return agents > 1 || g.Configured() }

// QueuedReason is the pipeline reason of an item waiting in the queue.
func QueuedReason(review int, branch string, g Gate) string {
	gate := "no gate configured"
	if g.Configured() {
		gate = fmt.Sprintf("gate %q", g.Command)
	}
	return fmt.Sprintf("R%d passed: %s waits in the landing queue (%s); the launcher lands it", review, branch, gate)
}

// SendBack is the critical issue a gate review records for queued work
// that did not land: a merge conflict (paths) or a failing gate (its
// exit and the tail of its output).
type SendBack struct {
	Branch, Into string
	Conflicts    []string
	Command      string
	ExitCode     int
	TimedOut     bool
	Tail         string
	// Refused is why the landing's own checks refused it ("" for none).
	Refused string
	// Batched: the failing run gated it together with other queued items,
	// and bisecting the batch found that it breaks the gate.
	Batched bool
}

// Summary is the gate review's summary.
func (s SendBack) Summary() string {
	switch {
	case len(s.Conflicts) > 0:
		return fmt.Sprintf("landing queue: merging %s into %s conflicts in %s", s.Branch, s.Into, strings.Join(s.Conflicts, ", "))
	case s.Refused != "":
		return fmt.Sprintf("landing queue: %s could not land: %s", s.Branch, s.Refused)
	case s.TimedOut:
		return fmt.Sprintf("landing queue: the gate %q timed out on %s merged into %s", s.Command, s.Branch, s.Into)
	}
	return fmt.Sprintf("landing queue: the gate %q failed (exit %d) on %s merged into %s%s", s.Command, s.ExitCode, s.Branch, s.Into, s.batched())
}

// batched is what a summary adds when bisecting a batch found the item.
func (s SendBack) batched() string {
	if !s.Batched {
		return ""
	}
	return " (bisecting a batch of queued work found it)"
}

// Issue is the critical issue's description: what to do, and the evidence.
func (s SendBack) Issue() string {
	switch {
	case len(s.Conflicts) > 0:
		return fmt.Sprintf("%s does not merge cleanly into %s: conflicts in %s. Merge %s into %s, resolve those paths, commit, and end the session READY_FOR_REVIEW.", s.Branch, s.Into, strings.Join(s.Conflicts, ", "), s.Into, s.Branch)
	case s.Refused != "":
		return s.Refused
	}
	what := fmt.Sprintf("exited %d", s.ExitCode)
	if s.TimedOut {
		what = "ran past its timeout"
	}
	if s.Batched {
		return fmt.Sprintf("the gate %q %s on a batch of queued work merged into %s, and bisecting the batch found that %s is what breaks it, so it did not land. Make it pass on %s merged into %s, commit, and end the session READY_FOR_REVIEW. The end of the gate's output:\n%s", s.Command, what, s.Into, s.Branch, s.Branch, s.Into, s.Tail)
	}
	return fmt.Sprintf("the gate %q %s on %s merged into %s, so it did not land. Make it pass on the merged tree, commit, and end the session READY_FOR_REVIEW. The end of its output:\n%s", s.Command, what, s.Branch, s.Into, s.Tail)
}
