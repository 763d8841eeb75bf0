package store

import (
	"bytes"
	"os"
	"testing"
)

// A small file's backup is exchanged whole with a spare and its hash
// recorded beside it: the version before the last change, known intact; one
// torn afterwards (a power loss: nothing is synced) is known not to be.
func TestSmallBackupIsRecorded(t *testing.T) {
	s := stampTestStore(t)
	var versions [][]byte
	for i := 0; i < 4; i++ {
		stampTestWrite(t, s, func() {}, func(old []byte) ([][]byte, int64) {
			if old == nil {
				old = []byte("[\n{\"id\":0}")
			}
			return [][]byte{old, []byte(",\n{\"id\":1}")}, int64(len(old)) + 2
		})
		b, _ := os.ReadFile(s.Path("f.json"))
		versions = append(versions, b)
	}
	backup, err := os.ReadFile(s.BackupPath("f.json"))
	if err != nil || !bytes.Equal(backup, versions[len(versions)-2]) {
		t.Fatalf("the backup is not the version before the last change: %q (%v)", backup, err)
	}
	if !s.BackupIntact("f.json") {
		t.Fatal("the backup baton kept is not known intact")
	}
	if err := os.WriteFile(s.BackupPath("f.json"), backup[:len(backup)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if s.BackupIntact("f.json") {
		t.Fatal("a torn backup is taken as intact")
	}
	os.Remove(s.backupRecordPath("f.json"))
	if s.BackupIntact("f.json") {
		t.Fatal("a backup without its record is taken as intact")
	}
}
