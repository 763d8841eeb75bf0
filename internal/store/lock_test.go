//go:build unix

package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-cli/baton/internal/errs"
)

// The state lock is an flock on .baton/lock. A second open of the file
// conflicts with the first even inside one process, which lets the test
// play two writers.
func TestLockWaitsAndGivesUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	ctx := context.Background()
	release, ok, err := lockWait(ctx, path)
	if err != nil || !ok {
		t.Fatalf("an unheld lock: acquired %v, %v", ok, err)
	}

	// held: a waiter whose deadline passes gives up without the lock
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, ok, err = lockWait(short, path)
	cancel()
	if ok || err != nil {
		t.Fatalf("a held lock: acquired %v, %v; want not acquired, no error", ok, err)
	}

	// a waiter is woken when the holder lets go
	got := make(chan bool)
	go func() {
		r, ok, _ := lockWait(ctx, path)
		if ok {
			r()
		}
		got <- ok
	}()
	release()
	if !<-got {
		t.Fatal("the waiter did not get the lock its holder released")
	}

	// the waiter that gave up above must not keep the lock it may have
	// been granted later: the lock can be taken again
	long, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, ok, err := lockWait(long, path)
	if !ok || err != nil {
		t.Fatalf("after every holder let go: acquired %v, %v", ok, err)
	}
	r()
}

// A transaction that cannot get the lock in time is a Conflict naming
// the lock; one interrupted while waiting is Interrupted.
func TestUpdateLockTimeoutAndInterrupt(t *testing.T) {
	s := New(t.TempDir())
	s.Create = true
	s.LockTimeout = 50 * time.Millisecond
	ctx := context.Background()
	if err := s.Update(ctx, func(*Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	release, ok, err := lockWait(ctx, s.lockPath())
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	defer release()
	err = s.Update(ctx, func(*Tx) error { return errors.New("ran without the lock") })
	if errs.KindOf(err) != errs.Conflict {
		t.Fatalf("held lock: %v (kind %v), want a Conflict", err, errs.KindOf(err))
	}
	s.LockTimeout = time.Minute
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err = s.Update(cctx, func(*Tx) error { return errors.New("ran without the lock") })
	if errs.KindOf(err) != errs.Interrupted {
		t.Fatalf("interrupted wait: %v (kind %v), want Interrupted", err, errs.KindOf(err))
	}
}

// A waiter that gives up names the holder as the holder wrote itself into
// the lock file; a later holder that names no one leaves no name behind.
func TestLockTimeoutNamesHolder(t *testing.T) {
	s := New(t.TempDir())
	s.Create = true
	s.LockTimeout = 50 * time.Millisecond
	ctx := context.Background()
	holder := New(s.Dir)
	holder.Create = true
	holder.Holder = "baton progress add-session with a long name" + strings.Repeat("x", 400)
	waited := make(chan error)
	err := holder.Update(ctx, func(*Tx) error {
		go func() { waited <- s.Update(ctx, func(*Tx) error { return nil }) }()
		return <-waited
	})
	if errs.KindOf(err) != errs.Conflict || !strings.Contains(err.Error(), fmt.Sprintf("held by pid %d (baton progress add-session with a long name", os.Getpid())) {
		t.Fatalf("timed out waiting: %v, want a Conflict naming the holder", err)
	}
	release, ok, err := lockWait(ctx, s.lockPath())
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	defer release()
	err = s.Update(ctx, func(*Tx) error { return nil })
	if errs.KindOf(err) != errs.Conflict || !strings.Contains(err.Error(), "held by another process") {
		t.Fatalf("held by a holder that names no one: %v, want 'held by another process'", err)
	}
}
