//go:build linux

package store

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
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
	s.Tracked = []string{"a.json", ".baton/b.json"}
	write := func(i int) {
		t.Helper()
		if err := s.Update(context.Background(), func(tx *Tx) error {
			for _, n := range s.Tracked {
				old, _, _, err := tx.ReadTrusted(n)
				if err != nil {
					return err
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
