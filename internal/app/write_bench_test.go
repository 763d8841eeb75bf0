//go:build unix

package app_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/workflow"
)

// The in-process cost of one write, start-up aside: an IMPLEMENT session
// records a session with its commits named, as the bench's add-session
// does (go test -run='^$' -bench=AddSession ./app). Each call opens the
// repository and the state as a process would.
func BenchmarkAddSession(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	base := f.git("rev-parse", "HEAD")
	f.git("switch", "-q", "-c", "feature/work")
	f.commit("a.txt", "a\n", "Implement the handler")
	c1 := f.git("rev-parse", "HEAD")
	f.commit("b.txt", "b\n", "Add tests for the handler")
	c2 := f.git("rev-parse", "HEAD")
	impl := f.start(workflow.Implement, "", "feature/work")
	in := app.AddSessionInput{Agent: workflow.Implement, Outcome: "READY_FOR_REVIEW", Summary: "Implemented the handler, validation and tests",
		CommitFrom: base, Commits: []string{c1 + ":Implement the handler", c2 + ":Add tests for the handler"}}
	before := cpuTime()
	for b.Loop() {
		if _, err := f.app.AddSession(ctx, impl, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-before).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// cpuTime is the process's user and system time so far: on a shared
// machine, steadier than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
