//go:build unix

package store

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// lockFree says whether the state lock of s is free (another open of the
// lock file conflicts with the holder's, even in one process).
func lockFree(t *testing.T, s *Store) bool {
	t.Helper()
	if err := os.MkdirAll(s.BatonDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(s.lockPath(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true
}

// A transaction finds where its anchors are before it takes the lock
// (the user database, the links to the state directory: nothing another
// writer changes), and uses them to write its head.
func TestAnchorsResolvedBeforeLock(t *testing.T) {
	s := New(t.TempDir())
	s.Create = true
	s.Tracked = []string{"small.json"}
	anchor := filepath.Join(t.TempDir(), "anchor.json")
	calls, held := 0, false
	s.ResolveAnchors = func() ([]string, []string) {
		calls++
		held = !lockFree(t, s)
		return []string{anchor}, nil
	}
	if err := s.Update(context.Background(), func(tx *Tx) error {
		tx.Write("small.json", []byte("{\"a\": 1}\n"))
		tx.Log(Event{Type: "task"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || held {
		t.Errorf("anchors resolved %d times, under the lock: %v; want once, before it", calls, held)
	}
	if b, err := os.ReadFile(anchor); err != nil || len(b) == 0 {
		t.Errorf("the anchor resolved was not written: %v", err)
	}
}

// The temps a transaction removes are listed before it takes the lock; one
// a killed writer leaves after that listing stays until the next
// transaction, which removes it.
func TestStaleTempsListedBeforeLock(t *testing.T) {
	s, _ := newBig(t)
	early := filepath.Join(s.Dir, ".small.json.1.baton-tx")
	late := filepath.Join(s.Dir, ".small.json.2.baton-tx")
	if err := os.WriteFile(early, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	driftOnly(t, s, func(*Tx) {
		if err := os.WriteFile(late, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	if _, err := os.Lstat(early); err == nil {
		t.Errorf("%s, left before the transaction, was not removed", early)
	}
	if _, err := os.Lstat(late); err != nil {
		t.Fatalf("%s, left during the transaction, is gone already: %v", late, err)
	}
	driftOnly(t, s, nil)
	if _, err := os.Lstat(late); err == nil {
		t.Errorf("%s was not removed by the next transaction", late)
	}
}
