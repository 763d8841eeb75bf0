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

// files writes (or, for content "-", removes; for content "->target",
// symlinks) paths in the checkout, then stages everything and commits.
func (r *gitRepo) files(msg string, kv ...string) {
	r.t.Helper()
	for i := 0; i+1 < len(kv); i += 2 {
		p := filepath.Join(r.dir, kv[i])
		_ = os.RemoveAll(p)
		switch c := kv[i+1]; {
		case c == "-":
			continue
		case strings.HasPrefix(c, "->"):
			must(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
			must(r.t, os.Symlink(c[2:], p))
		case strings.HasPrefix(c, "x:"):
			must(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
			must(r.t, os.WriteFile(p, []byte(c[2:]), 0o755))
		default:
			must(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
			must(r.t, os.WriteFile(p, []byte(c), 0o644))
		}
	}
	r.tick++
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", msg)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// gitlink stages a submodule entry at path pointing at commit, and commits.
func (r *gitRepo) gitlink(path, commit string) {
	r.t.Helper()
	r.tick++
	must(r.t, os.MkdirAll(filepath.Join(r.dir, path), 0o755))
	r.git("update-index", "--add", "--cacheinfo", "160000,"+commit+","+path)
	r.git("commit", "-q", "-m", "submodule "+path)
}

// mergeShapes are histories of main and feature/x (main checked out).
var mergeShapes = map[string]func(r *gitRepo){
	"nested directory becomes a file": func(r *gitRepo) {
		r.files("base", "a.txt", "a\n", "d/e/f.txt", "deep\n", "d/e/g/h.txt", "deeper\n")
		r.git("checkout", "-q", "-b", "feature/x")
		r.files("flatten", "d", "now a file\n")
		r.git("checkout", "-q", "main")
		r.files("main moves", "a.txt", "a2\n")
	},
	"file becomes a nested directory and back": func(r *gitRepo) {
		r.files("base", "a.txt", "a\n", "p", "file\n", "q/r/s.txt", "dir\n")
		r.git("checkout", "-q", "-b", "feature/x")
		r.files("swap", "p", "-", "p/q/r.txt", "now dir\n", "q", "now file\n")
	},
	"submodule added on the branch": func(r *gitRepo) {
		r.files("base", "a.txt", "a\n")
		base := r.git("rev-parse", "HEAD")
		r.git("checkout", "-q", "-b", "feature/x")
		r.gitlink("sub", base)
		r.files("more", "b.txt", "b\n")
		r.git("checkout", "-q", "main")
		r.files("main moves", "a.txt", "a2\n")
	},
	"file becomes a submodule (fast-forwardable)": func(r *gitRepo) {
		r.files("base", "a.txt", "a\n", "lib", "a file\n")
		base := r.git("rev-parse", "HEAD")
		r.git("checkout", "-q", "-b", "feature/x")
		r.git("rm", "-q", "lib")
		r.gitlink("lib", base)
		r.git("checkout", "-q", "main")
	},
	"submodule on main, kept and then removed by the branch": func(r *gitRepo) {
		r.files("base", "a.txt", "a\n")
		r.gitlink("sub", r.git("rev-parse", "HEAD"))
		r.gitlink("gone", r.git("rev-parse", "HEAD"))
		r.git("checkout", "-q", "-b", "feature/x")
		r.git("rm", "-q", "--cached", "gone")
		r.files("drop gone, add b", "b.txt", "b\n")
		r.git("checkout", "-q", "main")
		r.files("main moves", "a.txt", "a2\n")
	},
	"names git sorts as directories": func(r *gitRepo) {
		r.files("base", "a.txt", "a\n", "a-b", "1\n", "a/b", "2\n", "a.b", "3\n", "a0", "4\n")
		r.git("checkout", "-q", "-b", "feature/x")
		r.files("odd names", "with space/f i l e", "s\n", "ünï/cödé.txt", "u\n", "-dash", "d\n", "--", "dd\n",
			strings.Repeat("long-directory-name/", 12)+"leaf.txt", "l\n", "empty", "", "a/b", "-", "a/b.c", "5\n", "a-b", "-", "a-b/c", "6\n")
		r.git("checkout", "-q", "main")
		r.files("main moves", "a0", "4b\n")
	},
	"modes and symlinks change": func(r *gitRepo) {
		r.files("base", "run.sh", "echo\n", "tool", "x:echo\n", "ln", "->run.sh", "f", "file\n", "dl", "->d")
		r.git("checkout", "-q", "-b", "feature/x")
		r.files("modes", "run.sh", "x:echo\n", "tool", "echo\n", "ln", "a symlink becomes a file\n", "f", "->tool", "dl", "-", "dl/x", "now a dir\n")
		r.git("checkout", "-q", "main")
		r.files("main moves", "other", "o\n")
	},
	"deletions on both sides": func(r *gitRepo) {
		r.files("base", "a", "a\n", "b", "b\n", "c/d", "d\n", "c/e", "e\n")
		r.git("checkout", "-q", "-b", "feature/x")
		r.files("branch deletes", "a", "-", "c/d", "-")
		r.git("checkout", "-q", "main")
		r.files("main deletes", "b", "-", "c/e", "-")
	},
	"branch merged main back in": func(r *gitRepo) {
		r.files("base", "a", "a\n")
		r.git("checkout", "-q", "-b", "feature/x")
		r.files("b1", "b", "b\n")
		r.git("checkout", "-q", "main")
		r.files("m1", "m", "m\n")
		r.git("checkout", "-q", "feature/x")
		r.merge("main", "merge main in")
		r.files("b2", "b", "b2\n")
		r.git("checkout", "-q", "main")
	},
	"criss-cross": func(r *gitRepo) {
		r.files("base", "a", "a\n", "b", "b\n")
		r.git("checkout", "-q", "-b", "feature/x")
		r.files("b1", "b", "b1\n")
		r.git("checkout", "-q", "main")
		r.files("m1", "a", "a1\n")
		r.git("branch", "side", "main")
		r.merge("feature/x", "m merges b")
		r.git("checkout", "-q", "feature/x")
		r.merge("side", "b merges m")
		r.files("b2", "c", "c\n")
		r.git("checkout", "-q", "main")
		r.files("m2", "d", "d\n")
	},
}

// TestMergeShapesMatchGit: for each history, baton's merge commit has the
// tree git's merge engine gives (the branch's own for a fast-forwardable
// branch), git fsck --strict accepts the repository, and main's checkout
// is clean: files, index and HEAD agree.
func TestMergeShapesMatchGit(t *testing.T) {
	for name, shape := range mergeShapes {
		for _, ff := range []bool{false, true} {
			t.Run(name+map[bool]string{true: " --ff"}[ff], func(t *testing.T) {
				r := newGitRepo(t)
				shape(r)
				want := r.git("merge-tree", "--write-tree", "main", "feature/x")
				res, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/x", Into: "main", Message: "Merge feature/x\n", Signature: sig(), FastForward: ff})
				if err != nil {
					t.Fatal(err)
				}
				if got := r.git("rev-parse", res.Commit+"^{tree}"); got != want {
					t.Errorf("merge tree %s, git merge-tree gives %s:\n%s", got, want, r.git("diff-tree", "-r", want, got))
				}
				r.git("fsck", "--strict", "--no-progress")
				if st := r.git("status", "--porcelain", "--ignore-submodules=none"); st != "" {
					t.Errorf("status after the merge:\n%s", st)
				}
				if d := r.git("diff-index", "--cached", "HEAD"); d != "" {
					t.Errorf("index differs from HEAD:\n%s", d)
				}
				if d := r.git("diff-files"); d != "" {
					t.Errorf("files differ from the index:\n%s", d)
				}
				if d := r.git("ls-files", "-s"); d != r.git("ls-tree", "-r", "--format=%(objectmode) %(objectname) 0\t%(path)", "HEAD") {
					t.Errorf("index entries:\n%s\nHEAD:\n%s", d, r.git("ls-tree", "-r", "HEAD"))
				}
			})
		}
	}
}

// TestMergeCheckoutStateAsGitSeesIt: the checkout of main is judged as git
// status judges it — a mode change or a file turned symlink is an
// uncommitted change (the merge is refused, nothing moves), while files a
// sparse checkout leaves out (skip-worktree) are not missing, and stay
// out after the merge.
func TestMergeCheckoutStateAsGitSeesIt(t *testing.T) {
	r := newGitRepo(t)
	r.files("base", "a.txt", "a\n", "run.sh", "echo\n", "out/x.txt", "x\n", "in/y.txt", "y\n")
	r.git("checkout", "-q", "-b", "feature/x")
	r.files("change", "run.sh", "echo 2\n", "out/x.txt", "x2\n", "in/y.txt", "y2\n")
	r.git("checkout", "-q", "main")
	r.files("main moves", "a.txt", "a2\n")
	before := r.git("rev-parse", "main")
	must(t, os.Chmod(filepath.Join(r.dir, "run.sh"), 0o755))
	_, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/x", Into: "main", Message: "m\n", Signature: sig()})
	if !errors.Is(err, gitops.ErrDirtyWorktree) || r.git("rev-parse", "main") != before {
		t.Fatalf("a mode change in the checkout: %v", err)
	}
	must(t, os.Chmod(filepath.Join(r.dir, "run.sh"), 0o644))
	r.git("update-index", "--chmod=+x", "run.sh")
	_, err = r.open().Merge(gitops.MergeOptions{Branch: "feature/x", Into: "main", Message: "m\n", Signature: sig()})
	if !errors.Is(err, gitops.ErrDirtyWorktree) || r.git("rev-parse", "main") != before {
		t.Fatalf("a staged mode change: %v", err)
	}
	r.git("update-index", "--chmod=-x", "run.sh")
	r.git("sparse-checkout", "set", "--no-cone", "/*", "!/out/")
	if _, err := os.Stat(filepath.Join(r.dir, "out")); err == nil {
		t.Fatal("sparse checkout kept out/")
	}
	res, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/x", Into: "main", Message: "m\n", Signature: sig()})
	if err != nil {
		t.Fatal(err)
	}
	if st := r.git("status", "--porcelain"); st != "" {
		t.Errorf("status after the merge:\n%s", st)
	}
	if d := r.git("diff-index", "--cached", res.Commit); d != "" {
		t.Errorf("index differs from the merge:\n%s", d)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "out")); err == nil {
		t.Error("the merge wrote a file the sparse checkout leaves out")
	}
	if got := read(t, r.dir, "in/y.txt"); got != "y2\n" {
		t.Errorf("in/y.txt = %q", got)
	}
}

// TestMergeUpdatesCheckoutWithSeparateGitDir: a checkout whose .git is a
// file naming a git directory elsewhere (git init --separate-git-dir, or a
// repository that is a submodule of another) is updated by the merge like
// any other checkout of main.
func TestMergeUpdatesCheckoutWithSeparateGitDir(t *testing.T) {
	base := t.TempDir()
	outer := &gitRepo{t: t, dir: base}
	for _, layout := range []string{"separate", "submodule"} {
		r := &gitRepo{t: t, dir: filepath.Join(base, layout)}
		if layout == "separate" {
			outer.git("init", "-q", "-b", "main", "--separate-git-dir", filepath.Join(base, "store.git"), r.dir)
		} else {
			src := &gitRepo{t: t, dir: filepath.Join(base, "src")}
			outer.git("init", "-q", "-b", "main", src.dir)
			src.files("base", "a", "a\n")
			super := &gitRepo{t: t, dir: filepath.Join(base, "super")}
			outer.git("init", "-q", "-b", "main", super.dir)
			super.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", src.dir, "sub")
			r.dir = filepath.Join(super.dir, "sub")
			r.git("checkout", "-q", "-B", "main")
		}
		r.files("base", "a", "a\n")
		r.git("checkout", "-q", "-b", "feature/x")
		r.files("b", "b", "b\n")
		r.git("checkout", "-q", "main")
		r.files("m", "m", "m\n")
		res, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/x", Into: "main", Message: "m\n", Signature: sig()})
		if err != nil {
			t.Fatalf("%s: %v", layout, err)
		}
		if st := r.git("status", "--porcelain"); st != "" || res.Worktree != r.dir {
			t.Errorf("%s: checkout %q not updated:\n%s", layout, res.Worktree, st)
		}
	}
}

// TestMergeRefusesToOverwriteUntracked: as git merge refuses ("untracked
// working tree files would be overwritten"), a merge whose files would
// land on untracked files of main's checkout — the same path, a file where
// a directory goes, a directory of untracked files where a file goes — is
// refused before anything changes, and those files are kept.
func TestMergeRefusesToOverwriteUntracked(t *testing.T) {
	for name, untracked := range map[string][2]string{
		"same path":               {"new.txt", "mine\n"},
		"a file where a dir goes": {"newdir", "mine\n"},
		"a dir where a file goes": {"d/mine.txt", "mine\n"},
	} {
		r := newGitRepo(t)
		r.files("base", "a", "a\n", "d/x", "x\n")
		r.git("checkout", "-q", "-b", "feature/x")
		r.files("adds", "new.txt", "theirs\n", "newdir/f", "f\n", "d", "-", "d", "now a file\n")
		r.git("checkout", "-q", "main")
		r.files("main moves", "a", "a2\n")
		before := r.git("rev-parse", "main")
		p := filepath.Join(r.dir, untracked[0])
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(untracked[1]), 0o644))
		_, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/x", Into: "main", Message: "m\n", Signature: sig()})
		if !errors.Is(err, gitops.ErrDirtyWorktree) || !strings.Contains(err.Error(), untracked[0]) {
			t.Errorf("%s: %v", name, err)
		}
		if r.git("rev-parse", "main") != before || read(t, r.dir, untracked[0]) != untracked[1] {
			t.Errorf("%s: main moved or the untracked file changed", name)
		}
		if st := r.git("status", "--porcelain"); st != "?? "+untracked[0] && st != "?? "+filepath.Dir(untracked[0])+"/" {
			t.Errorf("%s: status:\n%s", name, st)
		}
	}
}

// TestMergeIndexFormats: the index formats git writes by configuration are
// read and written back so git reads them (version 4, untracked cache,
// no checksum); a split index, which baton cannot update, is refused by
// name with what to do, before anything changes.
func TestMergeIndexFormats(t *testing.T) {
	for _, cfg := range [][2]string{{"index.version", "4"}, {"feature.manyFiles", "true"}, {"core.untrackedCache", "true"}, {"index.skipHash", "true"}, {"core.splitIndex", "true"}} {
		r := newGitRepo(t)
		r.git("config", cfg[0], cfg[1])
		r.files("base", "a.txt", "a\n", "d/x", "x\n")
		r.git("checkout", "-q", "-b", "feature/x")
		r.files("b", "b", "b\n", "d/x", "x2\n")
		r.git("checkout", "-q", "main")
		r.files("m", "m", "m\n")
		before := r.git("rev-parse", "main")
		_, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/x", Into: "main", Message: "m\n", Signature: sig()})
		if cfg[0] == "core.splitIndex" {
			if !errors.Is(err, gitops.ErrSplitIndex) || !strings.Contains(err.Error(), "git update-index --no-split-index") || r.git("rev-parse", "main") != before {
				t.Errorf("split index: %v", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s=%s: %v", cfg[0], cfg[1], err)
		}
		if st := r.git("status", "--porcelain"); st != "" {
			t.Errorf("%s=%s: status:\n%s", cfg[0], cfg[1], st)
		}
	}
}

// TestMergeChecksOutAsGitConverts: where attributes make git convert files
// on checkout (line endings, filters), the merged files are what git
// writes, and git status stays clean; attributes the merge itself brings
// count.
func TestMergeChecksOutAsGitConverts(t *testing.T) {
	for _, viaBranch := range []bool{false, true} {
		r := newGitRepo(t)
		r.git("config", "filter.up.smudge", "tr a-z A-Z")
		r.git("config", "filter.up.clean", "tr A-Z a-z")
		attrs := "*.txt text eol=crlf\n*.up filter=up\n"
		if viaBranch {
			r.files("base", "a.txt", "one\n")
		} else {
			r.files("base", "a.txt", "one\n", ".gitattributes", attrs)
		}
		r.git("checkout", "-q", "-b", "feature/x")
		r.files("b", "b.txt", "two\nlines\n", "c.up", "shout\n")
		if viaBranch {
			r.files("attrs", ".gitattributes", attrs)
		}
		r.git("checkout", "-q", "main")
		r.files("m", "m", "m\n")
		if _, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/x", Into: "main", Message: "m\n", Signature: sig()}); err != nil {
			t.Fatal(err)
		}
		if got := read(t, r.dir, "b.txt") + read(t, r.dir, "c.up"); got != "two\r\nlines\r\nSHOUT\n" {
			t.Errorf("branch brings attributes %v: files %q, git writes %q", viaBranch, got, "two\r\nlines\r\nSHOUT\n")
		}
		if st := r.git("status", "--porcelain"); st != "" {
			t.Errorf("status:\n%s", st)
		}
		r.git("diff", "--quiet")
		r.git("diff", "--cached", "--quiet")
	}
}

// TestDetachWithSeparateGitDir: a checkout whose .git is a file (git init
// --separate-git-dir) that has a branch checked out is left on a detached
// HEAD when the branch goes, like any other worktree.
func TestDetachWithSeparateGitDir(t *testing.T) {
	base := t.TempDir()
	r := &gitRepo{t: t, dir: filepath.Join(base, "wt")}
	(&gitRepo{t: t, dir: base}).git("init", "-q", "-b", "main", "--separate-git-dir", filepath.Join(base, "store.git"), r.dir)
	r.files("base", "a", "a\n")
	r.git("checkout", "-q", "-b", "feature/x")
	at := r.git("rev-parse", "HEAD")
	done, err := gitops.Detach(r.open(), "feature/x", at)
	if err != nil || len(done) != 1 {
		t.Fatalf("Detach: %v, %v", done, err)
	}
	if b, _ := r.gitMaybe("symbolic-ref", "-q", "HEAD"); b != "" || r.git("rev-parse", "HEAD") != at {
		t.Errorf("HEAD after Detach: %q", b)
	}
}

// TestMergeDirtAsGitSeesConvertedFiles: in a checkout whose attributes
// convert line endings, a file git checked out (CRLF bytes, LF blob) and
// then only touched is clean for git and for the merge; a real change
// still refuses it.
func TestMergeDirtAsGitSeesConvertedFiles(t *testing.T) {
	r := newGitRepo(t)
	r.files("base", ".gitattributes", "*.txt text eol=crlf\n", "a.txt", "one\ntwo\n")
	p := filepath.Join(r.dir, "a.txt")
	must(t, os.Remove(p))
	r.git("checkout", "--", "a.txt")
	r.git("checkout", "-q", "-b", "feature/x")
	r.files("b", "b.txt", "b\n")
	r.git("checkout", "-q", "main")
	r.files("m", "m", "m\n")
	later := time.Now().Add(time.Hour)
	must(t, os.Chtimes(p, later, later))
	if st := r.git("status", "--porcelain"); st != "" {
		t.Fatalf("git sees dirt: %s", st)
	}
	before := r.git("rev-parse", "main")
	must(t, os.WriteFile(p, []byte("one\r\nTWO\r\n"), 0o644))
	if _, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/x", Into: "main", Message: "m\n", Signature: sig()}); !errors.Is(err, gitops.ErrDirtyWorktree) || r.git("rev-parse", "main") != before {
		t.Fatalf("a real change: %v", err)
	}
	must(t, os.WriteFile(p, []byte("one\r\ntwo\r\n"), 0o644))
	if _, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/x", Into: "main", Message: "m\n", Signature: sig()}); err != nil {
		t.Fatal(err)
	}
	if st := r.git("status", "--porcelain"); st != "" {
		t.Errorf("status:\n%s", st)
	}
}

// TestMergeRefusesUnwritablePathFirst: a branch bringing a path the
// checkout does not write (a control character) is refused before main moves, not half checked out after.
func TestMergeRefusesUnwritablePathFirst(t *testing.T) {
	for _, name := range []string{"tab\there.txt", "d/bell\x07.txt"} {
		r := newGitRepo(t)
		r.files("base", "a", "a\n")
		r.git("checkout", "-q", "-b", "feature/x")
		blob := r.git("hash-object", "-w", "--stdin", "--path", "a")
		r.git("update-index", "--add", "--cacheinfo", "100644,"+blob+","+name)
		r.tick++
		r.git("commit", "-q", "-m", "odd path")
		r.git("checkout", "-q", "-f", "main")
		before := r.git("rev-parse", "main")
		_, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/x", Into: "main", Message: "m\n", Signature: sig()})
		if err == nil || !strings.Contains(err.Error(), "nothing was merged") || r.git("rev-parse", "main") != before {
			t.Errorf("%q: %v", name, err)
		}
	}
}
