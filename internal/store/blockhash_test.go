package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// bigRecords is a JSON array of n records of about 1 KiB each, the first
// of which is followed by a gap of blank lines to take new records in the
// middle (as reviews.json keeps one after its reviews); last is where the
// last record starts.
func bigRecords(n, gap int) (content []byte, gapAt, last int64) {
	var b bytes.Buffer
	b.WriteString("[\n{\"id\":0}")
	gapAt = int64(b.Len())
	b.WriteString(strings.Repeat("\n", gap))
	for i := 1; i < n; i++ {
		b.WriteString(",\n")
		if i == n-1 {
			last = int64(b.Len())
		}
		b.WriteString(`{"id":1,"pad":"` + strings.Repeat("y", 1000) + `"}`)
	}
	b.WriteString("\n]\n")
	return b.Bytes(), gapAt, last
}

// insertAt is build for stampTestWrite: rec written at at over the blank
// lines after it, the size kept.
func insertAt(at int64, rec string, last int64) func(old []byte) ([][]byte, int64) {
	return func(old []byte) ([][]byte, int64) {
		return [][]byte{old[:at], []byte(rec), old[at+int64(len(rec)):]}, last
	}
}

// A long file written into the middle is patched, and its event records
// the content hash of the whole new content, computed from the blocks the
// change touched and the sums of the others; the stamp keeps the sums.
func TestBlocksPatchedInTheMiddle(t *testing.T) {
	s := stampTestStore(t)
	content, gapAt, last := bigRecords(1600, 4096)
	write := func(build func(old []byte) ([][]byte, int64)) { stampTestWrite(t, s, func() {}, build) }
	write(func([]byte) ([][]byte, int64) { return [][]byte{content}, last })
	write(func(old []byte) ([][]byte, int64) { return [][]byte{old}, last }) // stamped with sums
	at := gapAt
	for i := range 5 {
		rec := ",{\"id\":\"new" + string(rune('a'+i)) + "\"}"
		write(insertAt(at, rec, last))
		at += int64(len(rec))
		now, _ := os.ReadFile(s.Path("f.json"))
		head, _, _ := s.lastEvent()
		if got := head.Metadata.Files["f.json"]; got != HashContent(now) || !strings.HasPrefix(got, blocksPrefix) {
			t.Fatalf("write %d: the log records %s, the file hashes to %s", i, got, HashContent(now))
		}
		st, ok := s.verifiedStamp("f.json")
		if sums := sumsOf(st.Hash, int64(len(now)), st.Blocks); !ok || int64(len(sums)) != blockCount(int64(len(now)))*sumLen {
			t.Fatalf("write %d: the stamp keeps no sums of the blocks (%d bytes, vouched %v)", i, len(sums), ok)
		}
		if d, _, _ := s.CheckDrift(false); len(d) != 0 {
			t.Fatalf("write %d: verify finds drift after baton's own write: %+v", i, d)
		}
	}
}

// An edit made outside baton in a block a write does not touch is not
// taken into the log's record (the block keeps its sum): verify reports
// it. An edit in the block the write reads, with the stamps rewritten to
// the edited file's identity, refuses the write.
func TestBlockEditsAreNotAbsorbed(t *testing.T) {
	for _, where := range []string{"far", "near"} {
		s := stampTestStore(t)
		content, gapAt, last := bigRecords(1600, 4096)
		write := func(build func(old []byte) ([][]byte, int64)) { stampTestWrite(t, s, func() {}, build) }
		write(func([]byte) ([][]byte, int64) { return [][]byte{content}, last })
		write(func(old []byte) ([][]byte, int64) { return [][]byte{old}, last })
		edited, _ := os.ReadFile(s.Path("f.json"))
		at := int64(len(edited)) - 2000 // a block the insertion leaves alone
		if where == "near" {
			at = gapAt - 3 // before the change, in its block
		}
		edited[at] = 'Z'
		if err := os.WriteFile(s.Path("f.json"), edited, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := s.PointStamp("f.json"); err != nil {
			t.Fatal(err)
		}

		err := s.Update(t.Context(), func(tx *Tx) error {
			old, _, _, err := tx.ReadTrusted("f.json")
			if err != nil {
				return err
			}
			pieces, _ := insertAt(gapAt, ",{\"id\":\"x\"}", last)(old)
			tx.WriteSegments("f.json", pieces, nil)
			tx.Log(Event{Type: "task"})
			return nil
		})
		if where == "near" {
			if err == nil || !strings.Contains(err.Error(), "changed outside baton") {
				t.Fatalf("an edit in the block the write reads: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if d, _, _ := s.CheckDrift(false); len(d) != 1 {
			t.Fatalf("an edit in a block the write left alone was absorbed into the log: drift %+v", d)
		}
	}
}

// A log an older baton wrote records a long file's plain sha256: the file
// as it was recorded is not taken for changed (by the drift check, verify
// or a reader), and the next write records the blocks' hash.
func TestOlderPlainHashOfLongFile(t *testing.T) {
	s := stampTestStore(t)
	content, _, last := bigRecords(1600, 0)
	stampTestWrite(t, s, func() {}, func([]byte) ([][]byte, int64) { return [][]byte{content}, last })
	stampTestWrite(t, s, func() {}, func(old []byte) ([][]byte, int64) { return [][]byte{old}, last })
	// the last entry as an older baton wrote it: the file's plain sha256
	plain := sha256.Sum256(content)
	head, _, _ := s.lastEvent()
	e := *head
	e.Metadata.Files = map[string]string{"f.json": hex.EncodeToString(plain[:])}
	e.Metadata.Stamps = nil
	e.Hash = ChainHash(e)
	log, _ := os.ReadFile(s.EventsPath())
	lines := bytes.SplitAfter(bytes.TrimSuffix(log, []byte("\n")), []byte("\n"))
	line, _ := json.Marshal(e)
	if err := os.WriteFile(s.EventsPath(), append(append(lines[0], line...), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	s.writeAnchor(&e)
	sf, _ := s.loadStamps()
	st := sf.Files["f.json"]
	st.Hash, st.Blocks, st.Mids = e.Metadata.Files["f.json"], nil, nil
	sf.Files["f.json"] = st
	s.writeStamps(e.Hash, sf.Files)

	for _, useStamps := range []bool{true, false} {
		if d, _, err := s.CheckDrift(useStamps); err != nil || len(d) != 0 {
			t.Fatalf("stamps %v: the recorded content is taken for changed: %+v %v", useStamps, d, err)
		}
	}
	fi, _ := os.Stat(s.Path("f.json"))
	if d, err := s.ReplacedRead("f.json", fi, content); err != nil || d != nil {
		t.Fatalf("a reader takes the recorded content for replaced: %+v %v", d, err)
	}
	stampTestWrite(t, s, func() {}, func(old []byte) ([][]byte, int64) {
		return [][]byte{old[:len(old)-3], []byte(",\n{\"id\":9}\n]\n")}, int64(len(old)) - 1
	})
	now, _ := os.ReadFile(s.Path("f.json"))
	head, _, _ = s.lastEvent()
	if head.Metadata.Files["f.json"] != HashContent(now) {
		t.Fatalf("the write after an older log records %s, the file hashes to %s", head.Metadata.Files["f.json"], HashContent(now))
	}
	if d, _, _ := s.CheckDrift(false); len(d) != 0 {
		t.Fatalf("drift after the write: %+v", d)
	}
}
