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

// borrowingClones are repositories that hold none of their objects
// themselves: 'git clone --shared' (an absolute alternates path) and one
// whose alternates path is relative to its objects directory, each with
// main checked out and feature/a made from the origin's.
func borrowingClones(t *testing.T, origin *gitRepo) map[string]*gitRepo {
	out := map[string]*gitRepo{}
	shared := &gitRepo{t: t, dir: filepath.Join(t.TempDir(), "shared")}
	origin.git("clone", "-q", "--shared", origin.dir, shared.dir)
	out["absolute"] = shared
	rel := &gitRepo{t: t, dir: filepath.Join(t.TempDir(), "rel")}
	origin.git("clone", "-q", "--shared", origin.dir, rel.dir)
	relPath, err := filepath.Rel(filepath.Join(rel.dir, ".git", "objects"), filepath.Join(origin.dir, ".git", "objects"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(rel.dir, ".git", "objects", "info", "alternates"), []byte(relPath+"\n"), 0o644))
	out["relative"] = rel
	for _, c := range out {
		c.git("branch", "feature/a", "origin/feature/a")
		if n := c.git("count-objects"); !strings.HasPrefix(n, "0 objects") {
			t.Fatalf("the clone holds objects of its own: %s", n)
		}
	}
	return out
}

// TestAlternatesReadAsGit: objects borrowed through alternates (loose and,
// after 'git gc' in the origin, packed) are read — commits, trees, walks,
// abbreviated hashes — and a merge made there is whole for git.
func TestAlternatesReadAsGit(t *testing.T) {
	for _, packed := range []bool{false, true} {
		origin := featureRepo(t)
		origin.commit("m.txt", "main moves")
		if packed {
			origin.git("gc", "-q")
		}
		for name, c := range borrowingClones(t, origin) {
			g := c.open()
			main, head := c.git("rev-parse", "main"), c.git("rev-parse", "feature/a")
			rng, err := g.Range(main, head)
			if err != nil || len(rng) != 2 {
				t.Errorf("%s: Range: %d commits, %v; git: %s", name, len(rng), err, c.git("rev-list", "--count", main+".."+head))
			}
			if ch, err := g.Changes(main, head); err != nil || len(ch) != 2 {
				t.Errorf("%s: Changes: %v, %v", name, ch, err)
			}
			if h, err := g.Resolve(head[:9]); err != nil || h != head {
				t.Errorf("%s: Resolve(%s) = %q, %v", name, head[:9], h, err)
			}
			res, err := g.Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m\n", Signature: sig()})
			if err != nil {
				t.Fatalf("%s (packed %v): %v", name, packed, err)
			}
			if want := c.git("merge-tree", "--write-tree", main, head); c.git("rev-parse", res.Commit+"^{tree}") != want {
				t.Errorf("%s: merge tree differs from git's %s", name, want)
			}
			c.git("fsck", "--strict", "--no-progress")
			if st := c.git("status", "--porcelain"); st != "" {
				t.Errorf("%s: status after the merge:\n%s", name, st)
			}
		}
	}
}

// TestMergeUnrelatedInShallowClone: a branch whose common history with
// main a shallow clone lacks is refused, as git refuses it, with a message
// that says so and what fetches the history; main does not move.
func TestMergeUnrelatedInShallowClone(t *testing.T) {
	r := featureRepo(t)
	r.commit("m.txt", "main moves")
	s := &gitRepo{t: t, dir: filepath.Join(t.TempDir(), "shallow")}
	r.git("clone", "-q", "--depth", "1", "--no-single-branch", "file://"+r.dir, s.dir)
	s.git("branch", "feature/a", "origin/feature/a")
	before := s.git("rev-parse", "main")
	_, err := s.open().Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m\n", Signature: sig()})
	if err == nil || !strings.Contains(err.Error(), "share no history") || !strings.Contains(err.Error(), "git fetch --unshallow") {
		t.Errorf("merge in a shallow clone: %v", err)
	}
	if s.git("rev-parse", "main") != before || s.git("status", "--porcelain") != "" {
		t.Error("main or its checkout changed")
	}
}

// TestShallowDeepenedInProcess: a clone deepened ('git fetch --unshallow')
// while a process holds it open is walked with its new history — the
// shallow roots are not remembered past the change of .git/shallow.
func TestShallowDeepenedInProcess(t *testing.T) {
	r := featureRepo(t)
	r.commit("m.txt", "main moves")
	s := &gitRepo{t: t, dir: filepath.Join(t.TempDir(), "shallow")}
	r.git("clone", "-q", "--depth", "1", "--no-single-branch", "file://"+r.dir, s.dir)
	s.git("branch", "feature/a", "origin/feature/a")
	main, head := s.git("rev-parse", "main"), s.git("rev-parse", "feature/a")
	g := s.open()
	if b, err := g.MergeBase(main, head); err == nil && b != "" {
		t.Fatalf("a depth-1 clone has a merge base: %s", b)
	}
	s.git("fetch", "-q", "--unshallow")
	want := s.git("merge-base", "main", "feature/a")
	if b, err := s.open().MergeBase(main, head); err != nil || b != want {
		t.Errorf("after --unshallow: MergeBase = %q, %v; git: %s", b, err, want)
	}
}

// TestMergeWithOldGit: a git without 'merge-tree --write-tree' (before
// 2.38) is named as the reason a diverged branch cannot be merged, with
// what to do, and nothing moves.
func TestMergeWithOldGit(t *testing.T) {
	r := featureRepo(t)
	r.commit("m.txt", "main moves")
	before := r.git("rev-parse", "main")
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip(err)
	}
	bin := t.TempDir()
	script := "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = --write-tree ] && { echo \"error: unknown option 'write-tree'\" >&2; exit 129; }; done\nexec " + real + " \"$@\"\n"
	must(t, os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	_, err = r.open().Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m\n", Signature: sig()})
	if !errors.Is(err, gitops.ErrNoGit) || !strings.Contains(err.Error(), "2.38") {
		t.Errorf("merge with an old git: %v", err)
	}
	if r.git("rev-parse", "main") != before {
		t.Error("main moved")
	}
}
