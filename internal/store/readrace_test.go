package store

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
)

// A reader that finds a committed journal reads the staged file it names;
// when the writer renames that file over the state file in between, the
// reader reads the state file, which now holds the same content: a reader
// never finds a state file missing while writers replace it.
func TestReaderNeverFindsFileMissing(t *testing.T) {
	s := New(t.TempDir())
	if err := os.MkdirAll(s.BatonDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Path("feature_list.json"), []byte(`{"n":0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer done.Store(true)
		for i := 1; i <= 200; i++ {
			err := s.Update(context.Background(), func(tx *Tx) error {
				tx.Write("feature_list.json", []byte(fmt.Sprintf(`{"n":%d}`, i)))
				return nil
			})
			if err != nil {
				t.Error(err)
				return
			}
		}
	}()
	missing := 0
	for !done.Load() {
		data, err := s.readCommitted("feature_list.json")
		if err != nil {
			t.Fatal(err)
		}
		if data == nil {
			missing++
		}
	}
	wg.Wait()
	if missing > 0 {
		t.Fatalf("a reader found the file missing %d times while it was replaced", missing)
	}
}
