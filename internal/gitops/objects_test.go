package gitops_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
)

// reshapedRepo: main's first commit has files, a symlink, a directory and
// a file that will become a directory; feature/shape changes each kind of
// thing — content, mode, a file into a directory and back, a symlink's
// target, deletions, additions deep down.
func reshapedRepo(t *testing.T) *gitRepo {
	r := newGitRepo(t)
	write := func(path, text string) {
		p := filepath.Join(r.dir, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "a\n")
	write("x", "a file that becomes a directory\n")
	write("d/keep.txt", "keep\n")
	write("d/gone.txt", "gone\n")
	write("d/e/deep.txt", "deep\n")
	write("run.sh", "echo run\n")
	write("z/only.txt", "a directory that becomes a file\n")
	if err := os.Symlink("a.txt", filepath.Join(r.dir, "link")); err != nil {
		t.Fatal(err)
	}
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "base")
	r.git("checkout", "-q", "-b", "feature/shape")
	r.git("rm", "-q", "x", "d/gone.txt", "-r", "z")
	write("x/inside.txt", "now a directory\n")
	write("z", "now a file\n")
	write("d/e/deep.txt", "deeper\n")
	write("d/e/f/new.txt", "new\n")
	write("a.txt.orig", "beside a.txt\n")
	if err := os.Chmod(filepath.Join(r.dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(r.dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d/keep.txt", filepath.Join(r.dir, "link")); err != nil {
		t.Fatal(err)
	}
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "reshape")
	r.git("checkout", "-q", "main")
	return r
}

// TestChangesMatchGit: Changes lists what `git diff-tree -r --no-renames`
// lists, each path with its status and mode, in both directions.
func TestChangesMatchGit(t *testing.T) {
	r := reshapedRepo(t)
	g := r.open()
	base, shape := r.git("rev-parse", "main"), r.git("rev-parse", "feature/shape")
	for _, pair := range [][2]string{{base, shape}, {shape, base}} {
		var want []string
		for _, line := range strings.Split(r.git("diff-tree", "-r", "--no-renames", pair[0], pair[1]), "\n") {
			meta, path, _ := strings.Cut(line, "\t")
			f := strings.Fields(meta)
			if f[4] == "D" {
				want = append(want, path+" deleted")
			} else {
				want = append(want, path+" "+strings.TrimPrefix(f[1], "0"))
			}
		}
		changes, err := g.Changes(pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range changes {
			if c.Deleted {
				got = append(got, c.Path+" deleted")
			} else {
				got = append(got, c.Path+" "+strings.TrimPrefix(strings.TrimPrefix(modeString(c.Mode), "0"), "0"))
			}
		}
		sort.Strings(want)
		sort.Strings(got)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("Changes(%.7s, %.7s):\n%s\nwant (git diff-tree):\n%s", pair[0], pair[1], strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

func modeString(m uint32) string {
	s := ""
	for ; m > 0; m /= 8 {
		s = string(rune('0'+m%8)) + s
	}
	return s
}

// TestMergeReshapesCheckout: a merge whose tree turns a file into a
// directory and a directory into a file, changes modes and a symlink,
// leaves main's checkout exactly as git would (git status clean, the
// files as committed), its merge commit readable by git (fsck) with the
// author given.
func TestMergeReshapesCheckout(t *testing.T) {
	r := reshapedRepo(t)
	res, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/shape", Into: "main", Message: "Merge feature/shape\n\nBody line.\n", Signature: sig()})
	if err != nil {
		t.Fatal(err)
	}
	if st := r.git("status", "--porcelain"); st != "" {
		t.Fatalf("checkout after the merge:\n%s", st)
	}
	if got := read(t, r.dir, "x/inside.txt") + read(t, r.dir, "z") + read(t, r.dir, "d/e/f/new.txt"); got != "now a directory\nnow a file\nnew\n" {
		t.Errorf("files after the merge: %q", got)
	}
	if target, err := os.Readlink(filepath.Join(r.dir, "link")); err != nil || target != "d/keep.txt" {
		t.Errorf("link -> %q (%v)", target, err)
	}
	if fi, err := os.Stat(filepath.Join(r.dir, "run.sh")); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("run.sh lost its executable mode: %v %v", fi, err)
	}
	r.git("fsck", "--strict", "--no-progress")
	if got := r.git("log", "-1", "--format=%an <%ae> %at %s|%b", res.Commit); got != "baton <baton@example.test> 1735776000 Merge feature/shape|Body line." {
		t.Errorf("the merge commit as git reads it: %s", got)
	}
}
