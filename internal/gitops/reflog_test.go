package gitops_test

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
)

// TestRefChangesLoggedAsGit: baton's ref changes read in git's reflogs as
// git's own would — a merge moves main@{1} and HEAD@{1} to where main was,
// a branch baton creates has its creation logged, a branch it deletes
// takes its reflog with it (a later branch named like its directory can be
// made) — and git fsck accepts the logs.
func TestRefChangesLoggedAsGit(t *testing.T) {
	r := featureRepo(t)
	g := r.open()
	before := r.git("rev-parse", "main")
	res, err := g.Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m\n", Signature: sig()})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.git("rev-parse", "main@{1}", "HEAD@{1}", "main@{0}"); got != before+"\n"+before+"\n"+res.Commit {
		t.Errorf("reflogs after the merge:\n%s", got)
	}
	if got := r.git("reflog", "-1", "--format=%gs", "main"); !strings.HasPrefix(got, "merge feature/a: ") {
		t.Errorf("main's reflog: %q", got)
	}
	if err := g.CreateBranch("topic/new", before); err != nil {
		t.Fatal(err)
	}
	if got := r.git("reflog", "--format=%H %gs", "topic/new"); got != before+" branch: Created from "+before {
		t.Errorf("a created branch's reflog: %q", got)
	}
	if err := g.DeleteBranch("feature/a", res.BranchHead); err != nil {
		t.Fatal(err)
	}
	r.git("branch", "feature")
	r.git("branch", "-D", "feature")
	r.git("branch", "feature/a", before)
	if got := r.git("reflog", "--format=%gs", "feature/a"); strings.Count(got, "\n") != 0 {
		t.Errorf("a new feature/a shows the deleted one's reflog:\n%s", got)
	}
	r.git("fsck", "--strict", "--no-progress")
}

// TestHeadsAsGitListsThem: Heads lists the branches git lists — loose and
// packed — and not the temp files a killed ref write leaves beside a
// branch (names git refuses).
func TestHeadsAsGitListsThem(t *testing.T) {
	r := featureRepo(t)
	r.git("branch", "packed/one")
	r.git("pack-refs", "--all")
	r.git("branch", "loose")
	h := r.git("rev-parse", "main")
	for _, f := range []string{".main.baton-123", "feature/.a.baton-9", "x.lock"} {
		p := filepath.Join(r.dir, ".git", "refs", "heads", filepath.FromSlash(f))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(h+"\n"), 0o644))
	}
	heads, err := gitops.Heads(r.open())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for name, hash := range heads {
		got = append(got, hash+" "+name)
	}
	sort.Strings(got)
	want := strings.Split(r.git("for-each-ref", "--format=%(objectname) %(refname:short)", "refs/heads/"), "\n")
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Heads:\n%s\ngit:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRefLockAsGit: a branch is moved under git's lock of it: a lock a git
// process holds refuses the move (nothing changes), one a killed baton left
// is cleared, and none is left behind.
func TestRefLockAsGit(t *testing.T) {
	r := featureRepo(t)
	before := r.git("rev-parse", "main")
	lock := filepath.Join(r.dir, ".git", "refs", "heads", "main.lock")
	must(t, os.WriteFile(lock, []byte(before+"\n"), 0o644)) // as git writes it
	_, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m\n", Signature: sig()})
	if !errors.Is(err, gitops.ErrRefMoved) || r.git("rev-parse", "main") != before {
		t.Fatalf("a git-held lock: %v", err)
	}
	must(t, os.WriteFile(lock, []byte("baton: writing the index\n"), 0o644)) // left by a killed baton
	if _, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m\n", Signature: sig()}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lock); err == nil {
		t.Error("the lock was left behind")
	}
	r.git("update-ref", "refs/heads/main", "main")
}

// TestTornReflogLineStaysAlone: a reflog that ends inside a line (an
// append a full disk or a crash cut short) gets baton's next entry on a
// line of its own, which git reads; the torn line is passed over.
func TestTornReflogLineStaysAlone(t *testing.T) {
	r := featureRepo(t)
	before := r.git("rev-parse", "main")
	for _, log := range []string{"logs/refs/heads/main", "logs/HEAD"} {
		f, err := os.OpenFile(filepath.Join(r.dir, ".git", filepath.FromSlash(log)), os.O_WRONLY|os.O_APPEND, 0)
		must(t, err)
		_, err = f.WriteString(before + " " + before[:20])
		must(t, err)
		must(t, f.Close())
	}
	if _, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "m\n", Signature: sig()}); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"main", "HEAD"} {
		if got := r.git("reflog", "-1", "--format=%gs", ref); !strings.HasPrefix(got, "merge feature/a: ") {
			t.Errorf("%s's newest reflog entry: %q", ref, got)
		}
		if got := r.git("rev-parse", ref+"@{1}"); got != before {
			t.Errorf("%s@{1} = %s, want %s", ref, got, before)
		}
	}
}
