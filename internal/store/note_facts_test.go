package store

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// A reader's note is no secret, and the facts it carries are what the fast
// readers read by: a file of up to 1 MiB that hashes to the log's record is
// trusted, but a note's facts for it are not taken (the readers scan the
// bytes instead).
func TestNoteFactsOfASmallFileAreNotTaken(t *testing.T) {
	s := stampTestStore(t)
	content := []byte("[\n{\"id\":1},\n{\"id\":2}\n]\n")
	stampTestWrite(t, s, func() {}, func([]byte) ([][]byte, int64) { return [][]byte{content}, 12 })
	if err := os.Remove(s.stampsPath()); err != nil { // stamps are a cache: lost, they cost a full read
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Path("f.json"))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(s.Path("f.json"))
	if !bytes.Equal(data, content) {
		t.Fatal("setup")
	}
	forged := json.RawMessage(`{"a":{"count":0,"last":[0,0],"span":[2,3]}}`)
	// what Remember writes, without its size floor: an agent writes the note directly
	b, _ := json.Marshal(map[string]stamp{s.key("f.json"): {ID: identity(fi), Facts: forged}})
	if err := os.WriteFile(s.validatedPath(), sealedNote(b), 0o644); err != nil {
		t.Fatal(err)
	}
	facts, ok := s.Trusted("f.json", fi, data)
	if ok && string(facts) == string(forged) {
		t.Fatalf("a note nobody vouches for gives a reader its facts for a %d-byte file: %s", len(data), facts)
	}
}
