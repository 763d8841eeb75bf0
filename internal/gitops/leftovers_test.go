package gitops_test

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/baton-cli/baton/internal/gitops"
)

// refLeftovers are files a killed writer (an older baton, git, another
// tool) or anyone else can leave under .git: path (below .git) → content.
var refLeftovers = map[string]map[string]string{
	"empty value temp beside a branch":       {"refs/heads/feature/.a.baton-123": ""},
	"empty value temp beside main":           {"refs/heads/.main.baton-77": ""},
	"whole value temp beside a branch":       {"refs/heads/feature/.a.baton-9": "{main}\n"},
	"empty lock content temp (older baton)":  {"refs/heads/feature/a.lock.baton-123": ""},
	"half-written lock content temp":         {"refs/heads/feature/a.lock.baton-5": "baton: wri"},
	"whole lock content temp":                {"refs/heads/main.lock.baton-5": "baton: writing the index\n"},
	"empty lock of another branch":           {"refs/heads/feature/other.lock": ""},
	"git's lock of another branch":           {"refs/heads/other.lock": "{main}\n"},
	"empty file with a branch's name":        {"refs/heads/feature/empty": ""},
	"garbage file with a branch's name":      {"refs/heads/feature/garbage": "not a hash\n"},
	"hash with trailing data (git reads it)": {"refs/heads/fetched": "{main} branch 'x' of example\n"},
	"short hash":                             {"refs/heads/short": "abc1234\n"},
	"dot-directory of refs":                  {"refs/heads/.tmp/x": "{main}\n", "refs/heads/.tmp/y": ""},
	"temp in the common directory":           {".baton-tmp-123": ""},
	"broken loose file over a packed branch": {"refs/heads/packed/one": ""},
	"empty directories of a deleted branch":  {"refs/heads/feature/gone/deeper/": ""},
}

// leftoverRepo is featureRepo with a packed branch, then the files of
// leftover ("{main}" in a content is main's hash).
func leftoverRepo(t *testing.T, leftover map[string]string) *gitRepo {
	r := featureRepo(t)
	r.git("branch", "packed/one")
	r.git("pack-refs", "--all")
	r.git("branch", "loose")
	main := r.git("rev-parse", "main")
	for path, content := range leftover {
		p := filepath.Join(r.dir, ".git", filepath.FromSlash(path))
		if strings.HasSuffix(path, "/") {
			must(t, os.MkdirAll(p, 0o755))
			continue
		}
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(strings.ReplaceAll(content, "{main}", main)), 0o644))
	}
	return r
}

// headsAsGit fails the test unless Heads lists what git lists.
func headsAsGit(t *testing.T, r *gitRepo, g gitops.Repo) {
	t.Helper()
	heads, err := gitops.Heads(g)
	if err != nil {
		t.Fatalf("Heads: %v", err)
	}
	var got []string
	for name, hash := range heads {
		got = append(got, hash+" "+name)
	}
	sort.Strings(got)
	out, err := r.gitMaybe("for-each-ref", "--format=%(objectname) %(refname:short)", "refs/heads/")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(out, "\n")
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Heads:\n%s\ngit:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRefLeftoversIgnoredAsGit: whatever a killed writer or anyone else
// left under refs/, baton lists and reads branches as git does, and
// creating a branch (beside the leftover, and with a broken ref's own
// name), moving one and merging still work — with git agreeing after.
func TestRefLeftoversIgnoredAsGit(t *testing.T) {
	for kind, leftover := range refLeftovers {
		t.Run(kind, func(t *testing.T) {
			r := leftoverRepo(t, leftover)
			g := r.open()
			headsAsGit(t, r, g)
			for _, b := range []string{"main", "feature/a", "packed/one", "loose", "feature/empty", "feature/garbage", "fetched", "short"} {
				want, werr := r.gitMaybe("rev-parse", "--verify", "-q", "refs/heads/"+b)
				got, err := g.Branch(b)
				if (werr != nil) != (err != nil) || got != want {
					t.Errorf("Branch(%s) = %q, %v; git says %q, %v", b, got, err, want, werr)
				}
				if err != nil && !errors.Is(err, gitops.ErrNoBranch) {
					t.Errorf("Branch(%s): %v, want ErrNoBranch", b, err)
				}
			}
			main := r.git("rev-parse", "main")
			for _, b := range []string{"feature/new", "feature/a/../b", "feature/empty", "feature/garbage", "packed/one", "feature/gone"} {
				_, werr := r.gitMaybe("rev-parse", "--verify", "-q", "refs/heads/"+b)
				err := g.CreateBranch(b, main)
				if (err == nil) != (werr != nil && !strings.Contains(b, "..")) {
					t.Errorf("CreateBranch(%s): %v (git has it: %v)", b, err, werr == nil)
				}
				if err == nil && r.git("rev-parse", "refs/heads/"+b) != main {
					t.Errorf("CreateBranch(%s): git does not see it at main", b)
				}
			}
			if _, err := g.Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m\n", Signature: sig()}); err != nil {
				t.Fatalf("merge: %v", err)
			}
			if r.git("rev-parse", "main^2") != r.git("rev-parse", "feature/a") {
				t.Error("main is not the merge of feature/a")
			}
			headsAsGit(t, r, r.open())
		})
	}
}

// TestKilledWritesCleared: a branch write first removes what killed
// writes left anywhere in refs/heads and in the git directory — the temps
// older versions of baton staged in refs/ at once, baton's own in the
// common directory once they are older than any live write, locks holding
// baton's marker (of any branch, and of packed-refs) — and leaves a fresh
// temp, which may be a live write's, and every other lock.
func TestKilledWritesCleared(t *testing.T) {
	const marker = "baton: writing the index\n"
	left := map[string]string{
		"refs/heads/feature/.b.baton-1":      "",
		"refs/heads/feature/b.lock.baton-2":  "baton: wri",
		"refs/heads/deep/er/.x.baton-3":      "",
		"refs/heads/feature/c.lock":          "",
		"refs/heads/feature/d.lock":          marker,
		"refs/heads/gone.lock":               marker,
		"refs/heads/git.lock":                "1111111111111111111111111111111111111111\n",
		"packed-refs.lock":                   marker,
		".baton-tmp-old":                     "",
		".baton-tmp-fresh":                   marker,
		"refs/heads/feature/.keep-not-baton": "",
	}
	gone := map[string]bool{"refs/heads/feature/.b.baton-1": true, "refs/heads/feature/b.lock.baton-2": true, "refs/heads/deep/er/.x.baton-3": true,
		"refs/heads/feature/d.lock": true, "refs/heads/gone.lock": true, "packed-refs.lock": true, ".baton-tmp-old": true}
	r := leftoverRepo(t, left)
	r.git("branch", "feature/real.lock.baton-7") // a branch git allows, named like an older baton's temp
	real := r.git("rev-parse", "feature/real.lock.baton-7")
	old := time.Now().Add(-2 * time.Hour)
	must(t, os.Chtimes(filepath.Join(r.dir, ".git", ".baton-tmp-old"), old, old))
	main := r.git("rev-parse", "main")
	must(t, r.open().CreateBranch("feature/b", main))
	for p := range left {
		_, err := os.Stat(filepath.Join(r.dir, ".git", filepath.FromSlash(p)))
		if errors.Is(err, os.ErrNotExist) != gone[p] {
			t.Errorf("%s: removed %v, want %v", p, err != nil, gone[p])
		}
	}
	if out, err := r.gitMaybe("for-each-ref", "--format=%(objectname) %(refname:short)"); err != nil || !strings.Contains(out, real+" feature/real.lock.baton-7") {
		t.Errorf("git for-each-ref: %v\n%s", err, out)
	}
}

// TestEmptyRefLockRefused: an empty lock of the very branch baton moves
// may be a live git's (git creates its lock empty, and keeps it so while
// it deletes the ref): the move is refused with nothing changed and the
// lock kept; once the lock is gone the move goes through.
func TestEmptyRefLockRefused(t *testing.T) {
	r := featureRepo(t)
	before := r.git("rev-parse", "main")
	lock := filepath.Join(r.dir, ".git", "refs", "heads", "main.lock")
	must(t, os.WriteFile(lock, nil, 0o644))
	_, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m\n", Signature: sig()})
	if !errors.Is(err, gitops.ErrRefLocked) || !errors.Is(err, gitops.ErrRefMoved) || r.git("rev-parse", "main") != before {
		t.Fatalf("an empty lock: %v", err)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the lock was removed: %v", err)
	}
	must(t, os.Remove(lock))
	if _, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m\n", Signature: sig()}); err != nil {
		t.Fatal(err)
	}
}

// TestWithoutPacked: a ref is dropped from packed-refs with its peeled
// line, and nothing else is.
func TestWithoutPacked(t *testing.T) {
	const header = "# pack-refs with: peeled fully-peeled sorted \n"
	const a, b, c = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222", "3333333333333333333333333333333333333333"
	for _, tc := range []struct {
		name, in, ref, want string
		dropped             bool
	}{
		{"a branch", header + a + " refs/heads/a\n" + b + " refs/heads/ab\n", "refs/heads/a", header + b + " refs/heads/ab\n", true},
		{"a name that only starts like it", header + b + " refs/heads/ab\n", "refs/heads/a", header + b + " refs/heads/ab\n", false},
		{"with its peeled line", a + " refs/tags/v1\n^" + c + "\n" + b + " refs/tags/v2\n^" + c + "\n", "refs/tags/v1", b + " refs/tags/v2\n^" + c + "\n", true},
		{"the last line, unterminated", header + b + " refs/heads/x\n" + a + " refs/heads/a", "refs/heads/a", header + b + " refs/heads/x\n", true},
		{"CRLF", a + " refs/heads/a\r\n" + b + " refs/heads/b\r\n", "refs/heads/a", b + " refs/heads/b\r\n", true},
		{"empty", "", "refs/heads/a", "", false},
	} {
		got, dropped := gitops.WithoutPacked([]byte(tc.in), tc.ref)
		if string(got) != tc.want || dropped != tc.dropped {
			t.Errorf("%s: got %q, %v; want %q, %v", tc.name, got, dropped, tc.want, tc.dropped)
		}
	}
}

// TestDeleteBranchAsGit: a packed branch is deleted from packed-refs (the
// rest kept, as git reads it) and its loose file; a lock of packed-refs a
// git process holds refuses the deletion with nothing changed; files
// baton writes are made as git makes its own (mode 0666 less the umask).
func TestDeleteBranchAsGit(t *testing.T) {
	r := featureRepo(t)
	r.git("tag", "-a", "-m", "annotated", "v1", "feature/a")
	r.git("branch", "other", "feature/a~1")
	r.git("pack-refs", "--all")
	r.git("checkout", "-q", "feature/a")
	r.commit("f.txt", "feature 3")
	r.git("checkout", "-q", "main")
	head := r.git("rev-parse", "feature/a")
	lock := filepath.Join(r.dir, ".git", "packed-refs.lock")
	must(t, os.WriteFile(lock, nil, 0o644)) // as git holds it
	if err := r.open().DeleteBranch("feature/a", head); !errors.Is(err, gitops.ErrRefLocked) || r.git("rev-parse", "feature/a") != head {
		t.Fatalf("packed-refs locked by git: %v", err)
	}
	must(t, os.Remove(lock))
	var wantRefs []string
	for _, l := range strings.Split(r.git("for-each-ref", "--format=%(objectname) %(*objectname) %(refname)"), "\n") {
		if !strings.HasSuffix(l, " refs/heads/feature/a") {
			wantRefs = append(wantRefs, l)
		}
	}
	must(t, r.open().DeleteBranch("feature/a", head))
	if got, want := r.git("for-each-ref", "--format=%(objectname) %(*objectname) %(refname)"), strings.Join(wantRefs, "\n"); got != want {
		t.Errorf("refs after the deletion (with tags peeled):\n%s\nwant:\n%s", got, want)
	}
	if strings.Contains(read(t, r.dir, ".git/packed-refs"), "refs/heads/feature/a") {
		t.Error("feature/a is still in packed-refs")
	}
	r.git("fsck", "--strict", "--no-progress")
}

// TestFilesMadeAsGitMakesThem: the files baton writes in the git
// directory — a branch, packed-refs, the index, a worktree's HEAD — have
// the mode git gives its own (0666 less the umask).
func TestFilesMadeAsGitMakesThem(t *testing.T) {
	r := featureRepo(t)
	r.git("pack-refs", "--all")
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", wt, "feature/a")
	g := r.open()
	head := r.git("rev-parse", "feature/a")
	if _, err := g.Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m\n", Signature: sig()}); err != nil {
		t.Fatal(err)
	}
	if _, err := gitops.Detach(g, "feature/a", head); err != nil {
		t.Fatal(err)
	}
	must(t, g.DeleteBranch("feature/a", head))
	must(t, g.CreateBranch("baton-made", head))
	r.git("branch", "git-made", head)
	gitMade, err := os.Stat(filepath.Join(r.dir, ".git", "refs", "heads", "git-made"))
	must(t, err)
	for _, p := range []string{".git/refs/heads/baton-made", ".git/packed-refs", ".git/index", ".git/worktrees/wt/HEAD"} {
		fi, err := os.Stat(filepath.Join(r.dir, filepath.FromSlash(p)))
		if err != nil || fi.Mode() != gitMade.Mode() {
			t.Errorf("%s: %v (%v), git makes %v", p, fi.Mode(), err, gitMade.Mode())
		}
	}
	r.git("fsck", "--strict", "--no-progress")
}
