package store

import (
	"bytes"
	"os"
	"testing"
)

// An edit landing between the drift check's read and the transaction's
// own read (a window that includes the git subprocess) must not be taken
// as the file's content and written back as baton's: the transaction uses
// the bytes the drift check hashed, and the edit is left for the next
// drift check to find.
func TestEditBetweenDriftAndRead(t *testing.T) {
	s := stampTestStore(t)
	first := []byte("[\n{\"who\":\"honest\"}")
	keep := func(old []byte) ([][]byte, int64) { return [][]byte{old}, 2 }
	stampTestWrite(t, s, func() {}, func([]byte) ([][]byte, int64) { return [][]byte{first}, 2 })
	stampTestWrite(t, s, func() {}, keep)
	evil := []byte("[\n{\"who\":\"EVIL!!\"}")
	stampTestWrite(t, s, func() {
		if err := os.WriteFile(s.Path("f.json"), evil, 0o644); err != nil {
			t.Fatal(err)
		}
	}, func(old []byte) ([][]byte, int64) {
		if bytes.Contains(old, []byte("EVIL")) {
			t.Errorf("the transaction read the edit made after its drift check: %s", old)
		}
		return [][]byte{old, []byte(",{}")}, 2
	})
	ev, _, _ := s.lastEvent()
	if ev.Metadata.Files["f.json"] == HashContent(append(bytes.Clone(evil), ",{}"...)) {
		t.Fatal("the log records the edit as baton's content")
	}
}
