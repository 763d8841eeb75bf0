//go:build unix

package gitops_test

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/baton-cli/baton/internal/gitops"
)

// TestFIFOUnderRefsIsNoBranch: a FIFO left under refs/heads (a plain read
// of it blocks until a writer comes) is no branch: listing, reading it
// and creating a branch beside it answer at once.
func TestFIFOUnderRefsIsNoBranch(t *testing.T) {
	r := featureRepo(t)
	for _, f := range []string{"feature/fifo", "main-fifo"} {
		must(t, syscall.Mkfifo(filepath.Join(r.dir, ".git", "refs", "heads", filepath.FromSlash(f)), 0o644))
	}
	main := r.git("rev-parse", "main")
	done := make(chan error, 1)
	go func() {
		g := r.open()
		heads, err := gitops.Heads(g)
		if err == nil && (len(heads) != 2 || heads["main"] != main) {
			err = errors.New("Heads lists more than main and feature/a")
		}
		if _, berr := g.Branch("feature/fifo"); err == nil && !errors.Is(berr, gitops.ErrNoBranch) {
			err = berr
		}
		if err == nil {
			err = g.CreateBranch("feature/new", main)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute): // not a timing check: a read blocked on the FIFO never returns
		t.Fatal("blocked reading a FIFO under refs/heads")
	}
}

// TestFIFOLocksRefused: a FIFO in the place of a lock baton takes (of main,
// packed-refs, the checkout's index) is no lock baton made: a merge, a
// branch deletion and an index update refuse it at once instead of
// blocking on a read of it.
func TestFIFOLocksRefused(t *testing.T) {
	for _, lock := range []string{"refs/heads/main.lock", "packed-refs.lock", "index.lock"} {
		r := featureRepo(t)
		must(t, syscall.Mkfifo(filepath.Join(r.dir, ".git", filepath.FromSlash(lock)), 0o644))
		head := r.git("rev-parse", "feature/a")
		done := make(chan error, 1)
		go func() {
			g := r.open()
			if lock == "packed-refs.lock" {
				done <- g.DeleteBranch("feature/a", head)
				return
			}
			_, err := g.Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: "Merge feature/a", Signature: sig()})
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, gitops.ErrRefLocked) && !errors.Is(err, gitops.ErrIndexLocked) {
				t.Errorf("%s a FIFO: %v, want it refused as locked", lock, err)
			}
		case <-time.After(time.Minute): // not a timing check: a read blocked on the FIFO never returns
			t.Fatalf("blocked reading %s, a FIFO", lock)
		}
	}
}
