package gitops_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
)

// A branch DeleteBranch reports deleted stays deleted while 'git pack-refs
// --all' (what 'git gc --auto' runs) packs refs meanwhile: git holds
// packed-refs.lock until the loose file is gone, and so must baton, or the
// loose value is packed between the two and lives on in packed-refs.
func TestDeleteBranchRacesPackRefs(t *testing.T) {
	r := featureRepo(t)
	main := r.git("rev-parse", "main")
	const n = 300
	for i := 0; i < n; i++ {
		r.git("branch", fmt.Sprintf("b%d", i), main)
	}
	var stop atomic.Bool
	done := make(chan int)
	go func() {
		packs := 0
		for !stop.Load() {
			cmd := exec.Command("git", "-c", "core.packedRefsTimeout=5000", "pack-refs", "--all")
			cmd.Dir = r.dir
			_ = cmd.Run()
			packs++
		}
		done <- packs
	}()
	g := r.open()
	back := 0
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("b%d", i)
		if err := g.DeleteBranch(name, main); err != nil {
			t.Logf("%s: %v", name, err)
			continue
		}
		if _, err := r.gitMaybe("rev-parse", "--verify", "-q", "refs/heads/"+name); err == nil {
			back++
		}
	}
	stop.Store(true)
	packs := <-done
	if back > 0 {
		t.Errorf("%d of %d branches DeleteBranch reported deleted are still there (git pack-refs ran %d times meanwhile)", back, n, packs)
	}
}

// DeleteBranch removes the branch's reflog while it still holds the ref's
// lock, as git does: a branch of the same name made as soon as the lock is
// gone keeps the reflog it starts.
func TestDeleteBranchRemovesReflogUnderLock(t *testing.T) {
	r := featureRepo(t)
	reflog := filepath.Join(r.dir, ".git", "logs", "refs", "heads", "feature", "a")
	lock := filepath.Join(r.dir, ".git", "refs", "heads", "feature", "a.lock")
	if _, err := os.Stat(reflog); err != nil {
		t.Fatalf("no reflog to start with: %v", err)
	}
	checked := false
	restore := gitops.SetAfterStep(func(step string) {
		if step != "loose removed" {
			return
		}
		checked = true
		if _, err := os.Stat(lock); err != nil {
			t.Errorf("the ref's lock is not held at %q: %v", step, err)
		}
		if _, err := os.Stat(reflog); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the reflog is still there while the ref's lock is held: %v", err)
		}
	})
	err := r.open().DeleteBranch("feature/a", r.git("rev-parse", "feature/a"))
	restore()
	must(t, err)
	if !checked {
		t.Fatal("DeleteBranch never reached its step \"loose removed\"")
	}
}
