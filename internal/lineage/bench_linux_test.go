//go:build linux && (amd64 || arm64)

package lineage

import (
	"os"
	"os/exec"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkExec is the cost of one fork, exec and wait of /bin/true by the
// agent's shell, supervised and not: the difference is what the
// supervision adds to each exec.
func BenchmarkExec(b *testing.B) {
	if err := Available(); err != nil {
		b.Skip(err)
	}
	loop := func(n int) []string {
		return []string{"/bin/sh", "-c", `i=0; while [ $i -lt ` + strconv.Itoa(n) + ` ]; do /bin/true; i=$((i+1)); done`}
	}
	b.Run("supervised", func(b *testing.B) {
		h := newHarness(b)
		before := cpuTime(b)
		b.ResetTimer()
		a := h.start(b, loop(b.N), false)
		a.wait(b)
		b.StopTimer()
		// the launcher's own processor time: what the supervision costs it
		b.ReportMetric(float64(cpuTime(b)-before)/float64(b.N), "launcher-cpu-ns/exec")
		a.tree.Close()
		if s := a.tree.Stats(); s.Execs != b.N+1 {
			b.Fatalf("%+v: want %d execs", s, b.N+1)
		}
	})
	b.Run("plain", func(b *testing.B) {
		self, err := os.Executable()
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(self, append([]string{"--"}, loop(b.N)...)...)
		cmd.Args[0] = "lineage-helper"
		cmd.Env = append(childEnv(), envPlain+"=1")
		b.ResetTimer()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	})
}

// BenchmarkSession is the cost of a session's start and end, supervised
// (the helper installs its filter and hands it over) and not, with an
// agent that runs true.
func BenchmarkSession(b *testing.B) {
	if err := Available(); err != nil {
		b.Skip(err)
	}
	b.Run("supervised", func(b *testing.B) {
		h := newHarness(b)
		for b.Loop() {
			a := h.start(b, []string{"/bin/true"}, false)
			a.wait(b)
			a.tree.Close()
		}
	})
	b.Run("plain", func(b *testing.B) {
		self, err := os.Executable()
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			cmd := exec.Command(self, "--", "/bin/true")
			cmd.Args[0], cmd.Env = "lineage-helper", append(childEnv(), envPlain+"=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
}

// cpuTime is the processor time this process has used, in nanoseconds.
func cpuTime(b *testing.B) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
