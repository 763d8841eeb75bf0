package gitops_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
)

// refKillOp is a ref write killed at every step: the repository it runs
// in (featureRepo, then setup), the write, and whether it was done.
type refKillOp struct {
	setup func(r *gitRepo)
	run   func(g gitops.Repo) error
	done  func(r *gitRepo, before string) bool
}

var refKillOps = map[string]refKillOp{
	"create": {
		run: func(g gitops.Repo) error {
			main, err := g.Branch("main")
			if err == nil {
				err = g.CreateBranch("feature/new", main)
			}
			return err
		},
		done: func(r *gitRepo, before string) bool {
			h, err := r.gitMaybe("rev-parse", "--verify", "-q", "feature/new")
			if err == nil && h != before {
				r.t.Errorf("feature/new at %s, want absent or %s", h, before)
			}
			return err == nil
		},
	},
	"merge": {
		run: func(g gitops.Repo) error {
			_, err := g.Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m\n", Signature: sig()})
			return err
		},
		done: func(r *gitRepo, before string) bool {
			h := r.git("rev-parse", "main")
			if h != before && r.git("rev-parse", "main^2") != r.git("rev-parse", "feature/a") {
				r.t.Errorf("main at %s, neither before nor the merge", h)
			}
			return h != before
		},
	},
	"detach a worktree's HEAD": {
		setup: func(r *gitRepo) {
			r.git("worktree", "add", "-q", filepath.Join(r.dir, ".git", "wt-a"), "feature/a")
		},
		run: func(g gitops.Repo) error {
			h, err := g.Branch("feature/a")
			if err == nil {
				_, err = gitops.Detach(g, "feature/a", h)
			}
			return err
		},
		done: func(r *gitRepo, before string) bool {
			wt := &gitRepo{t: r.t, dir: filepath.Join(r.dir, ".git", "wt-a")}
			if h := wt.git("rev-parse", "HEAD"); h != r.git("rev-parse", "feature/a") {
				r.t.Errorf("the worktree's HEAD is at %s", h)
			}
			_, err := wt.gitMaybe("symbolic-ref", "-q", "HEAD")
			return err != nil
		},
	},
	"delete a packed branch moved since": { // the packed value must never come back
		setup: func(r *gitRepo) {
			r.git("pack-refs", "--all")
			r.git("checkout", "-q", "feature/a")
			r.commit("f.txt", "feature 3")
			r.git("checkout", "-q", "main")
		},
		run: func(g gitops.Repo) error {
			h, err := g.Branch("feature/a")
			if err == nil {
				err = g.DeleteBranch("feature/a", h)
			}
			return err
		},
		done: func(r *gitRepo, before string) bool {
			h, err := r.gitMaybe("rev-parse", "--verify", "-q", "feature/a")
			if err == nil && r.git("log", "-1", "--format=%s", h) != "feature 3" {
				r.t.Errorf("feature/a came back at %s", h)
			}
			return err != nil
		},
	},
}

// TestRefWriteKilledAtEveryStep runs a branch creation, a merge, a
// worktree's detach and a deletion in a child process that kills itself (SIGKILL, no deferred clean-up) after
// its first, second, … step of writing a ref or a lock, until one runs to
// its end. After each kill: git reports no broken ref (nothing baton left
// under refs/ is empty or half-written), Heads and Branch answer as git
// does, the ref is at its old value or its new one, and the operation
// run again (clearing the killed run's lock) completes.
func TestRefWriteKilledAtEveryStep(t *testing.T) {
	if dir := os.Getenv("BATON_TEST_KILL_DIR"); dir != "" {
		killedChild(t, dir)
		return
	}
	for op, k := range refKillOps {
		for step := 1; ; step++ {
			r := featureRepo(t)
			if k.setup != nil {
				k.setup(r)
			}
			before := r.git("rev-parse", "main")
			cmd := exec.Command(os.Args[0], "-test.run=^TestRefWriteKilledAtEveryStep$")
			cmd.Env = append(os.Environ(), "BATON_TEST_KILL_DIR="+r.dir, "BATON_TEST_KILL_OP="+op, "BATON_TEST_KILL_STEP="+strconv.Itoa(step))
			out, err := cmd.CombinedOutput()
			if err == nil { // ran to its end: every step was killed once
				t.Logf("%s: killed after each of its %d steps", op, step-1)
				break
			}
			if cmd.ProcessState.ExitCode() != -1 {
				t.Fatalf("%s, step %d: the child failed without being killed: %v\n%s", op, step, err, out)
			}
			if done := checkAfterKill(t, r, op, step, before); done {
				continue
			}
			if err := k.run(r.open()); err != nil {
				t.Fatalf("%s, killed at step %d, run again: %v", op, step, err)
			}
			if locks := refLocks(t, r); len(locks) > 0 {
				t.Errorf("%s, step %d: locks left after the run again: %v", op, step, locks)
			}
		}
	}
}

// killedChild runs the operation, killing the process at the step asked.
func killedChild(t *testing.T, dir string) {
	step, _ := strconv.Atoi(os.Getenv("BATON_TEST_KILL_STEP"))
	n := 0
	defer gitops.SetAfterStep(func(string) {
		if n++; n == step {
			p, _ := os.FindProcess(os.Getpid())
			_ = p.Kill()
			select {} // the kill is under way
		}
	})()
	g, err := gitops.Open(dir)
	if err == nil {
		err = refKillOps[os.Getenv("BATON_TEST_KILL_OP")].run(g)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// refLocks lists the locks in the git directory (of refs, packed-refs,
// the index, a worktree's HEAD), failing the test for one that does not
// hold baton's marker (one a kill left and baton would not know as its
// own).
func refLocks(t *testing.T, r *gitRepo) []string {
	t.Helper()
	var locks []string
	root := filepath.Join(r.dir, ".git")
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".lock") {
			locks = append(locks, p)
			if b, _ := os.ReadFile(p); !strings.HasPrefix(string(b), "baton: writing the index\n") {
				t.Errorf("%s holds %q, not baton's marker", p, b)
			}
		}
		return nil
	})
	return locks
}

// checkAfterKill checks what a killed ref write left, and says whether
// the write was done.
func checkAfterKill(t *testing.T, r *gitRepo, op string, step int, before string) (done bool) {
	t.Helper()
	cmd := exec.Command("git", "for-each-ref")
	cmd.Dir = r.dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Errorf("%s, killed at step %d: git for-each-ref: %v\n%s", op, step, err, stderr.String())
	}
	headsAsGit(t, r, r.open())
	refLocks(t, r)
	if h, err := r.open().Branch("main"); err != nil || h != r.git("rev-parse", "main") {
		t.Errorf("%s, killed at step %d: Branch(main) = %s, %v", op, step, h, err)
	}
	return refKillOps[op].done(r, before)
}
