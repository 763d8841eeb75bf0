package gitops

import (
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
)

// A shallow clone (the default checkout of hosted CI) holds its oldest
// commits without their parents; .git/shallow lists those commits. The
// walks treat them as roots, as git does, so that ranges, ancestry and
// merge bases are answered from the history that is there instead of
// failing on a parent that was never fetched.

// shallowRoots returns the commits the repository holds without parents,
// as the shallow file lists them now: a fetch that deepens or unshallows
// the clone changes the file.
func (g *repo) shallowRoots() map[plumbing.Hash]bool {
	roots := map[plumbing.Hash]bool{}
	hs, _ := g.r.Storer.Shallow()
	for _, h := range hs {
		roots[h] = true
	}
	return roots
}

// IsShallow reports whether r is a shallow clone.
func IsShallow(r Repo) bool {
	g, ok := r.(*repo)
	return ok && len(g.shallowRoots()) > 0
}

// GitDirAt returns the git directory that dir is (or is inside of) — a bare
// repository, or the .git directory of a worktree — and "" when dir is an
// ordinary directory. State written there would live among git's own
// files, with no worktree for the agents to work in.
func GitDirAt(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for d := abs; ; d = filepath.Dir(d) {
		if looksLikeGitDir(d) {
			return d
		}
		if fi, err := os.Stat(filepath.Join(d, ".git")); err == nil && fi != nil {
			return "" // inside a worktree: not a git directory
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

func looksLikeGitDir(d string) bool {
	head, err := os.Stat(filepath.Join(d, "HEAD"))
	if err != nil || !head.Mode().IsRegular() {
		return false
	}
	for _, sub := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(d, sub)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}
