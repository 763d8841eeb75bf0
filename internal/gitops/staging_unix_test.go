//go:build unix

package gitops

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestPlaceFileAcrossFileSystems: when the temp directory is on another
// file system than the destination (refs/ mounted apart), the file is
// staged beside the destination instead, under a dot-name, and placed
// whole by rename and by link alike, leaving no temp behind.
func TestPlaceFileAcrossFileSystems(t *testing.T) {
	other, err := os.MkdirTemp("/dev/shm", "baton-test-")
	if err != nil {
		t.Skip("no /dev/shm:", err)
	}
	defer os.RemoveAll(other)
	dir := t.TempDir()
	if sameDevice(t, other, dir) {
		t.Skip("/dev/shm and the temp directory are one file system")
	}
	for name, place := range map[string]func(string, string) error{"renamed": os.Rename, "linked": os.Link} {
		dest := filepath.Join(dir, name)
		if err := placeFile(other, dest, []byte("content\n"), true, place); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b, err := os.ReadFile(dest); err != nil || string(b) != "content\n" {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
	for _, d := range []string{other, dir} {
		left, _ := filepath.Glob(filepath.Join(d, tempPrefix+"*"))
		if len(left) > 0 {
			t.Errorf("temps left: %v", left)
		}
	}
}

// sameDevice says whether a and b are on one file system.
func sameDevice(t *testing.T, a, b string) bool {
	var sa, sb syscall.Stat_t
	if syscall.Stat(a, &sa) != nil || syscall.Stat(b, &sb) != nil {
		t.Skip("cannot stat", a, b)
	}
	return sa.Dev == sb.Dev
}
