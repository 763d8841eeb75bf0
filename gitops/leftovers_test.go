package gitops_test

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/baton-cli/baton/gitops"
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

// TestStaleTempsRemoved: a branch write removes the temp files killed
// writes left beside it — those older versions of baton staged in refs/
// at once, baton's own in the common directory once they are older than
// any live write — and leaves a fresh one, which may be a live write's,
// and every lock but one holding baton's marker.
func TestStaleTempsRemoved(t *testing.T) {
	r := leftoverRepo(t, map[string]string{
		"refs/heads/feature/.b.baton-1":      "",
		"refs/heads/feature/b.lock.baton-2":  "baton: wri",
		"refs/heads/feature/c.lock":          "",
		".baton-tmp-old":                     "",
		".baton-tmp-fresh":                   "baton: writing the index\n",
		"refs/heads/feature/.keep-not-baton": "",
	})
	old := time.Now().Add(-2 * time.Hour)
	must(t, os.Chtimes(filepath.Join(r.dir, ".git", ".baton-tmp-old"), old, old))
	main := r.git("rev-parse", "main")
	must(t, r.open().CreateBranch("feature/b", main))
	gone := map[string]bool{"refs/heads/feature/.b.baton-1": true, "refs/heads/feature/b.lock.baton-2": true, ".baton-tmp-old": true}
	for _, p := range []string{"refs/heads/feature/.b.baton-1", "refs/heads/feature/b.lock.baton-2", ".baton-tmp-old", ".baton-tmp-fresh", "refs/heads/feature/c.lock", "refs/heads/feature/.keep-not-baton"} {
		_, err := os.Stat(filepath.Join(r.dir, ".git", filepath.FromSlash(p)))
		if errors.Is(err, os.ErrNotExist) != gone[p] {
			t.Errorf("%s: removed %v, want %v", p, err != nil, gone[p])
		}
	}
	if out, err := r.gitMaybe("for-each-ref"); err != nil || strings.Contains(out, "baton") {
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
	if !errors.Is(err, gitops.ErrRefMoved) || r.git("rev-parse", "main") != before {
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
