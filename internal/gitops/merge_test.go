package gitops_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-cli/baton/internal/gitops"
)

func sig() gitops.Signature {
	return gitops.Signature{Name: "baton", Email: "baton@example.test", When: time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)}
}

func read(t *testing.T, dir, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// featureRepo: main with one commit, feature/a with two more; main
// checked out.
func featureRepo(t *testing.T) *gitRepo {
	r := newGitRepo(t)
	r.commit("a.txt", "base")
	r.git("checkout", "-q", "-b", "feature/a")
	r.commit("f.txt", "feature 1")
	r.commit("f.txt", "feature 2")
	r.git("checkout", "-q", "main")
	return r
}

func TestMergeFastForwardableMakesMergeCommit(t *testing.T) {
	r := featureRepo(t)
	before := r.git("rev-parse", "main")
	head := r.git("rev-parse", "feature/a")
	res, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "Merge feature/a", Signature: sig()})
	if err != nil {
		t.Fatal(err)
	}
	if res.FastForward || res.ThreeWay || res.Previous != before || res.BranchHead != head {
		t.Fatalf("result %+v", res)
	}
	if got := r.git("rev-parse", "main"); got != res.Commit {
		t.Fatalf("main at %s, merge commit %s", got, res.Commit)
	}
	if parents := r.git("rev-list", "--parents", "-n1", "main"); parents != res.Commit+" "+before+" "+head {
		t.Fatalf("parents: %s", parents)
	}
	if st := r.git("status", "--porcelain"); st != "" {
		t.Fatalf("worktree not clean after the merge:\n%s", st)
	}
	if !strings.HasPrefix(read(t, r.dir, "f.txt"), "feature 2") {
		t.Fatal("the checkout of main does not show the merged file")
	}
	if r.git("log", "-1", "--format=%s", "main") != "Merge feature/a" {
		t.Fatal("merge message lost")
	}
}

func TestMergeFastForwardWhenAllowed(t *testing.T) {
	r := featureRepo(t)
	res, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m", Signature: sig(), FastForward: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.FastForward || r.git("rev-parse", "main") != r.git("rev-parse", "feature/a") {
		t.Fatalf("not fast-forwarded: %+v", res)
	}
}

func TestMergeDivergedThreeWay(t *testing.T) {
	r := featureRepo(t)
	r.commit("m.txt", "main moved")
	before := r.git("rev-parse", "main")
	res, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "Merge feature/a", Signature: sig()})
	if err != nil {
		t.Fatal(err)
	}
	if !res.ThreeWay {
		t.Fatalf("not a three-way merge: %+v", res)
	}
	// the merged tree is what git itself makes of the same merge
	want := r.git("merge-tree", "--write-tree", before, "feature/a")
	if got := r.git("rev-parse", res.Commit+"^{tree}"); got != strings.Fields(want)[0] {
		t.Fatalf("tree %s, git merge-tree %s", got, want)
	}
	if st := r.git("status", "--porcelain"); st != "" {
		t.Fatalf("worktree not clean:\n%s", st)
	}
	if !strings.HasPrefix(read(t, r.dir, "m.txt"), "main moved") || !strings.HasPrefix(read(t, r.dir, "f.txt"), "feature 2") {
		t.Fatal("checkout lacks one side's files")
	}
}

func TestMergeConflictLeavesMainUntouched(t *testing.T) {
	r := featureRepo(t)
	r.commit("f.txt", "main edits the same file")
	before := r.git("rev-parse", "main")
	_, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m", Signature: sig()})
	var ce *gitops.ConflictError
	if !errors.As(err, &ce) || len(ce.Paths) != 1 || ce.Paths[0] != "f.txt" {
		t.Fatalf("err = %v, want a conflict in f.txt", err)
	}
	if r.git("rev-parse", "main") != before || r.git("status", "--porcelain") != "" {
		t.Fatal("a conflicting merge changed main or the checkout")
	}
}

func TestMergeRefusesDirtyCheckout(t *testing.T) {
	r := featureRepo(t)
	before := r.git("rev-parse", "main")
	if err := os.WriteFile(filepath.Join(r.dir, "a.txt"), []byte("local edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m", Signature: sig()})
	if !errors.Is(err, gitops.ErrDirtyWorktree) || !strings.Contains(err.Error(), "a.txt") {
		t.Fatalf("err = %v, want a refusal naming a.txt", err)
	}
	if r.git("rev-parse", "main") != before || read(t, r.dir, "a.txt") != "local edit\n" {
		t.Fatal("a refused merge changed main or the local edit")
	}
}

func TestMergeUpdatesLinkedWorktreeWithMain(t *testing.T) {
	r := featureRepo(t)
	r.git("checkout", "-q", "feature/a")
	wt := filepath.Join(t.TempDir(), "main-wt")
	r.git("worktree", "add", "-q", wt, "main")
	res, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m", Signature: sig()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Worktree != wt {
		t.Fatalf("updated %q, want the linked worktree %q", res.Worktree, wt)
	}
	other := &gitRepo{t: t, dir: wt}
	if st := other.git("status", "--porcelain"); st != "" || !strings.HasPrefix(read(t, wt, "f.txt"), "feature 2") {
		t.Fatalf("linked checkout of main not updated: status %q", st)
	}
}

func TestBranchCompareAndSwap(t *testing.T) {
	r := featureRepo(t)
	g := r.open()
	base := r.git("rev-parse", "main")
	if err := g.CreateBranch("feature/b", base); err != nil {
		t.Fatal(err)
	}
	if err := g.CreateBranch("feature/b", base); err == nil {
		t.Fatal("created an existing branch")
	}
	// someone else moves the branch: the delete must notice, not overwrite
	r.git("branch", "-f", "feature/b", "feature/a")
	if err := g.DeleteBranch("feature/b", base); !errors.Is(err, gitops.ErrRefMoved) {
		t.Fatalf("err = %v, want ErrRefMoved", err)
	}
	if r.git("rev-parse", "feature/b") != r.git("rev-parse", "feature/a") {
		t.Fatal("a moved branch was changed")
	}
	// packed refs are deleted too (go-git's DeleteBranch only drops config)
	r.git("pack-refs", "--all")
	if err := g.DeleteBranch("feature/b", r.git("rev-parse", "feature/a")); err != nil {
		t.Fatal(err)
	}
	if out := r.git("branch", "--list", "feature/b"); out != "" {
		t.Fatalf("branch still listed: %q", out)
	}
}

// Untracked and ignored files in the checkout of main — baton's own state
// files among them — survive a merge that updates that checkout.
func TestMergeKeepsUntrackedFiles(t *testing.T) {
	r := featureRepo(t)
	r.commit("m.txt", "main moved") // a three-way merge rewrites more of the checkout
	if err := os.WriteFile(filepath.Join(r.dir, ".git", "info", "exclude"), []byte("/progress.json\n/.baton/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, text := range map[string]string{"progress.json": "{}\n", ".baton/config": "{}\n", "notes.txt": "mine\n"} {
		p := filepath.Join(r.dir, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m", Signature: sig()}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"progress.json", ".baton/config", "notes.txt"} {
		if _, err := os.Stat(filepath.Join(r.dir, path)); err != nil {
			t.Errorf("%s lost in the merge: %v", path, err)
		}
	}
	if st := r.git("status", "--porcelain"); st != "?? notes.txt" {
		t.Errorf("status after the merge:\n%s", st)
	}
	if !strings.HasPrefix(read(t, r.dir, "f.txt"), "feature 2") {
		t.Error("merged file missing")
	}
}

// Staged changes and deleted files are uncommitted changes too.
func TestMergeRefusesStagedAndDeleted(t *testing.T) {
	for name, spoil := range map[string]func(r *gitRepo){
		"staged": func(r *gitRepo) {
			if err := os.WriteFile(filepath.Join(r.dir, "a.txt"), []byte("staged edit\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r.git("add", "a.txt")
		},
		"deleted":  func(r *gitRepo) { os.Remove(filepath.Join(r.dir, "a.txt")) },
		"unstaged": func(r *gitRepo) { r.git("rm", "-q", "--cached", "a.txt") },
	} {
		t.Run(name, func(t *testing.T) {
			r := featureRepo(t)
			before := r.git("rev-parse", "main")
			spoil(r)
			_, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m", Signature: sig()})
			if !errors.Is(err, gitops.ErrDirtyWorktree) || !strings.Contains(err.Error(), "a.txt") {
				t.Fatalf("err = %v, want a refusal naming a.txt", err)
			}
			if r.git("rev-parse", "main") != before {
				t.Fatal("main moved")
			}
		})
	}
}

// TestMergeUpdatesCheckedOutMainInSubdirectories: a merge into the main
// checked out here writes each changed file at its path (a file in a
// subdirectory once landed at the top under its base name).
func TestMergeUpdatesCheckedOutMainInSubdirectories(t *testing.T) {
	r := newGitRepo(t)
	r.commit("a.txt", "base")
	r.git("checkout", "-q", "-b", "feature/a")
	if err := os.MkdirAll(filepath.Join(r.dir, "src", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.commit("src/deep/f.txt", "feature")
	r.git("checkout", "-q", "main")
	if _, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "Merge feature/a", Signature: sig()}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(read(t, r.dir, "src/deep/f.txt"), "feature") {
		t.Fatal("the merged file is not at its path")
	}
	if _, err := os.Stat(filepath.Join(r.dir, "f.txt")); err == nil {
		t.Fatal("the merged file was also written at the top")
	}
	if st := r.git("status", "--porcelain"); st != "" {
		t.Fatalf("worktree not clean after the merge:\n%s", st)
	}
}
