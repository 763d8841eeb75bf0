package store

import (
	"bytes"
	"encoding/json"
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

// The stamps alternate between two files rewritten in place: a rewrite of
// the same size within one tick of a coarse clock keeps the identity, so a
// parse kept by identity could be stale. The parse is kept with its bytes,
// and a stale one is never returned, whatever identity it was kept under.
func TestParsedStampsFollowTheBytes(t *testing.T) {
	s := stampTestStore(t)
	stampTestWrite(t, s, func() {}, func([]byte) ([][]byte, int64) { return [][]byte{[]byte("[\n{\"id\":1}")}, 2 })
	old, _ := os.ReadFile(s.stampsPath())
	sf, ok := s.loadStamps()
	if !ok {
		t.Fatal("no stamps")
	}
	stale := stampsParsed{raw: old, sf: sf}
	st := sf.Files["f.json"]
	st.Hash = HashContent([]byte("another version")) // the same size
	files, _ := json.Marshal(map[string]stamp{"f.json": st})
	b, _ := json.Marshal(stampsRaw{Event: sf.Event, Seal: sealOf(sf.Event, files), Files: files})
	if err := overwrite(s.stampsPath(), b); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(s.stampsPath())
	s.parsed.put(s.stampsPath(), identity(fi), stale) // as if parsed under this identity
	if got, _ := s.loadStamps(); got.Files["f.json"].Hash != st.Hash {
		t.Fatal("a stale parse of the stamps was returned")
	}
	if got, _ := s.stampOf("f.json"); got.Hash == sf.Files["f.json"].Hash {
		t.Fatal("a reader took a stale parse of the stamps")
	}
}
