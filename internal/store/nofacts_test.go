package store

import (
	"context"
	"os"
	"syscall"
	"testing"
)

// TestStampWithoutFactsIsPatched: a small file baton wrote without facts
// (the open sessions, the config) is patched in place by the next write,
// like any file its stamp vouches for, not replaced by a new file (a file
// created per write cost the most CPU under the lock).
func TestStampWithoutFactsIsPatched(t *testing.T) {
	s := New(t.TempDir())
	s.Create = true
	s.Tracked = []string{"open.json"}
	write := func(content string) {
		t.Helper()
		if err := s.Update(context.Background(), func(tx *Tx) error {
			if _, err := tx.Drift(); err != nil {
				return err
			}
			if _, _, _, err := tx.ReadTrusted("open.json"); err != nil {
				return err
			}
			tx.Write("open.json", []byte(content))
			tx.Log(Event{Type: "task"})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	inode := func() uint64 {
		t.Helper()
		fi, err := os.Stat(s.Path("open.json"))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	write("{\"sessions\": [1]}\n")
	write("{\"sessions\": [1, 2]}\n")
	first := inode()
	write("{\"sessions\": [1, 2, 3]}\n")
	if got := inode(); got != first {
		t.Fatalf("open.json was replaced (inode %d → %d), not patched in place", first, got)
	}
	if b, _ := os.ReadFile(s.Path("open.json")); string(b) != "{\"sessions\": [1, 2, 3]}\n" {
		t.Fatalf("open.json holds %q", b)
	}
	if d, _, _ := s.CheckDrift(false); len(d) != 0 {
		t.Fatalf("drift after the patches: %v", d)
	}
}
