package gitops

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// A shallow clone (the default checkout of hosted CI) holds its oldest
// commits without their parents; .git/shallow lists those commits. The
// walks treat them as roots, as git does, so that ranges, ancestry and
// merge bases are answered from the history that is there instead of
// failing on a parent that was never fetched.

var shallowCache sync.Map // common dir -> shallowEntry

// shallowEntry is the shallow file's roots as read at one version of the
// file (its size and modification time): a fetch that deepens or
// unshallows the clone changes the file, and the roots are read again.
type shallowEntry struct {
	size  int64
	mtime int64
	roots map[plumbing.Hash]bool
}

// shallowRoots returns the commits the repository holds without parents.
func (g *repo) shallowRoots() map[plumbing.Hash]bool {
	path := filepath.Join(g.loc.CommonDir, "shallow")
	var size, mtime int64 = -1, 0
	if fi, err := os.Stat(path); err == nil {
		size, mtime = fi.Size(), fi.ModTime().UnixNano()
	}
	if v, ok := shallowCache.Load(g.loc.CommonDir); ok {
		if e := v.(shallowEntry); e.size == size && e.mtime == mtime {
			return e.roots
		}
	}
	roots := map[plumbing.Hash]bool{}
	if f, err := os.Open(path); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if h := strings.TrimSpace(sc.Text()); plumbing.IsHash(h) {
				roots[plumbing.NewHash(h)] = true
			}
		}
		f.Close()
	}
	shallowCache.Store(g.loc.CommonDir, shallowEntry{size: size, mtime: mtime, roots: roots})
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
