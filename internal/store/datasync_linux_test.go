package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The syncs succeed on a file and report the system's refusal (a pipe
// cannot be synced) as an error naming the call and the file, whether the
// process runs on one processor (the call keeps it) or on more.
func TestSyncCalls(t *testing.T) {
	defer rawSyncs.Store(rawSyncs.Load())
	for _, procs := range []int{1, 2} {
		rawSyncs.Store(procs == 1) // a one-shot write on one processor, or any other process
		f, err := os.Create(filepath.Join(t.TempDir(), "f"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("content"); err != nil {
			t.Fatal(err)
		}
		if err := syncFile(f); err != nil {
			t.Errorf("%d processors: syncFile: %v", procs, err)
		}
		if err := datasync(f); err != nil {
			t.Errorf("%d processors: datasync: %v", procs, err)
		}
		f.Close()
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		var pe *fs.PathError
		if err := datasync(r); !errors.As(err, &pe) || pe.Op != "fdatasync" || !errors.Is(err, syscall.EINVAL) {
			t.Errorf("%d processors: datasync of a pipe: %v", procs, err)
		}
		if err := syncFile(w); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("%d processors: syncFile of a pipe: %v", procs, err)
		}
		r.Close()
		w.Close()
	}
}
