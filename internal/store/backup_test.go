package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
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

// A patched file's backup record keeps the patch's place and length, not
// its bytes (the next commit takes them from the version the patch made),
// and the backup is moved on by it, one version behind. A record of an
// earlier version, which holds the bytes, still moves it on; one whose
// length does not fit the file is not applied (the backup is copied).
func TestBackupRecordHoldsNoPatchData(t *testing.T) {
	ps := newPatchState(t)
	bp := ps.s.BackupPath("f.json")
	for i := 1; i < 12; i++ {
		prev := ps.content
		switch i {
		case 6: // as an earlier version recorded it: with the bytes
			rec, ok := ps.s.readBackupRecord("f.json")
			if !ok || rec.Len == 0 {
				t.Fatal("no record of the last patch")
			}
			rec.Patch.Data, rec.Len = ps.content[rec.Patch.Off:rec.Patch.Off+rec.Len], 0
			ps.s.recordBackup("f.json", rec)
		case 9: // a length past the file's end
			rec, _ := ps.s.readBackupRecord("f.json")
			rec.Len = int64(len(ps.content))
			ps.s.recordBackup("f.json", rec)
		}
		ps.count++
		rec := []byte(fmt.Sprintf("{\"id\":%d,\"pad\":%q}", i, strings.Repeat("x", 200)))
		ps.commit(func(d []byte) [][]byte { return [][]byte{d, []byte(",\n"), rec} }, int64(len(ps.content))+2)
		if b, _ := os.ReadFile(bp); !bytes.Equal(b, prev) {
			t.Fatalf("commit %d: the backup is not the version before:\n%s\nwant\n%s", i, b, prev)
		}
		raw, _ := os.ReadFile(ps.s.backupRecordPath("f.json"))
		if r, ok := ps.s.readBackupRecord("f.json"); !ok || r.Patch.Data != nil || r.Len == 0 || bytes.Contains(raw, []byte(`"data":"`)) {
			t.Fatalf("commit %d: the record holds the patch's bytes or no length: %s", i, raw)
		}
	}
}

// withData takes a patch's bytes from the version it made only when they
// lie within it and the version is the patch's size.
func TestBackupRecordWithData(t *testing.T) {
	now := []byte("0123456789")
	for _, c := range []struct {
		name      string
		rec       backupRecord
		ok        bool
		wantBytes string
	}{
		{"bytes taken", backupRecord{Patch: patchEntry{Off: 4, Size: 10}, Len: 6}, true, "456789"},
		{"recorded bytes kept", backupRecord{Patch: patchEntry{Off: 4, Size: 10, Data: []byte("abcdef")}}, true, "abcdef"},
		{"no bytes, a cut", backupRecord{Patch: patchEntry{Off: 10, Size: 10}}, true, ""},
		{"past the end", backupRecord{Patch: patchEntry{Off: 4, Size: 10}, Len: 7}, false, ""},
		{"another size", backupRecord{Patch: patchEntry{Off: 4, Size: 12}, Len: 2}, false, ""},
		{"negative offset", backupRecord{Patch: patchEntry{Off: -1, Size: 10}, Len: 2}, false, ""},
		{"negative length", backupRecord{Patch: patchEntry{Off: 4, Size: 10}, Len: -2}, false, ""},
		{"bytes and a length", backupRecord{Patch: patchEntry{Off: 4, Size: 10, Data: []byte("ab")}, Len: 2}, false, ""},
	} {
		rec := c.rec
		if ok := rec.withData(now); ok != c.ok || (ok && string(rec.Patch.Data) != c.wantBytes) {
			t.Errorf("%s: withData = %v, data %q; want %v, %q", c.name, ok, rec.Patch.Data, c.ok, c.wantBytes)
		}
	}
}
