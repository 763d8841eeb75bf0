package cli

import (
	"runtime"
	"runtime/debug"

	"github.com/baton-cli/baton/internal/lazy"
)

// The collector. Most baton commands live a few milliseconds and their heap
// is mostly the state files they read: collecting before they exit only
// costs time (a tenth of the CPU of a read on a 10,000-session state). So a
// one-shot command runs with the collector off, and a memory limit instead
// of a growth ratio: should a command's heap reach the limit, the collector
// runs then, as often as it must. The commands that live — baton run, its
// demo, baton mcp, the bridge loop — keep the collector on. GOGC and
// GOMEMLIMIT, when set, are left alone.

// oneShotMemoryLimit is the heap size at which a one-shot command collects.
const oneShotMemoryLimit = 512 << 20

// longRunning are the command paths (after "baton") of the commands that
// live as long as a session or a whole run.
var longRunning = lazy.Value[map[string]bool]{Build: func() map[string]bool {
	return map[string]bool{"run": true, "demo": true, "mcp": true, "bridge loop": true}
}}

// LongRunning says whether args run a command that lives (longRunning).
func LongRunning(args []string) bool {
	words := commandWords(args, 2)
	return len(words) > 0 && (longRunning.Get()[words[0]] || (len(words) == 2 && longRunning.Get()[words[0]+" "+words[1]]))
}

// SetProcessGC sets the collector of a baton process for the command args
// run (see above), given its environment; main calls it first.
func SetProcessGC(args []string, getenv func(string) string) {
	if getenv("GOGC") != "" {
		return
	}
	if LongRunning(args) || getenv("GOMEMLIMIT") != "" {
		// a live process (or a limit of the caller's): collect, but less
		// often than Go's default, its heap being mostly the state files
		// it rereads
		debug.SetGCPercent(400)
		return
	}
	debug.SetMemoryLimit(oneShotMemoryLimit)
	debug.SetGCPercent(-1)
}

// Processors. A write of the progress, reviews or features group runs its
// Go code on one processor: it has nothing to run in parallel on a small
// state, and what a second
// processor cost it — threads woken to look for work, their stacks, each
// goroutine handed across — was CPU that concurrent writers, which keep
// every core busy, would have used: 8 writers on 2 cores got through ~5%
// more writes a second. Reads keep every processor: a read of a file baton
// did not write hashes it on one while it validates on another. GOMAXPROCS,
// when set, is left alone.

// SetProcessProcs sets how many processors run the Go code of the command
// args run (see above), given its environment; main calls it first.
func SetProcessProcs(args []string, getenv func(string) string) {
	if getenv("GOMAXPROCS") == "" && groupWrite(args) {
		runtime.GOMAXPROCS(1)
	}
}

// groupWrite says whether args run a command of the progress, reviews or
// features group that may write (one readOnly does not name).
func groupWrite(args []string) bool {
	group, sub := groupRequest(args)
	return sub != "" && !readOnly.Get()["baton "+group+" "+sub]
}
