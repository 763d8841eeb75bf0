//go:build linux

package store

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// inodes are the inode numbers of every file and directory under dir.
func inodes(t *testing.T, dir string) map[uint64]string {
	t.Helper()
	out := map[uint64]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[fi.Sys().(*syscall.Stat_t).Ino] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Once a file has been written, the transactions that change it create no
// file: the file is patched, its backup and recorded copy rewritten in
// place, the journal written into the last one's file and the stamps
// exchanged with their spare. (Each creation costs the file system a new
// inode, which ext4 finds by scanning past every recently deleted one.)
func TestSteadyWritesCreateNoFile(t *testing.T) {
	s := New(t.TempDir())
	s.Create = true
	// big.json is hashed in blocks; .baton/idx is a file the log does not
	// hash (as the reviews index), large enough to be mapped
	s.Tracked = []string{"a.json", ".baton/b.json", "big.json"}
	pad := map[string][]byte{"big.json": bytes.Repeat([]byte(" "), 600<<10), ".baton/idx": bytes.Repeat([]byte(" "), 100<<10)}
	write := func(i int) {
		t.Helper()
		if err := s.Update(context.Background(), func(tx *Tx) error {
			for _, n := range append(slices.Clone(s.Tracked), ".baton/idx") {
				old, _, _, err := tx.ReadTrusted(n)
				if err != nil {
					return err
				}
				if old == nil {
					old = pad[n]
				}
				rec := fmt.Sprintf("{\"n\": %d}\n", i)
				tx.WriteSegments(n, [][]byte{old, []byte(rec)}, []byte(fmt.Sprintf(`{"count":%d}`, i)))
			}
			tx.Log(Event{Type: "task"})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		write(i)
	}
	known := inodes(t, s.Dir)
	for i := 3; i < 10; i++ {
		write(i)
		for ino, p := range inodes(t, s.Dir) {
			if _, ok := known[ino]; !ok {
				t.Fatalf("write %d created %s", i, p)
			}
		}
	}
}
