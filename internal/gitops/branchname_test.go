package gitops_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
)

// TestCreateBranchAsGitBranch: CreateBranch accepts exactly the names
// 'git branch NAME' accepts in the same repository — git's name rules, and
// no branch inside another's name or holding others (a/b beside a) —
// except "@", which baton refuses.
func TestCreateBranchAsGitBranch(t *testing.T) {
	r := newGitRepo(t)
	c := r.commit("a", "a")
	r.git("branch", "feature/x")
	r.git("branch", "taken")
	twin := &gitRepo{t: t, dir: filepath.Join(t.TempDir(), "twin")}
	r.git("clone", "-q", r.dir, twin.dir)
	twin.git("branch", "feature/x", "origin/feature/x")
	twin.git("branch", "taken", "origin/taken")
	g := r.open()
	for _, n := range []string{"feature/a", "a..b", "a.lock", "a/b.lock", "a/.b", "a//b", "a/", "/a", "a b", "a~b", "a^b",
		"a:b", "a?b", "a*b", "a[b", "a\\b", "a@{b", "a.", "-a", "HEAD", "fü/ñ", "a\tb", "x.lock/y", "a@b", "@{-1}",
		"main/x", ".a", "-", "a/-b", "refs/heads/x", "feature", "feature/x/y", "taken/1", "café", "a/b/c/d/e"} {
		err := g.CreateBranch(n, c)
		_, gerr := twin.gitMaybe("branch", n, c)
		if (err == nil) != (gerr == nil) {
			t.Errorf("CreateBranch(%q): %v; git branch ok=%v", n, err, gerr == nil)
		}
	}
	if err := g.CreateBranch("@", c); err == nil {
		t.Error(`a branch named "@" (git allows it, but in a revision "@" is HEAD) was created`)
	}
	if err := g.CreateBranch("taken/2", c); !errors.Is(err, gitops.ErrBranchNameTaken) {
		t.Errorf("a branch inside another's name: %v, want ErrBranchNameTaken", err)
	}
}
