package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

// readerLimit bounds a read beside a stopped writer: a read takes tens of
// milliseconds, and a reader that waited for the writer would never end.
const readerLimit = 5 * time.Second

// TestReadersBesideAStoppedWriter stops a writer (SIGSTOP) before it takes
// the lock, while it holds the lock, and after its journal is written (its
// commit point), and runs every read command meanwhile, as real processes:
// each answers at once (exit 0) from the last committed state — the
// session the writer adds is there exactly when its journal is — and
// verify finds nothing wrong. Continued, the writer finishes, once.
func TestReadersBesideAStoppedWriter(t *testing.T) {
	dir := readerProject(t)
	inflateSessions(t, dir, 2000) // a write long enough to stop at each step
	lock := filepath.Join(dir, ".baton", "lock")
	steps := map[string]int{}
	slowest := time.Duration(0)
	for i := 0; i < 24; i++ {
		trigger := []string{"start", "lock", "journal"}[i%3]
		summary := fmt.Sprintf("stopped writer %d", i)
		before := strings.TrimSpace(mustBaton(t, dir, "progress", "get-session", "-1", "--field", "summary"))
		w := startBaton(t, dir, "progress", "add-session", "-a", "IMPLEMENT", "-s", summary, "-o", "SUCCESS")
		pid := w.cmd.Process.Pid
		defer release(w) // on a failure, the writer is never left stopped
		if !stopWhen(w.cmd.Process, trigger, dir, pid) {
			w.wait(t) // it finished before it could be stopped there
			continue
		}
		step := stoppedStep(t, dir, lock, summary)
		steps[step]++
		want := before
		if step == "after the journal" || step == "after its commit" {
			want = summary // committed: read through the journal, or in place
		}
		for _, args := range readerCommands {
			slowest = max(slowest, runReader(t, dir, step, args))
		}
		if got := strings.TrimSpace(mustBaton(t, dir, "progress", "get-session", "-1", "--field", "summary")); got != want {
			t.Fatalf("stopped %s: the last session read is %q, want %q (the committed state)", step, got, want)
		}
		if err := w.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		if r := w.wait(t); r.code != 0 {
			t.Fatalf("the writer stopped %s, continued: %v", step, r)
		}
		if got := strings.TrimSpace(mustBaton(t, dir, "progress", "get-session", "-1", "--field", "summary")); got != summary {
			t.Fatalf("after the writer stopped %s finished: the last session is %q, want %q", step, got, summary)
		}
	}
	mustBaton(t, dir, "verify")
	t.Logf("writers stopped: %v; the slowest read beside one took %v", steps, slowest)
	for _, s := range []string{"before the lock", "holding the lock", "after the journal"} {
		if steps[s] == 0 {
			t.Errorf("no writer was stopped %s: the loop proves nothing there (%v)", s, steps)
		}
	}
}

// release ends a writer the test stopped and has not reaped (its pid is
// still its own until then).
func release(w *proc) {
	if w.cmd.ProcessState == nil {
		_ = w.cmd.Process.Signal(syscall.SIGCONT)
		_ = w.cmd.Process.Kill()
	}
}

// stopWhen stops the process p (baton, pid) at once ("start"), once it
// holds the state lock ("lock": its pid is in the lock file), or once its
// journal exists ("journal"); false when it exited first.
func stopWhen(p *os.Process, trigger, dir string, pid int) bool {
	holder := fmt.Sprintf("pid %d ", pid)
	journal := filepath.Join(dir, ".baton", "journal")
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var ready bool
		switch trigger {
		case "start":
			ready = true
		case "lock":
			b, _ := os.ReadFile(filepath.Join(dir, ".baton", "lock"))
			ready = strings.Contains(string(b), holder)
		case "journal":
			_, err := os.Stat(journal)
			ready = err == nil
		}
		if ready {
			return p.Signal(syscall.SIGSTOP) == nil && running(pid)
		}
		if !running(pid) {
			return false
		}
	}
	return false
}

// running says whether pid is a live process (not yet a zombie).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// stoppedStep names where the stopped writer is: whether it holds the
// lock, and whether its journal (its commit point) exists or its change
// (summary) is in place already.
func stoppedStep(t *testing.T, dir, lock, summary string) string {
	t.Helper()
	if journalExists(t, dir) {
		return "after the journal"
	}
	if strings.Contains(string(readState(t, dir, progressName)), summary) {
		return "after its commit"
	}
	fl := flock.New(lock)
	ok, err := fl.TryLock()
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		_ = fl.Unlock()
		return "before the lock"
	}
	return "holding the lock"
}

// runReader runs one read command beside the stopped writer; it must exit
// 0 within readerLimit. It returns how long it took.
func runReader(t *testing.T, dir, step string, args []string) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readerLimit)
	defer cancel()
	base := batonCmd(dir, args...)
	c := exec.CommandContext(ctx, base.Path, base.Args[1:]...)
	c.Dir, c.Env = dir, base.Env
	start := time.Now()
	out, err := c.CombinedOutput()
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("baton %v beside a writer stopped %s did not answer within %v", args, step, readerLimit)
	}
	if err != nil {
		t.Fatalf("baton %v beside a writer stopped %s: %v\n%s", args, step, err, out)
	}
	return took
}
