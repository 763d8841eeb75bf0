//go:build unix

package store

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A store that keeps what it maps (a one-shot process) leaves the mapping
// readable after its release, and still releases the apply lock.
func TestKeepMappedReleasesTheLockOnly(t *testing.T) {
	s := New(t.TempDir())
	if err := os.MkdirAll(s.BatonDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	content := []byte(`{"sessions": []}`)
	if err := os.WriteFile(s.Path("progress.json"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	s.KeepMapped = true
	data, _, release, err := s.MapFile("progress.json")
	if err != nil || string(data) != string(content) {
		t.Fatalf("MapFile: %q, %v", data, err)
	}
	release()
	if string(data) != string(content) { // unmapped, this read would fault
		t.Errorf("after the release: %q", data)
	}
	f, err := os.Open(filepath.Join(s.BatonDir(), applyLockName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Errorf("the apply lock after the release: %v (still held)", err)
	}
}

// A transaction of a store that keeps what it maps leaves the bases it
// mapped to the exit; any other store's unmaps them.
func TestKeepMappedKeepsBases(t *testing.T) {
	for _, keep := range []bool{true, false} {
		s := New(t.TempDir())
		s.KeepMapped = keep
		released := false
		tx := &Tx{s: s}
		tx.keepBase("progress.json", &base{release: func() { released = true }})
		tx.releaseBases()
		if released == keep {
			t.Errorf("KeepMapped %v: base released %v", keep, released)
		}
		if tx.bases != nil {
			t.Errorf("KeepMapped %v: the transaction still names its bases", keep)
		}
	}
}
