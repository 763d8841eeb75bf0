package store

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/json"
	"os"
	"testing"
)

// TestOwnEntryCannotVouchForForgedMids: an agent appends an entry of its own
// session (MACed with its own key) that changes no file's hash but records
// the digest of a stamp whose saved sha256 states are those of a history of
// its own, and reseals the stamps with it. The next write must not resume
// from those states: if it did, the log would record the hash of the
// agent's history with the new tail, and the agent's history written into
// the file would show no drift.
func TestOwnEntryCannotVouchForForgedMids(t *testing.T) {
	s := stampTestStore(t)
	honest := []byte("[\n{\"id\":1,\"who\":\"honest\"},\n")
	content := append(bytes.Clone(honest), "{\"id\":2}"...)
	last := int64(len(honest))
	write := func(build func(old []byte) ([][]byte, int64)) { stampTestWrite(t, s, func() {}, build) }
	write(func([]byte) ([][]byte, int64) { return [][]byte{content}, last })
	write(func(old []byte) ([][]byte, int64) { return [][]byte{old}, last })

	forged := bytes.Replace(honest, []byte("honest"), []byte("EVIL!!"), 1)
	h := sha256.New()
	h.Write(forged)
	state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	sf, _ := s.loadStamps()
	st := sf.Files["f.json"]
	if len(st.Mids) == 0 {
		t.Fatal("the stamp saved no sha256 state: nothing to forge")
	}
	for i := range st.Mids {
		st.Mids[i].State = state
	}
	head, _, err := s.lastEvent()
	if err != nil || head == nil {
		t.Fatalf("the log's head: %v", err)
	}
	e := *head
	e.Seq++
	e.EventID = "E999999"
	e.PrevHash = head.Hash
	e.Type = "note"
	e.Metadata.Stamps = map[string]string{"f.json": stampDigest(st)}
	e.Auth = "session:7"
	e.Hash = ChainHash(e)
	e.MAC = EventMAC([]byte("the agent's own session key"), e.Hash)
	line, _ := json.Marshal(e)
	f, err := os.OpenFile(s.EventsPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(append(line, '\n'))
	f.Close()
	sf.Files["f.json"] = st
	s.writeStamps(e.Hash, sf.Files)
	if _, ok := s.verifiedStamp("f.json"); !ok {
		t.Fatal("the forged stamp is not even taken as the head's: the test no longer reaches the patch")
	}

	write(func(old []byte) ([][]byte, int64) {
		return [][]byte{old, []byte(",\n{\"id\":3}")}, int64(len(old)) + 2
	})
	now, err := os.ReadFile(s.Path("f.json"))
	if err != nil {
		t.Fatal(err)
	}
	if d, _, _ := s.CheckDrift(false); len(d) != 0 {
		t.Fatalf("right after baton's own write: %d drift(s)", len(d))
	}
	edited := append(bytes.Clone(forged), now[last:]...)
	if err := os.WriteFile(s.Path("f.json"), edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if d, _, _ := s.CheckDrift(false); len(d) == 0 {
		t.Fatal("the agent's history written into the file shows no drift: the log recorded it as baton's")
	}
}
