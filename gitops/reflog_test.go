package gitops_test

import (
	"strings"
	"testing"

	"github.com/baton-cli/baton/gitops"
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
