package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	raceOnce sync.Once
	raceBin  string
	raceErr  error
)

// raceBaton builds baton with the race detector once (the signal handling
// runs goroutines: the agent's wait, the signal watcher, the cleanup).
func raceBaton(t *testing.T) string {
	raceOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			raceErr = err
			return
		}
		raceBin = filepath.Join(filepath.Dir(batonBin), "baton-race")
		build := exec.Command("go", "build", "-race", "-o", raceBin, "github.com/baton-cli/baton/cmd/baton")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			raceErr = &buildError{err, string(out)}
		}
	})
	if raceErr != nil {
		t.Fatalf("building baton with -race: %v", raceErr)
	}
	return raceBin
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// TestRunSignals stops `baton run` with SIGINT, SIGTERM and SIGHUP while its
// agent (and a child of the agent) runs: baton kills the agent's process
// group, ends the open session as ERROR with failure signature interrupted,
// and exits 130, 143 or 129; the next run starts cleanly.
func TestRunSignals(t *testing.T) {
	bin := raceBaton(t)
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}, {syscall.SIGHUP, 129}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			dir := newProject(t)
			appendFeatures(t, dir, 2, 10)
			agent := `sleep 600 & echo $! > child.pid; echo $$ > agent.pid; wait`
			c := exec.Command(bin, "run", "--agent-cmd", agent, "--max-sessions", "3")
			c.Dir, c.Env = dir, batonEnv(dir)
			var stderr bytes.Buffer
			c.Stderr = &stderr
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			child := waitPid(t, filepath.Join(dir, "child.pid"))
			waitPid(t, filepath.Join(dir, "agent.pid"))
			if err := c.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			err := c.Wait()
			if got := exitCode(err); got != tc.code {
				t.Fatalf("baton run after %v: exit %d, want %d\n%s", tc.sig, got, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), "session ended as ERROR (interrupted)") {
				t.Errorf("the message does not say what was done:\n%s", stderr.String())
			}
			waitGone(t, child)
			var p struct {
				Sessions []struct {
					Outcome string `json:"outcome"`
					Failure struct {
						Code string `json:"code"`
					} `json:"failure_signature"`
				} `json:"sessions"`
			}
			if err := json.Unmarshal(readState(t, dir, progressName), &p); err != nil {
				t.Fatal(err)
			}
			if n := len(p.Sessions); n != 1 || p.Sessions[0].Outcome != "ERROR" || p.Sessions[0].Failure.Code != "interrupted" {
				t.Fatalf("sessions after the signal: %+v, want one ERROR (interrupted)", p.Sessions)
			}
			open := readState(t, dir, filepath.Join(".baton", "sessions.json"))
			if bytes.Contains(open, []byte(`"session_id"`)) {
				t.Fatalf("a session is still open:\n%s", open)
			}
			// the next run starts cleanly (its agent does nothing: the
			// session is ended for it, and the run goes on)
			next := exec.Command(bin, "run", "--agent-cmd", "true", "--max-sessions", "1")
			next.Dir, next.Env = dir, batonEnv(dir)
			if out, err := next.CombinedOutput(); exitCode(err) != 7 { // stopped at --max-sessions
				t.Fatalf("the next run: %v\n%s", err, out)
			}
		})
	}
}

// waitPid waits for a pid file an agent writes, and returns the pid.
func waitPid(t *testing.T, path string) int {
	t.Helper()
	for i := 0; i < 3000; i++ {
		if b, err := os.ReadFile(path); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil {
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s was never written: the agent did not start", path)
	return 0
}

// waitGone waits until pid has exited (a zombie awaiting its reaper counts
// as gone).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for i := 0; i < 500; i++ {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
			return
		}
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("the agent's child %d still runs: its process group was not killed", pid)
}
