package e2e

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestCrashSafetyRun kills `baton run` with SIGKILL at random moments —
// opening a session, while its agent runs, ending the session — and checks
// that the next run resumes cleanly: it kills the orphaned agent, ends the
// session the killed run drove as ERROR (interrupted), and goes on; no
// session stays open, session ids stay gap-free, and verify is clean.
//
// BATON_RUN_CRASH_ITERATIONS sets the number of kills (default 25, 8 with
// -short).
func TestCrashSafetyRun(t *testing.T) {
	iterations := envInt(t, "BATON_RUN_CRASH_ITERATIONS", 25)
	if testing.Short() && os.Getenv("BATON_RUN_CRASH_ITERATIONS") == "" {
		iterations = 8
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d iterations", seed, iterations)
	rng := rand.New(rand.NewPCG(seed, 0x72756e))
	dir := t.TempDir()
	// an agent that never ends its session is retried without limit
	if err := os.MkdirAll(filepath.Join(dir, ".baton"), 0o755); err != nil {
		t.Fatal(err)
	}
	config := `{"max_fix_cycles": 3, "architecture_interval": 5, "tech_debt_threshold": 5, "max_error_retries": 100000, "lock_timeout_seconds": 60}`
	if err := os.WriteFile(filepath.Join(dir, ".baton", "config"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	mustBaton(t, dir, "init", "--name", "run-crash")
	appendFeatures(t, dir, 3, 10)
	run := []string{"run", "--agent-cmd", "sleep 0.05", "--max-sessions", "2"}
	start := time.Now()
	if r := baton(t, dir, run...); r.code != 7 { // stopped at --max-sessions
		t.Fatalf("%v", r)
	}
	took := time.Since(start)
	killed, reclaimed := 0, 0
	for i := 0; i < iterations; i++ {
		delay := time.Duration(rng.Int64N(int64(took*5/4) + 1))
		p := startBaton(t, dir, run...)
		timer := time.AfterFunc(delay, func() { _ = p.cmd.Process.Kill() })
		res := p.wait(t)
		timer.Stop()
		if res.signal == syscall.SIGKILL {
			killed++
		} else if res.code != 7 {
			t.Fatalf("iteration %d: a run that was not killed failed: %v", i, res)
		}
		next := baton(t, dir, "run", "--agent-cmd", "true", "--max-sessions", "1")
		if next.code != 7 {
			t.Fatalf("iteration %d (killed after %v): the next run did not resume: %v", i, delay, next)
		}
		if bytes.Contains([]byte(next.stderr), []byte("was killed: ending the session")) {
			reclaimed++
		}
		if _, err := os.Stat(filepath.Join(dir, ".baton", "run.json")); err == nil {
			t.Fatalf("iteration %d: .baton/run.json is left after a finished run", i)
		}
		if open := readState(t, dir, filepath.Join(".baton", "sessions.json")); bytes.Contains(open, []byte(`"session_id"`)) {
			t.Fatalf("iteration %d: a session is still open:\n%s", i, open)
		}
		p2 := decode[progressFile](t, progressName, readState(t, dir, progressName))
		checkSessionIDs(t, "after the next run", p2.Sessions)
	}
	mustBaton(t, dir, "verify")
	t.Logf("%d runs killed; the next run ended a killed run's session %d times", killed, reclaimed)
}
