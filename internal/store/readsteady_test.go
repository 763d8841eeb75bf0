package store

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/baton-cli/baton/internal/errs"
)

// TestReadSteadyRefusesTornReads: without the apply lock, a file that is
// patched during every read is refused (exit 5) once the wait is over,
// never returned as bytes a patch may have torn; a file patched during
// some reads is read once it holds still.
func TestReadSteadyRefusesTornReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.json")
	if err := os.WriteFile(path, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration, st func(string) (os.FileInfo, error)) { steadyFor, steadyStat = d, st }(steadyFor, steadyStat)
	steadyFor = 50 * time.Millisecond
	patches := 0
	patchUntil := 1 << 30
	steadyStat = func(p string) (os.FileInfo, error) {
		fi, err := os.Stat(p)
		if patches < patchUntil { // a patch lands after every look
			patches++
			if err := os.Truncate(p, int64(7+patches%2)); err != nil {
				t.Fatal(err)
			}
		}
		return fi, err
	}
	if _, _, err := readSteady(path); errs.KindOf(err) != errs.Conflict {
		t.Fatalf("a file patched during every read: got %v, want a conflict", err)
	}

	if err := os.WriteFile(path, []byte(`{"a":2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	patches, patchUntil = 0, 30
	data, fi, err := readSteady(path)
	if err != nil || string(data) != `{"a":2}` || fi == nil || patches != patchUntil {
		t.Fatalf("a file that holds still after %d patches: %q %v %v (%d patches)", patchUntil, data, fi, err, patches)
	}
}
