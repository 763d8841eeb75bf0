package gitops_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
)

// A 'git switch' in a worktree after Detach read its HEAD but before it
// took HEAD.lock is kept: Detach reads HEAD again under the lock, instead of
// leaving the worktree detached at the deleted branch's commit with the
// other branch's files and index.
func TestDetachKeepsSwitch(t *testing.T) {
	r := featureRepo(t)
	wtDir := filepath.Join(r.dir, ".git", "wt-a")
	r.git("worktree", "add", "-q", wtDir, "feature/a")
	r.git("branch", "other", "main")
	g := r.open()
	h, err := g.Branch("feature/a")
	if err != nil {
		t.Fatal(err)
	}
	switched := false
	restore := gitops.SetAfterStep(func(step string) {
		if step == "temp created" && !switched { // HEAD read, HEAD.lock not taken yet
			switched = true
			cmd := exec.Command("git", "switch", "-q", "other")
			cmd.Dir = wtDir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git switch: %v %s", err, out)
			}
		}
	})
	_, err = gitops.Detach(g, "feature/a", h)
	restore()
	if err != nil {
		t.Logf("Detach: %v", err)
	}
	wt := &gitRepo{t: t, dir: wtDir}
	if b, err := wt.gitMaybe("symbolic-ref", "-q", "HEAD"); err != nil || b != "refs/heads/other" {
		t.Errorf("after a 'git switch other' in the worktree, its HEAD is %q (symbolic-ref: %v), at %s; want refs/heads/other", b, err, wt.git("rev-parse", "HEAD"))
	}
}
