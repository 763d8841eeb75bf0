package gitops_test

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
)

// genPaths are the paths generated histories touch: nested, sharing
// prefixes that git sorts apart ("d" "d-" "d.x" "d/"), odd names.
var genPaths = []string{"a", "d", "d/x", "d/e/y", "d-", "d.x", "s p", "ünï", "-x", "run", "l", "d/e"}

// genOp changes one path at random: new content, deleted, executable bit
// flipped, a symlink, or a directory holding a file; in the way parents
// that are files are removed, as a person would.
func genOp(r *gitRepo, rnd *rand.Rand) {
	p := genPaths[rnd.Intn(len(genPaths))]
	full := filepath.Join(r.dir, p)
	for d := filepath.Dir(full); d != r.dir; d = filepath.Dir(d) {
		if fi, err := os.Lstat(d); err == nil && !fi.IsDir() {
			must(r.t, os.Remove(d))
		}
	}
	must(r.t, os.RemoveAll(full))
	must(r.t, os.MkdirAll(filepath.Dir(full), 0o755))
	switch rnd.Intn(6) {
	case 0:
		// deleted
	case 1:
		must(r.t, os.WriteFile(full, []byte(fmt.Sprintf("x %d\n", rnd.Intn(3))), 0o755))
	case 2:
		must(r.t, os.Symlink(genPaths[rnd.Intn(len(genPaths))], full))
	case 3:
		must(r.t, os.MkdirAll(full, 0o755))
		must(r.t, os.WriteFile(filepath.Join(full, "in"), []byte("in\n"), 0o644))
	default:
		must(r.t, os.WriteFile(full, []byte(fmt.Sprintf("c %d\n", rnd.Intn(4))), 0o644))
	}
}

// genCommits makes n commits of 1-3 random changes each.
func genCommits(r *gitRepo, rnd *rand.Rand, n int, msg string) {
	for i := 0; i < n; i++ {
		for k := rnd.Intn(3); k >= 0; k-- {
			genOp(r, rnd)
		}
		r.files(fmt.Sprintf("%s %d", msg, i))
	}
}

// genHistory is a base, feature/x and main each moving on (or not), the
// branch perhaps merging main in (kept only when git merges it cleanly).
func genHistory(r *gitRepo, rnd *rand.Rand) {
	r.files("base", "a", "a\n", "d/x", "x\n", "run", "run\n")
	genCommits(r, rnd, 1, "base")
	r.git("checkout", "-q", "-b", "feature/x")
	genCommits(r, rnd, 1+rnd.Intn(2), "branch")
	r.git("checkout", "-q", "main")
	genCommits(r, rnd, rnd.Intn(3), "main")
	if rnd.Intn(3) == 0 {
		r.git("checkout", "-q", "feature/x")
		if _, err := r.gitMaybe("merge", "-q", "--no-edit", "main"); err != nil {
			_, _ = r.gitMaybe("merge", "--abort")
			r.git("reset", "-q", "--hard")
			r.git("clean", "-qfd")
		} else {
			genCommits(r, rnd, rnd.Intn(2), "after main")
		}
		r.git("checkout", "-q", "main")
	}
}

// TestGeneratedMergesMatchGit: over generated histories, a merge gives the
// tree 'git merge-tree --write-tree' gives, or, where git finds a
// conflict, a *ConflictError naming what git names with main, its index
// and files unchanged; after every merge git fsck --strict passes and the
// checkout of main matches HEAD.
func TestGeneratedMergesMatchGit(t *testing.T) {
	kinds := map[string]int{}
	for seed := int64(1); seed <= 40; seed++ {
		rnd := rand.New(rand.NewSource(seed))
		r := newGitRepo(t)
		genHistory(r, rnd)
		before := r.git("rev-parse", "main")
		wantTree, gitErr := r.gitMaybe("merge-tree", "--write-tree", "--name-only", "--no-messages", "main", "feature/x")
		res, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/x", Into: "main", Message: "m\n", Signature: sig(), FastForward: seed%2 == 0})
		var ce *gitops.ConflictError
		kinds[fmt.Sprintf("conflict=%v ff=%v three-way=%v", gitErr != nil, res.FastForward, res.ThreeWay)]++
		switch {
		case gitErr != nil:
			if !errors.As(err, &ce) {
				t.Errorf("seed %d: git finds a conflict (%s), baton: %v", seed, strings.ReplaceAll(wantTree, "\n", " "), err)
			}
			if r.git("rev-parse", "main") != before {
				t.Errorf("seed %d: main moved on a conflict", seed)
			}
		case err != nil:
			t.Errorf("seed %d: %v", seed, err)
			continue
		default:
			if got := r.git("rev-parse", res.Commit+"^{tree}"); got != wantTree {
				t.Errorf("seed %d: tree %s, git's %s:\n%s", seed, got, wantTree, r.git("diff-tree", "-r", wantTree, got))
			}
		}
		r.git("fsck", "--strict", "--no-progress")
		if st := r.git("status", "--porcelain", "--untracked-files=all"); st != "" {
			t.Errorf("seed %d: status:\n%s", seed, st)
		}
		if d := r.git("diff-index", "--cached", "HEAD"); d != "" {
			t.Errorf("seed %d: index differs from HEAD:\n%s", seed, d)
		}
	}
	if len(kinds) < 4 {
		t.Errorf("the generated histories cover too few kinds of merge: %v", kinds)
	}
	t.Log(kinds)
}
