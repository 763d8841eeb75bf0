package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCrashSafetyGit kills `reviews merge` and `reviews reject` with
// SIGKILL at random moments — from process start to past the end of an
// uninterrupted run — and checks after each kill, once the next command has
// run, that git and the state files agree: a review records its merge
// exactly when main contains the branch and the branch is gone, and a
// rejection exactly when its branch is gone; otherwise main is where it
// was, the branch is where the review saw it, and the checkout of main is
// clean. A killed merge or rejection is then retried, which must succeed
// once (one merge commit per branch). verify is clean at the end.
//
// BATON_GIT_CRASH_ITERATIONS sets the number of kills (default 40, 12
// with -short).
func TestCrashSafetyGit(t *testing.T) {
	iterations := envInt(t, "BATON_GIT_CRASH_ITERATIONS", 40)
	if testing.Short() && os.Getenv("BATON_GIT_CRASH_ITERATIONS") == "" {
		iterations = 12
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d iterations", seed, iterations)
	rng := rand.New(rand.NewPCG(seed, 0x676974))
	dir := t.TempDir()
	git := gitIn(t, dir)
	git("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "README")
	git("commit", "-q", "-m", "initial commit")
	mustBaton(t, dir, "init", "--name", "git-crash")
	appendFeatures(t, dir, iterations+2, 20)
	plantRefLeftovers(t, dir)

	took := map[string]time.Duration{}
	var killed, finished, mergedByKilled, undone int
	for i := 0; i < iterations+2; i++ {
		op := "merge"
		if rng.IntN(3) == 0 {
			op = "reject"
		}
		feature, branch := featureID(i+1), fmt.Sprintf("feature/f%03d", i+1)
		reviewID := prepareBranch(t, dir, git, i, feature, branch, op)
		mainBefore, headBefore := git("rev-parse", "main"), git("rev-parse", branch)
		args := []string{"reviews", op, "--review", strconv.Itoa(reviewID)}
		if i < 2 { // calibrate: how long an uninterrupted run takes
			start := time.Now()
			mustBaton(t, dir, args...)
			took[op] = time.Since(start)
			if i == 0 && op == "reject" {
				took["merge"] = took[op]
			}
			took["reject"] = max(took["reject"], took[op]/2)
			continue
		}
		delay := time.Duration(rng.Int64N(int64(took[op]*5/4) + 1))
		started := time.Now()
		p := startBaton(t, dir, args...)
		timer := time.AfterFunc(delay, func() { _ = p.cmd.Process.Kill() })
		res := p.wait(t)
		timer.Stop()
		wasKilled := res.signal == syscall.SIGKILL
		if !wasKilled { // follow the machine's speed: kills spread over the whole run
			took[op] = (3*took[op] + time.Since(started)) / 4
		} else {
			took[op] = max(took[op], delay)
		}
		if !wasKilled && res.code != 0 {
			t.Fatalf("iteration %d: %s was not killed but failed: %v", i, op, res)
		}
		// the next command (a reader) settles what the killed one left
		mustBaton(t, dir, "reviews", "get-review", strconv.Itoa(reviewID))
		done := checkGitAgrees(t, dir, git, i, op, reviewID, branch, mainBefore, headBefore)
		switch {
		case !wasKilled:
			finished++
		case done:
			killed++
			mergedByKilled++
		default:
			killed++
			undone++
			mustBaton(t, dir, args...) // the retry succeeds, once
			if !checkGitAgrees(t, dir, git, i, op, reviewID, branch, mainBefore, headBefore) {
				t.Fatalf("iteration %d: the retried %s did not take effect", i, op)
			}
		}
	}
	checkMergedOnce(t, git("log", "--merges", "--format=%s", "main"), iterations+2)
	mustBaton(t, dir, "verify")
	t.Logf("%d killed (%d had committed, %d were undone and retried), %d finished before the kill", killed, mergedByKilled, undone, finished)
}

// plantRefLeftovers leaves under refs/heads what killed writers left
// there before: an older baton's empty value and lock-content temps, and
// an empty lock of a branch the loop never writes (as a killed git leaves
// it). Every command must work beside them.
func plantRefLeftovers(t *testing.T, dir string) {
	t.Helper()
	heads := filepath.Join(dir, ".git", "refs", "heads", "feature")
	if err := os.MkdirAll(heads, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".f001.baton-4242", "f002.lock.baton-4242", "other.lock"} {
		if err := os.WriteFile(filepath.Join(heads, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// prepareBranch makes a branch with one commit and a review of it that
// lets op through; it returns the review's id.
func prepareBranch(t *testing.T, dir string, git func(...string) string, i int, feature, branch, op string) int {
	t.Helper()
	git("switch", "-q", "-c", branch, "main")
	name := fmt.Sprintf("file%03d.txt", i+1)
	if err := os.WriteFile(filepath.Join(dir, name), []byte(fmt.Sprintf("work %d\n", i)), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", name)
	git("commit", "-q", "-m", "work on "+feature)
	git("switch", "-q", "main")
	verdict := "PASS"
	if op == "reject" {
		verdict = "REJECT"
	}
	var out struct {
		ReviewID int `json:"review_id"`
	}
	r := baton(t, dir, "--json", "reviews", "add-review", "-a", "REVIEW", "--feature-id", feature, "-b", branch, "-v", verdict, "-s", "review of "+feature,
		"--commit-to", branch)
	if r.code != 0 {
		t.Fatalf("%v", r)
	}
	mustUnmarshal(t, r, &out)
	return out.ReviewID
}

// checkGitAgrees checks that git and the state agree after op on a review,
// and reports whether op took effect.
func checkGitAgrees(t *testing.T, dir string, git func(...string) string, i int, op string, reviewID int, branch, mainBefore, headBefore string) bool {
	t.Helper()
	when := fmt.Sprintf("iteration %d (%s of %s)", i, op, branch)
	if journalExists(t, dir) {
		t.Fatalf("%s: a journal is left", when)
	}
	if _, err := os.Stat(filepath.Join(dir, ".baton", "intent.json")); err == nil {
		t.Fatalf("%s: an intent is left", when)
	}
	if refs := git("for-each-ref", "--format=%(refname)"); strings.Contains(refs, "warning:") {
		t.Fatalf("%s: git finds a broken ref (an empty or half-written file under refs/):\n%s", when, refs)
	}
	var rv map[string]any
	mustUnmarshal(t, baton(t, dir, "--json", "reviews", "get-review", strconv.Itoa(reviewID)), &rv)
	branchGone := exec.Command("git", "-C", dir, "rev-parse", "--verify", "-q", "refs/heads/"+branch).Run() != nil
	mainNow := git("rev-parse", "main")
	if st := git("status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Fatalf("%s: the checkout of main is not clean:\n%s", when, st)
	}
	recorded := rv["merge_commit"] != nil
	if op == "reject" {
		recorded = rv["rejected_at"] != nil
	}
	if !recorded {
		if branchGone || mainNow != mainBefore || git("rev-parse", branch) != headBefore {
			t.Fatalf("%s: the state records no %s, but git changed (main %s -> %s, branch gone %v)", when, op, mainBefore[:7], mainNow[:7], branchGone)
		}
		return false
	}
	if !branchGone {
		t.Fatalf("%s: the state records the %s, but %s still exists", when, op, branch)
	}
	if op == "merge" {
		mc, _ := rv["merge_commit"].(string)
		if !strings.HasPrefix(mainNow, mc) || exec.Command("git", "-C", dir, "merge-base", "--is-ancestor", headBefore, "main").Run() != nil {
			t.Fatalf("%s: the review records merge %s, but main is at %s", when, mc, mainNow[:7])
		}
	} else if mainNow != mainBefore {
		t.Fatalf("%s: a rejection moved main", when)
	}
	return true
}

func gitIn(t *testing.T, dir string) func(...string) string {
	return func(args ...string) string {
		t.Helper()
		c := exec.Command("git", args...)
		c.Dir = dir
		c.Env = append(batonEnv(dir), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.test",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.test")
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
}

// checkMergedOnce checks that no branch was merged twice (by a retry).
func checkMergedOnce(t *testing.T, merges string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		want := fmt.Sprintf("Merge branch 'feature/f%03d'", i+1)
		if c := strings.Count(merges, want+" "); c > 1 {
			t.Fatalf("%s appears %d times on main: a retry merged twice", want, c)
		}
	}
}
