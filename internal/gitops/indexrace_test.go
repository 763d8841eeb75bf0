package gitops_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
)

// duringMerge runs a git command in dir once, at the first step of the
// first lock a merge takes after its checks of the checkout (the first
// temp file staged), and merges feature/a into main.
func duringMerge(t *testing.T, r *gitRepo, dir string, args ...string) (gitops.MergeResult, error) {
	t.Helper()
	ran := false
	restore := gitops.SetAfterStep(func(step string) {
		if step != "temp created" || ran {
			return
		}
		ran = true
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v %s", strings.Join(args, " "), err, out)
		}
	})
	defer restore()
	res, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "Merge feature/a", Signature: sig()})
	if !ran {
		t.Fatal("the merge staged no temp file: git was never run during it")
	}
	return res, err
}

// A change staged in main's checkout after the merge checked it but before
// the merge locked the index is kept: the merge re-checks an index that
// changed under its lock and refuses, instead of overwriting the staged
// file with the merged one.
func TestMergeKeepsChangeStagedMeanwhile(t *testing.T) {
	r := featureRepo(t)
	before := r.git("rev-parse", "main")
	_, err := duringMerge(t, r, r.dir, "-c", "alias.mine=!echo mine >f.txt && git add f.txt", "mine")
	if !errors.Is(err, gitops.ErrDirtyWorktree) {
		t.Errorf("merge over a change staged meanwhile: %v, want ErrDirtyWorktree", err)
	}
	if got := r.git("rev-parse", "main"); got != before {
		t.Errorf("main moved to %s", got)
	}
	if got := read(t, r.dir, "f.txt"); got != "mine\n" {
		t.Errorf("f.txt is %q, want the staged \"mine\\n\"", got)
	}
	if st := r.git("diff", "--cached", "--name-only"); st != "f.txt" {
		t.Errorf("staged: %q, want f.txt", st)
	}
}

// A 'git switch' in main's checkout after the merge checked it but before
// it locked the index is kept: the merge reads HEAD again under the lock
// and refuses, instead of writing main's merged files into a checkout of
// another branch.
func TestMergeKeepsSwitchMeanwhile(t *testing.T) {
	r := featureRepo(t)
	r.git("branch", "other", "main")
	before := r.git("rev-parse", "main")
	_, err := duringMerge(t, r, r.dir, "switch", "-q", "other")
	if !errors.Is(err, gitops.ErrRefMoved) {
		t.Errorf("merge into a checkout switched meanwhile: %v, want ErrRefMoved", err)
	}
	if got := r.git("rev-parse", "main"); got != before {
		t.Errorf("main moved to %s", got)
	}
	if b := r.git("symbolic-ref", "HEAD"); b != "refs/heads/other" {
		t.Errorf("HEAD is %s, want refs/heads/other", b)
	}
	if st := r.git("status", "--porcelain"); st != "" {
		t.Errorf("the checkout of other is not clean:\n%s", st)
	}
}

// A file the merge writes, edited in main's checkout after the merge
// checked it but before it locked the index, is kept: the merge checks the
// files it writes again under the lock and refuses.
func TestMergeKeepsEditMeanwhile(t *testing.T) {
	r := newGitRepo(t)
	r.commit("f.txt", "base")
	r.git("checkout", "-q", "-b", "feature/a")
	r.commit("f.txt", "feature 1") // the merge changes f.txt, tracked on main
	r.git("checkout", "-q", "main")
	before := r.git("rev-parse", "main")
	_, err := duringMerge(t, r, r.dir, "-c", "alias.mine=!echo mine >f.txt", "mine")
	if !errors.Is(err, gitops.ErrDirtyWorktree) {
		t.Errorf("merge over a file edited meanwhile: %v, want ErrDirtyWorktree", err)
	}
	if got := r.git("rev-parse", "main"); got != before {
		t.Errorf("main moved to %s", got)
	}
	if got := read(t, r.dir, "f.txt"); got != "mine\n" {
		t.Errorf("f.txt is %q, want the edit \"mine\\n\"", got)
	}
}
