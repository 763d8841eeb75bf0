package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding"
	"encoding/json"
	"os"
	"testing"
)

// stampTestWrite runs one transaction over f.json as a writer does: drift
// check, trusted read, content built from it with facts whose array's last
// record starts at the offset build returns.
func stampTestWrite(t *testing.T, s *Store, mid func(), build func(old []byte) ([][]byte, int64)) {
	t.Helper()
	if err := s.Update(context.Background(), func(tx *Tx) error {
		if d, err := tx.Drift(); err != nil || len(d) > 0 {
			t.Fatalf("drift before the write: %v %v", d, err)
		}
		mid()
		old, _, _, err := tx.ReadTrusted("f.json")
		if err != nil {
			return err
		}
		pieces, last := build(old)
		n := len(bytes.Join(pieces, nil))
		facts, _ := json.Marshal(map[string]any{"a": map[string]any{"count": 2, "last": []int64{last, int64(n)}, "span": []int{0, n}}})
		tx.WriteSegments("f.json", pieces, facts)
		tx.Log(Event{Type: "task"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func stampTestStore(t *testing.T) *Store {
	s := New(t.TempDir())
	s.Create = true
	s.Tracked = []string{"f.json"}
	return s
}

// An agent rewrites .baton/stamps.json (it has no secret) so that a stamp
// carries sha256 states of a history of its own; the next write must not
// resume hashing from them: the log then records the file's real content,
// and the agent's history written in front of it later is seen as drift.
// Both sizes: read whole (patched from memory) and mapped.
func TestForgedMidsAreNotTrusted(t *testing.T) {
	for _, pad := range []int{0, int(patchFrom)} {
		s := stampTestStore(t)
		honest := []byte("[\n{\"id\":1,\"who\":\"honest\",\"pad\":\"" + string(bytes.Repeat([]byte("x"), pad)) + "\"},\n")
		content := append(bytes.Clone(honest), "{\"id\":2}"...)
		last := int64(len(honest))
		write := func(build func(old []byte) ([][]byte, int64)) { stampTestWrite(t, s, func() {}, build) }
		write(func([]byte) ([][]byte, int64) { return [][]byte{content}, last })
		write(func(old []byte) ([][]byte, int64) { return [][]byte{old}, last }) // stamped with mids

		forged := bytes.Replace(honest, []byte("honest"), []byte("EVIL!!"), 1)
		h := sha256.New()
		h.Write(forged)
		state, _ := h.(encoding.BinaryMarshaler).MarshalBinary()
		sf, ok := s.loadStamps()
		st := sf.Files["f.json"]
		if !ok || len(st.Mids) == 0 {
			t.Fatalf("pad %d: no stamp with mids to forge: %+v", pad, sf)
		}
		for i := range st.Mids {
			st.Mids[i].State = state
		}
		sf.Files["f.json"] = st
		s.writeStamps(sf.Event, sf.Files) // resealed, as an agent can

		write(func(old []byte) ([][]byte, int64) {
			return [][]byte{old, []byte(",\n{\"id\":3}")}, int64(len(old)) + 2
		})
		now, _ := os.ReadFile(s.Path("f.json"))
		if d, _, err := s.CheckDrift(false); err != nil || len(d) > 0 {
			t.Fatalf("pad %d: the log does not record the file baton wrote: %v %v", pad, d, err)
		}
		edited := append(bytes.Clone(forged), now[last:]...)
		if err := os.WriteFile(s.Path("f.json"), edited, 0o644); err != nil {
			t.Fatal(err)
		}
		if d, _, err := s.CheckDrift(false); err != nil || len(d) != 1 {
			t.Fatalf("pad %d: the agent's history was absorbed into the log (drift %v, %v)", pad, d, err)
		}
	}
}

// Facts and mids are used only when the head of the log records the
// stamp's digest: stamps that are stale, lost or rewritten vouch for
// nothing a writer takes (it reads and validates in full).
func TestVerifiedStampNeedsTheHeadsDigest(t *testing.T) {
	s := stampTestStore(t)
	c := []byte("[\n{\"id\":1},\n{\"id\":2}")
	for i := 0; i < 2; i++ {
		stampTestWrite(t, s, func() {}, func([]byte) ([][]byte, int64) { return [][]byte{c}, 11 })
	}
	if _, ok := s.verifiedStamp("f.json"); !ok {
		t.Fatal("the stamp baton wrote is not verified")
	}
	sf, _ := s.loadStamps()
	good := sf.Files["f.json"]
	for name, change := range map[string]func(st *stamp, event *string){
		"facts":  func(st *stamp, _ *string) { st.Facts = json.RawMessage(`{"a":{"count":9,"last":[1,2]}}`) },
		"mids":   func(st *stamp, _ *string) { st.Mids[0].At++ },
		"hash":   func(st *stamp, _ *string) { st.Hash = HashContent([]byte("x")) },
		"stale":  func(_ *stamp, e *string) { *e = HashContent([]byte("an older event")) },
		"noMids": func(st *stamp, _ *string) { st.Mids = nil },
	} {
		st, event := good, sf.Event
		st.Mids = append([]mid(nil), good.Mids...)
		change(&st, &event)
		s.writeStamps(event, map[string]stamp{"f.json": st})
		if _, ok := s.verifiedStamp("f.json"); ok {
			t.Errorf("%s: a rewritten stamp is verified", name)
		}
	}
	s.writeStamps(sf.Event, map[string]stamp{"f.json": good})
	if _, ok := s.verifiedStamp("f.json"); !ok {
		t.Fatal("the stamp written back is not verified")
	}
}

// A file the log does not hash (the reviews index) is still a base a
// transaction patches when its stamp's identity matches and the stamps are
// the last event's; its stamp lends no facts or hash states.
func TestUntrackedStampIsABaseOnly(t *testing.T) {
	s := stampTestStore(t)
	for i := 0; i < 3; i++ {
		if err := s.Update(context.Background(), func(tx *Tx) error {
			if _, err := tx.Drift(); err != nil {
				return err
			}
			old, facts, ok, err := tx.ReadTrusted(".baton/idx")
			if err != nil {
				return err
			}
			if i > 0 && (!ok || facts != nil) {
				t.Errorf("write %d: the index's stamp: trusted %v, facts %s", i, ok, facts)
			}
			if i > 0 && tx.bases[".baton/idx"] == nil {
				t.Errorf("write %d: the index is not a base to patch", i)
			}
			tx.WriteSegments(".baton/idx", [][]byte{old, []byte("x")}, []byte(`{"forged":1}`))
			tx.Write("f.json", []byte("[]"))
			tx.Log(Event{Type: "task"})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// A file over 1 MiB is taken by the drift check on its stamp's identity,
// which an agent can rewrite with an edit of the file. The next write must
// not hash the edit into the log as baton's: the bytes it takes from the
// file are checked against the log's hash (from the saved state it resumes
// from), and the write is refused.
func TestForgedIdentityEditIsNotAbsorbed(t *testing.T) {
	s := stampTestStore(t)
	first := []byte("[\n{\"id\":1,\"pad\":\"" + string(bytes.Repeat([]byte("x"), copyLimit)) + "\"},\n")
	content := append(bytes.Clone(first), "{\"id\":2,\"who\":\"honest\"}"...)
	last := int64(len(first))
	write := func(build func(old []byte) ([][]byte, int64)) error {
		return s.Update(context.Background(), func(tx *Tx) error {
			if _, err := tx.Drift(); err != nil {
				return err
			}
			old, _, _, err := tx.ReadTrusted("f.json")
			if err != nil {
				return err
			}
			pieces, l := build(old)
			n := len(bytes.Join(pieces, nil))
			facts, _ := json.Marshal(map[string]any{"a": map[string]any{"count": 2, "last": []int64{l, int64(n)}, "span": []int{0, n}}})
			tx.WriteSegments("f.json", pieces, facts)
			tx.Log(Event{Type: "task"})
			return nil
		})
	}
	for i := 0; i < 2; i++ {
		if err := write(func([]byte) ([][]byte, int64) { return [][]byte{content}, last }); err != nil {
			t.Fatal(err)
		}
	}
	edited := bytes.Replace(content, []byte("honest"), []byte("EVIL!!"), 1)
	if err := os.WriteFile(s.Path("f.json"), edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.PointStamp("f.json"); err != nil { // the identity forged, resealed
		t.Fatal(err)
	}
	before, _, _ := s.lastEvent()
	err := write(func(old []byte) ([][]byte, int64) {
		return [][]byte{old, []byte(",\n{\"id\":3}")}, int64(len(old)) + 2
	})
	if err == nil {
		t.Fatal("the write went ahead on a file that does not hold what the log recorded")
	}
	if after, _, _ := s.lastEvent(); after.Hash != before.Hash {
		t.Fatal("the refused write logged an entry")
	}
	if d, _, _ := s.CheckDrift(false); len(d) != 1 {
		t.Fatalf("verify does not see the edit: %v", d)
	}
}
