package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/baton-cli/baton/bench/gen"
	"github.com/baton-cli/baton/internal/sandbox"
)

// laneProject is a git repository holding a baton project of n features,
// run with config, and the path of the scripted agent.
func laneProject(t *testing.T, n int, config string) (dir, agent string) {
	t.Helper()
	dir = t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=e2e", "-c", "user.email=e2e@example.test", "commit", "-q", "--allow-empty", "-m", "initial commit"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	mustBaton(t, dir, "init", "--name", "lanes")
	if err := os.WriteFile(filepath.Join(dir, ".baton", "config"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	mustBaton(t, dir, "--as", "HUMAN", "--reason", "e2e lanes", "reconcile")
	appendFeatures(t, dir, n, 10)
	agent = filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(agent, []byte(gen.LaneAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, agent
}

// gitEnv is what the scripted agents need: baton on PATH, and an
// identity to commit as.
func gitEnv(c *exec.Cmd) {
	c.Env = append(c.Env, "PATH="+filepath.Dir(batonBin)+string(os.PathListSeparator)+os.Getenv("PATH"), "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.test", "GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.test")
}

// landedOnMain counts, per feature, the merges on main that name it.
func landedOnMain(t *testing.T, dir string) map[string]int {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "log", "--merges", "--format=%(trailers:key=Baton-Feature,valueonly)", "main").Output()
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, l := range strings.Fields(string(out)) {
		n[l]++
	}
	return n
}

// checkLanded holds the feature list against main: a feature passes if
// and only if exactly one merge on main brought it.
func checkLanded(t *testing.T, when, dir string) {
	t.Helper()
	on := landedOnMain(t, dir)
	f := parseFeatures(t, readState(t, dir, "feature_list.json"))
	for _, x := range f.Features {
		switch {
		case on[x.ID] > 1:
			t.Fatalf("%s: %s landed %d times", when, x.ID, on[x.ID])
		case x.Passes != (on[x.ID] == 1):
			t.Fatalf("%s: %s passes=%v but %d merge(s) on main bring it", when, x.ID, x.Passes, on[x.ID])
		}
	}
}

// TestLanesEight runs eight scripted agents at once to DONE: every feature
// lands once, session and review ids are unique, no update is lost, and
// verify is clean.
func TestLanesEight(t *testing.T) {
	const n = 12
	dir, agent := laneProject(t, n, `{"agents": 8, "architecture_interval": 100, "lock_timeout_seconds": 60, "gate": {"command": "true", "timeout": "1m"}}`)
	c := batonCmd(dir, "run", "--agent-cmd", "sh "+agent, "--max-sessions", "100")
	gitEnv(c)
	if out, err := c.CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, ".baton", "logs", "session-1.log"))
		t.Fatalf("baton run --agents 8: %v\n%s\n%s", err, out, log)
	}
	p := parseProgress(t, readState(t, dir, progressName))
	// sessions are recorded as they end, so in no particular order; their
	// ids are 1..N, each once
	ids := make([]sessionRec, len(p.Sessions))
	copy(ids, p.Sessions)
	sort.Slice(ids, func(i, j int) bool { return ids[i].SessionID < ids[j].SessionID })
	checkSessionIDs(t, "after the run", ids)
	if len(p.Sessions) != 2*n {
		t.Errorf("%d sessions recorded, want %d (IMPLEMENT and REVIEW of each feature)", len(p.Sessions), 2*n)
	}
	r := decode[reviewsFile](t, "reviews.json", readState(t, dir, "reviews.json"))
	seen := map[int]bool{}
	for _, rv := range r.Reviews {
		if seen[rv.ReviewID] {
			t.Errorf("review id %d twice", rv.ReviewID)
		}
		seen[rv.ReviewID] = true
	}
	if len(r.Reviews) != n {
		t.Errorf("%d reviews, want %d", len(r.Reviews), n)
	}
	checkLanded(t, "after the run", dir)
	if on := landedOnMain(t, dir); len(on) != n {
		t.Errorf("%d features landed on main, want %d", len(on), n)
	}
	mustBaton(t, dir, "verify")
}

// TestLanesKilledWhileLanding kills a run of three lanes with SIGKILL at
// random moments, many of them while the queue lands (the gate takes a
// while), and starts it again each time: main moved if and only if the
// landing is recorded, nothing lands twice, and the run resumes to DONE
// with verify clean.
//
// BATON_LANES_KILL_ITERATIONS sets the number of kills (default 12, 4 with
// -short).
func TestLanesKilledWhileLanding(t *testing.T) { killWhileLanding(t) }

// TestLanesKilledWhileLandingSandboxed is the same loop under --sandbox:
// each lane's agent and the gate confined by the kernel, the agents'
// brokers dying with the launcher.
func TestLanesKilledWhileLandingSandboxed(t *testing.T) {
	if sandbox.ABI() < sandbox.MinABI {
		t.Skip("no OS sandbox here (Landlock, Linux 6.2 or later)")
	}
	killWhileLanding(t, "--sandbox")
}

// killWhileLanding is the loop of TestLanesKilledWhileLanding, with extra
// arguments to baton run.
// laneRun is the run of the kill loop; with --sandbox among its arguments
// the sandbox is the system's, not the one these tests' environment turns off.
func laneRun(dir string, run []string) *exec.Cmd {
	c := batonCmd(dir, run...)
	gitEnv(c)
	if slices.Contains(run, "--sandbox") {
		c.Env = append(c.Env, "BATON_SANDBOX_UNAVAILABLE=")
	}
	return c
}

// killFeatures is the kill loop's project: enough landings, each through a
// gate run, that most runs are killed before the project is DONE.
const killFeatures = 16

func killWhileLanding(t *testing.T, extra ...string) {
	iterations := envInt(t, "BATON_LANES_KILL_ITERATIONS", 12)
	if testing.Short() && os.Getenv("BATON_LANES_KILL_ITERATIONS") == "" {
		iterations = 4
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d iterations", seed, iterations)
	rng := rand.New(rand.NewPCG(seed, 0x6c616e))
	dir, agent := laneProject(t, killFeatures, `{"agents": 3, "architecture_interval": 100, "max_error_retries": 100000, "lock_timeout_seconds": 60, "gate": {"command": "sleep 0.3", "timeout": "1m"}}`)
	run := append([]string{"run", "--agent-cmd", "sh " + agent, "--max-sessions", "100"}, extra...)
	killed := 0
	for i := 0; i < iterations; i++ {
		c := laneRun(dir, run)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(rng.Int64N(int64(1500*time.Millisecond))) + 200*time.Millisecond
		timer := time.AfterFunc(delay, func() { _ = c.Process.Kill() })
		err := c.Wait()
		timer.Stop()
		if ee, ok := err.(*exec.ExitError); ok && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
			killed++
		} else if err != nil {
			t.Fatalf("iteration %d: a run that was not killed failed: %v", i, err)
		}
		// a reader first finishes what the killed run left (an intent, a
		// journal), as the next command always does
		mustBaton(t, dir, "features", "list")
		checkLanded(t, fmt.Sprintf("iteration %d, killed after %v", i, delay), dir)
	}
	c := laneRun(dir, run)
	if out, err := c.CombinedOutput(); err != nil {
		logs, _ := filepath.Glob(filepath.Join(dir, ".baton", "logs", "session-*.log"))
		sort.Strings(logs)
		last := []byte{}
		if len(logs) > 0 {
			last, _ = os.ReadFile(logs[len(logs)-1])
		}
		t.Fatalf("the last run did not finish: %v\n%s\n%s", err, out, last)
	}
	checkLanded(t, "at the end", dir)
	if on := landedOnMain(t, dir); len(on) != killFeatures {
		t.Errorf("%d features landed, want %d", len(on), killFeatures)
	}
	if open := readState(t, dir, filepath.Join(".baton", "sessions.json")); strings.Contains(string(open), `"session_id"`) {
		t.Fatalf("a session is still open:\n%s", open)
	}
	mustBaton(t, dir, "verify")
	// a kill between a landing and its attestation loses nothing: every
	// landing has one, and they hold up from git alone
	if out := mustBaton(t, dir, "verify", "--from-git"); !strings.Contains(out, fmt.Sprintf("OK: %d landing(s) on main checked from git alone", killFeatures)) {
		t.Errorf("verify --from-git:\n%s", out)
	}
	t.Logf("%d of %d runs killed", killed, iterations)
}

// TestLanesSignals stops a run of three lanes with SIGINT while every
// lane's agent (and a child of each) runs: every agent group is killed,
// every session ends as ERROR (interrupted), baton exits 130, and no
// session stays open.
func TestLanesSignals(t *testing.T) {
	bin := raceBaton(t)
	dir, _ := laneProject(t, 3, `{"agents": 3, "architecture_interval": 100}`)
	pids := t.TempDir()
	agent := `sleep 600 & echo $! > ` + pids + `/child.$$; wait`
	c := exec.Command(bin, "run", "--agent-cmd", agent, "--max-sessions", "10")
	c.Dir, c.Env = dir, batonEnv(dir)
	gitEnv(c)
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	var children []int
	for deadline := time.Now().Add(time.Minute); len(children) < 3; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("three agents did not start:\n%s", stderr.String())
		}
		children = children[:0]
		files, _ := filepath.Glob(filepath.Join(pids, "child.*"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && len(strings.TrimSpace(string(b))) > 0 {
				var pid int
				fmt.Sscan(string(b), &pid)
				children = append(children, pid)
			}
		}
	}
	if err := c.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if got := exitCode(c.Wait()); got != 130 {
		t.Fatalf("baton run after SIGINT: exit %d, want 130\n%s", got, stderr.String())
	}
	for _, pid := range children {
		waitGone(t, pid)
	}
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
	if len(p.Sessions) != 3 {
		t.Fatalf("%d sessions recorded, want 3:\n%s", len(p.Sessions), stderr.String())
	}
	for _, s := range p.Sessions {
		if s.Outcome != "ERROR" || s.Failure.Code != "interrupted" {
			t.Errorf("a session after the signal: %+v, want ERROR (interrupted)", s)
		}
	}
	if open := readState(t, dir, filepath.Join(".baton", "sessions.json")); strings.Contains(string(open), `"session_id"`) {
		t.Fatalf("a session is still open:\n%s", open)
	}
	mustBaton(t, dir, "verify")
}
