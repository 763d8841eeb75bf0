package cli_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/store"
)

// reviews merge is one transaction across git and the files: with a fault
// injected at each step of the commit path, a merge that fails before its
// commit point leaves git as it was (main, its checkout, the branch) and
// the files unchanged, and its retry merges once; one that fails after it
// exits 0, and the next command finishes it. Either way, in the end main
// has exactly one merge of the branch and the review records it.
func TestMergeFaultAtEachCommitStep(t *testing.T) {
	defer store.SetFaultHook(nil)
	for _, tc := range []struct{ op, verdict string }{{"merge", "PASS"}, {"reject", "REJECT"}} {
		for _, step := range store.CommitSteps {
			t.Run(tc.op+"/"+step, func(t *testing.T) { faultDuring(t, tc.op, tc.verdict, step) })
		}
	}
}

// faultDuring injects a fault at step of `reviews op` (merge or reject).
func faultDuring(t *testing.T, op, verdict, step string) {
	dir, git := reviewedBranch(t, verdict)
	main, head := git("rev-parse", "main"), git("rev-parse", "feature/greeting")
	before := readState(t, dir)

	fired := failOnce(step, errors.ErrUnsupported)
	code, out := batonIn(dir, asPerson("reviews", op)...)
	store.SetFaultHook(nil)
	if !*fired {
		t.Fatalf("step %s was never reached\n%s", step, out)
	}
	if afterCommitPoint[step] {
		if code != 0 {
			t.Fatalf("fault after the commit point: exit %d, want 0\n%s", code, out)
		}
	} else {
		if code == 0 {
			t.Fatalf("fault before the commit point: exit 0\n%s", out)
		}
		if got := git("rev-parse", "main"); got != main {
			t.Errorf("main at %s after a failed merge, want it back at %s\n%s", got[:7], main[:7], out)
		}
		if got := git("rev-parse", "feature/greeting"); got != head {
			t.Errorf("the branch is at %s, want %s", got, head)
		}
		if _, err := os.Stat(filepath.Join(dir, "greet.sh")); err == nil {
			t.Error("the checkout of main still shows the merged file")
		}
		for f, b := range readState(t, dir) {
			if string(b) != string(before[f]) {
				t.Errorf("%s changed although the merge failed before its commit point", f)
			}
		}
		mustIn(t, dir, asPerson("reviews", op)...) // the retry
	}
	mustIn(t, dir, "verify")
	if _, err := os.Stat(filepath.Join(dir, ".baton", "intent.json")); err == nil {
		t.Error("the intent is left after the next command")
	}
	if st := git("status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Errorf("the checkout of main is not clean:\n%s", st)
	}
	rv, _ := os.ReadFile(filepath.Join(dir, "reviews.json"))
	if exec.Command("git", "-C", dir, "rev-parse", "--verify", "-q", "refs/heads/feature/greeting").Run() == nil {
		t.Error("the branch still exists")
	}
	if op == "reject" {
		if !gjson.GetBytes(rv, "reviews.0.rejected_at").Exists() || git("rev-parse", "main") != main {
			t.Errorf("after the rejection: main %s (was %s), review %s", git("rev-parse", "--short", "main"), main[:7], gjson.GetBytes(rv, "reviews.0").Raw)
		}
		return
	}
	if n := len(strings.Fields(git("log", "--merges", "--format=%h", "main"))); n != 1 {
		t.Errorf("%d merge commits on main, want exactly 1", n)
	}
	if mc := gjson.GetBytes(rv, "reviews.0.merge_commit").String(); mc == "" || !strings.HasPrefix(git("rev-parse", "main"), mc) {
		t.Errorf("the review records merge %q, main is at %s", mc, git("rev-parse", "--short", "main"))
	}
}

// reviewedBranch is a repository whose branch feature/greeting (one commit)
// has a review with verdict, and a git runner in it.
func reviewedBranch(t *testing.T, verdict string) (string, func(...string) string) {
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		c := exec.Command("git", args...)
		c.Dir = dir
		c.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.test",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.test")
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("config", "user.name", "t")
	git("config", "user.email", "t@example.test")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "a.txt")
	git("commit", "-q", "-m", "initial commit")
	mustIn(t, dir, "init")
	mustIn(t, dir, asPerson("features", "append", "-s", "spec", "-e", `[{"id":"F001","name":"Greeting"}]`)...)
	mustIn(t, dir, asPerson("branch", "create", "feature/greeting")...)
	git("switch", "-q", "feature/greeting")
	if err := os.WriteFile(filepath.Join(dir, "greet.sh"), []byte("echo hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "greet.sh")
	git("commit", "-q", "-m", "add greet")
	git("switch", "-q", "main")
	mustIn(t, dir, asPerson("reviews", "add-review", "-a", "REVIEW", "--feature-id", "F001", "-b", "feature/greeting", "-v", verdict, "-s", "good")...)
	return dir, git
}
