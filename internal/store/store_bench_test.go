package store_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/baton-cli/baton/bench/gen"
	"github.com/baton-cli/baton/internal/store"
)

// large is the generated 10,000-session state, made once per test binary.
var large = sync.OnceValues(func() (*gen.State, error) { return gen.Generate(gen.Large, 1) })

// benchCommit commits data as progress.json in a fresh state directory on
// every iteration: lock, temp file, fsyncs, backup link, journal, rename.
// The directory is in the system temp dir, on the file system baton's state
// would usually share with the build.
func benchCommit(b *testing.B, data []byte) {
	s := store.New(b.TempDir())
	s.Create = true
	if err := os.WriteFile(s.Path("progress.json"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		err := s.Update(ctx, func(tx *store.Tx) error {
			if _, err := tx.Read("progress.json"); err != nil {
				return err
			}
			tx.Write("progress.json", data)
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCommit commits one file: the generated 10,000-session
// progress.json (several MB), and a small one for the fixed cost.
func BenchmarkCommit(b *testing.B) {
	st, err := large()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("large", func(b *testing.B) { benchCommit(b, st.Progress) })
	b.Run("1KB", func(b *testing.B) { benchCommit(b, st.Progress[:1024]) })
}

// BenchmarkUpdateNoWrite is a transaction that stages nothing: the lock
// and the journal check every write pays.
func BenchmarkUpdateNoWrite(b *testing.B) {
	s := store.New(b.TempDir())
	s.Create = true
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Update(ctx, func(*store.Tx) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadFile reads the large progress.json whole, as every read
// starts.
func BenchmarkReadFile(b *testing.B) {
	s := largeStore(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if data, err := s.ReadFile(ctx, "progress.json"); err != nil || len(data) == 0 {
			b.Fatal(err)
		}
	}
}

func largeStore(b *testing.B) *store.Store {
	st, err := large()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "progress.json"), st.Progress, 0o644); err != nil {
		b.Fatal(err)
	}
	return store.New(dir)
}
