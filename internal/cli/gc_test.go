package cli

import (
	"math"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestProcessGC: a one-shot command runs without the collector under the
// memory limit; a command that lives, or a process given GOMEMLIMIT,
// collects at 400%; GOGC set leaves everything as it is.
func TestProcessGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	for _, c := range []struct {
		args, env   string
		percent     int
		memoryLimit int64
	}{
		{"progress get-status --field current_branch", "", -1, oneShotMemoryLimit},
		{"--json reviews add-review -v PASS", "", -1, oneShotMemoryLimit},
		{"--version", "", -1, oneShotMemoryLimit},
		{"run --agent claude", "", 400, math.MaxInt64},
		{"-d /tmp/s mcp", "", 400, math.MaxInt64},
		{"demo", "", 400, math.MaxInt64},
		{"bridge loop -- make orchestrate", "", 400, math.MaxInt64},
		{"bridge status", "", -1, oneShotMemoryLimit},
		{"progress list", "GOMEMLIMIT", 400, math.MaxInt64},
		{"progress list", "GOGC", 100, math.MaxInt64},
	} {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
		SetProcessGC(strings.Fields(c.args), func(k string) string {
			if k == c.env {
				return "1"
			}
			return ""
		})
		percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
		if percent != c.percent || limit != c.memoryLimit {
			t.Errorf("%q (%s set): GC percent %d, memory limit %d; want %d, %d", c.args, c.env, percent, limit, c.percent, c.memoryLimit)
		}
	}
}

// TestProcessProcs: a write of the three groups runs on one processor; a
// read, a command of no group, a help or completion request, and a
// process given GOMAXPROCS keep theirs.
func TestProcessProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range []struct {
		args, env string
		one       bool
	}{
		{"progress add-session -a IMPLEMENT -o READY_FOR_REVIEW", "", true},
		{"--json reviews add-review -v PASS", "", true},
		{"-d /tmp/s features pass F001", "", true},
		{"--as HUMAN --reason why features add --id F9", "", true},
		{"progress get-status --field current_branch", "", false},
		{"reviews get-last --field verdict", "", false},
		{"features next-candidates", "", false},
		{"progress add-session --help", "", false},
		{"__complete progress add-", "", false},
		{"session start --agent IMPLEMENT", "", false},
		{"run --agent claude", "", false},
		{"--version", "", false},
		{"progress add-session -a IMPLEMENT", "GOMAXPROCS", false},
	} {
		runtime.GOMAXPROCS(2)
		SetProcessProcs(strings.Fields(c.args), func(k string) string {
			if k == c.env {
				return "2"
			}
			return ""
		})
		if got := runtime.GOMAXPROCS(0); (got == 1) != c.one {
			t.Errorf("%q (%s set): GOMAXPROCS %d, want one processor: %v", c.args, c.env, got, c.one)
		}
	}
}
