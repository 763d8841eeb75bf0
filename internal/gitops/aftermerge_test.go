package gitops_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
)

// A merge whose record could not be written is undone: main moves back
// (only if nobody moved it since) and its checkout shows main as it was,
// untracked files kept.
func TestUndoMerge(t *testing.T) {
	r := featureRepo(t)
	r.commit("m.txt", "main moved")
	before := r.git("rev-parse", "main")
	if err := os.WriteFile(filepath.Join(r.dir, "notes.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := r.open()
	res, err := g.Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m", Signature: sig()})
	if err != nil {
		t.Fatal(err)
	}
	if err := gitops.UndoMerge(g, "main", res); err != nil {
		t.Fatal(err)
	}
	if got := r.git("rev-parse", "main"); got != before {
		t.Fatalf("main at %s, want %s", got, before)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "f.txt")); !os.IsNotExist(err) {
		t.Fatal("the merged file is still in the checkout")
	}
	if st := r.git("status", "--porcelain"); st != "?? notes.txt" {
		t.Fatalf("status after the undo:\n%s", st)
	}
	// main moved by someone else after the merge: the undo refuses
	res, err = g.Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m", Signature: sig()})
	if err != nil {
		t.Fatal(err)
	}
	r.commit("m.txt", "someone else on main")
	moved := r.git("rev-parse", "main")
	if err := gitops.UndoMerge(g, "main", res); !errors.Is(err, gitops.ErrRefMoved) {
		t.Fatalf("err = %v, want ErrRefMoved", err)
	}
	if r.git("rev-parse", "main") != moved {
		t.Fatal("the undo overwrote a concurrent change")
	}
}

// Putting back a checkout the merge never updated writes nothing — not
// even the index, which a full disk may have no room for — and putting
// back one it did update restores main's files, as often as it is asked.
func TestResetCheckoutWritesOnlyWhatDiffers(t *testing.T) {
	r := featureRepo(t)
	g := r.open()
	main, head := r.git("rev-parse", "main"), r.git("rev-parse", "feature/a")
	index := filepath.Join(r.dir, ".git", "index")
	before, err := os.Stat(index)
	if err != nil {
		t.Fatal(err)
	}
	if err := gitops.ResetCheckout(g, "main", head, main); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(index); err != nil || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("the index was rewritten although the checkout already is at main (%v)", err)
	}
	res, err := g.Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m", Signature: sig()})
	if err != nil {
		t.Fatal(err)
	}
	r.git("update-ref", "refs/heads/main", main) // main moved back, its checkout not yet
	for range 2 {
		if err := gitops.ResetCheckout(g, "main", res.Commit, main); err != nil {
			t.Fatal(err)
		}
		if st := r.git("status", "--porcelain"); st != "" {
			t.Fatalf("status after putting the checkout back:\n%s", st)
		}
	}
}

// The worktrees that have a deleted branch checked out are left on a
// detached HEAD at its last commit, files untouched; others are not.
func TestDetachAndRestoreBranch(t *testing.T) {
	r := featureRepo(t)
	head := r.git("rev-parse", "feature/a")
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", wt, "feature/a")
	g := r.open()
	if err := g.DeleteBranch("feature/a", head); err != nil {
		t.Fatal(err)
	}
	done, err := gitops.Detach(g, "feature/a", head)
	if err != nil || len(done) != 1 || done[0] != wt {
		t.Fatalf("Detach = %v, %v", done, err)
	}
	other := &gitRepo{t: t, dir: wt}
	if got := other.git("rev-parse", "HEAD"); got != head {
		t.Fatalf("detached at %s, want %s", got, head)
	}
	cmd := exec.Command("git", "symbolic-ref", "-q", "HEAD")
	cmd.Dir = wt
	if cmd.Run() == nil {
		t.Fatal("HEAD is still a branch")
	}
	if st := other.git("status", "--porcelain"); st != "" {
		t.Fatalf("linked worktree not clean:\n%s", st)
	}
	if b := r.git("symbolic-ref", "--short", "HEAD"); b != "main" {
		t.Fatalf("the main worktree moved off main: %s", b)
	}
	if err := gitops.RestoreBranch(g, "feature/a", head); err != nil || r.git("rev-parse", "feature/a") != head {
		t.Fatalf("RestoreBranch: %v", err)
	}
}

func TestIdentityReadsGitConfig(t *testing.T) {
	r := featureRepo(t)
	r.git("config", "user.name", "Repo Person")
	r.git("config", "user.email", "person@example.test")
	name, email := gitops.Identity(r.open())
	if name != "Repo Person" || email != "person@example.test" {
		t.Fatalf("Identity = %q %q", name, email)
	}
}

func TestInstallHooks(t *testing.T) {
	r := featureRepo(t)
	g := r.open()
	dir, err := gitops.HooksDir(g)
	if err != nil || dir != filepath.Join(r.dir, ".git", "hooks") {
		t.Fatalf("HooksDir = %s, %v", dir, err)
	}
	written, err := gitops.InstallHooks(dir, "main")
	if err != nil || len(written) != 3 {
		t.Fatalf("InstallHooks = %v, %v", written, err)
	}
	for _, p := range written {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode()&0o111 == 0 {
			t.Fatalf("%s is not an executable hook: %v", p, err)
		}
	}
	// baton's own hooks are updated; anyone else's refuse the install
	if _, err := gitops.InstallHooks(dir, "main"); err != nil {
		t.Fatalf("reinstalling: %v", err)
	}
	mine := []byte("#!/bin/sh\nexit 0\n")
	if err := os.WriteFile(filepath.Join(dir, "pre-merge-commit"), mine, 0o755); err != nil {
		t.Fatal(err)
	}
	var fe *gitops.ForeignHooksError
	if _, err := gitops.InstallHooks(dir, "main"); !errors.As(err, &fe) || len(fe.Paths) != 1 || !strings.HasSuffix(fe.Paths[0], "pre-merge-commit") {
		t.Fatalf("err = %v, want the foreign pre-merge-commit named", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "pre-merge-commit")); string(b) != string(mine) {
		t.Fatal("a foreign hook was overwritten")
	}
	// the hooks work: a commit on main is refused, on a branch allowed
	cmd := exec.Command("git", "commit", "-q", "--allow-empty", "-m", "onto main")
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+r.dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.test",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.test",
		"BATON_ALLOW_MAIN=1") // no environment switch opens main: an agent can set any
	for _, n := range gitops.HookNames {
		if b, _ := os.ReadFile(filepath.Join(dir, n)); strings.Contains(string(b), "BATON_") {
			t.Fatalf("hook %s reads a variable an agent could set:\n%s", n, b)
		}
	}
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "leave the merge to REVIEW") || strings.Contains(string(out), "BATON_ALLOW_MAIN") {
		t.Fatalf("commit onto main: %v\n%s", err, out)
	}
	r.git("checkout", "-q", "feature/a")
	r.git("commit", "-q", "--allow-empty", "-m", "on the branch")
}

func TestHooksDirFollowsCoreHooksPath(t *testing.T) {
	r := featureRepo(t)
	r.git("config", "core.hooksPath", "tools/hooks")
	dir, err := gitops.HooksDir(r.open())
	if err != nil || dir != filepath.Join(r.dir, "tools", "hooks") {
		t.Fatalf("HooksDir = %s, %v", dir, err)
	}
	abs := filepath.Join(t.TempDir(), "hooks")
	r.git("config", "core.hooksPath", abs)
	if dir, err := gitops.HooksDir(r.open()); err != nil || dir != abs {
		t.Fatalf("HooksDir = %s, %v", dir, err)
	}
}
