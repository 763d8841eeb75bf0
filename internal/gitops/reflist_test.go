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

// Refs read as git reads them, in every way git keeps refs: loose, packed,
// packed then updated loose, detached, unborn, symbolic, in a linked
// worktree, with a full hash for a revision.
func TestRefsReadAsGitDoes(t *testing.T) {
	r := newGitRepo(t)
	c1 := r.commit("a", "one")
	r.git("branch", "feature")
	c2 := r.commit("b", "two")
	check := func(what string) {
		t.Helper()
		g := openRepo(t, r.dir)
		for _, b := range []string{"main", "feature", "missing", "sym", "main/below"} {
			want, werr := r.gitMaybe("rev-parse", "--verify", "-q", "refs/heads/"+b)
			got, err := g.Branch(b)
			if (werr != nil) != (err != nil) || got != want {
				t.Errorf("%s: Branch(%s) = %q, %v; git says %q, %v", what, b, got, err, want, werr)
			}
			if err != nil && (b == "missing" || b == "main/below") && !errors.Is(err, gitops.ErrNoBranch) {
				t.Errorf("%s: Branch(%s): %v, want gitops.ErrNoBranch", what, b, err)
			}
		}
		want, werr := r.gitMaybe("rev-parse", "--verify", "-q", "HEAD")
		got, err := g.Head()
		if (werr != nil) != (err != nil) || got != want {
			t.Errorf("%s: Head() = %q, %v; git says %q, %v", what, got, err, want, werr)
		}
		cur, _ := r.gitMaybe("symbolic-ref", "-q", "--short", "HEAD")
		if b, err := g.CurrentBranch(); err != nil || b != cur {
			t.Errorf("%s: CurrentBranch() = %q, %v; git says %q", what, b, err, cur)
		}
	}
	check("loose")
	r.git("symbolic-ref", "refs/heads/sym", "refs/heads/feature")
	check("symbolic")
	r.git("pack-refs", "--all")
	check("packed")
	r.git("checkout", "-q", "feature")
	c3 := r.commit("c", "three")
	check("packed, then updated loose")
	r.git("checkout", "-q", "--detach", c1)
	check("detached")
	r.git("checkout", "-q", "--orphan", "unborn")
	check("unborn")
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", "-b", "other", wt, c2)
	g := openRepo(t, wt)
	if h, err := g.Head(); err != nil || h != c2 {
		t.Errorf("linked worktree: Head() = %q, %v, want %s", h, err, c2)
	}
	if h, err := g.Branch("feature"); err != nil || h != c3 {
		t.Errorf("linked worktree: Branch(feature) = %q, %v, want %s", h, err, c3)
	}
	if b, err := g.CurrentBranch(); err != nil || b != "other" {
		t.Errorf("linked worktree: CurrentBranch() = %q, %v, want other", b, err)
	}
	for _, bad := range []string{"../../HEAD", "a/../main", ".hidden"} {
		if h, err := g.Branch(bad); err == nil {
			t.Errorf("Branch(%q) = %q: a name git refuses resolved", bad, h)
		}
	}
	if h, err := gitops.ResolveCommit(g, c2); err != nil || h != c2 {
		t.Errorf("ResolveCommit(full hash) = %q, %v", h, err)
	}
	tree := r.git("rev-parse", c2+"^{tree}")
	if h, err := gitops.ResolveCommit(g, tree); err == nil {
		t.Errorf("ResolveCommit(a tree's hash) = %q: not a commit", h)
	}
}

func openRepo(t *testing.T, dir string) gitops.Repo {
	t.Helper()
	g, err := gitops.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// gitMaybe runs git, returning its error instead of failing the test.
func (r *gitRepo) gitMaybe(args ...string) (string, error) {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+r.dir)
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}
