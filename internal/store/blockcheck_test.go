package store

import (
	"bytes"
	"context"
	"os"
	"testing"
)

// putBack replaces the file at path with a copy holding b (a new
// identity: a checkout or a restore).
func putBack(t *testing.T, path string, b []byte) os.FileInfo {
	t.Helper()
	if err := os.WriteFile(path+".copy", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".copy", path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// A copy of a long file put back under a new identity is checked block by
// block against the sums of the version the log's head vouches for: the
// blocks a read takes pass when they hold the recorded bytes and fail when
// they differ, whatever the other blocks hold; a copy of another size, a
// short file and a stamp the head does not vouch for give nothing to check.
func TestVouchedBlocks(t *testing.T) {
	s := stampTestStore(t)
	content, _, last := bigRecords(1600, 0)
	write := func(build func(old []byte) ([][]byte, int64)) { stampTestWrite(t, s, func() {}, build) }
	write(func([]byte) ([][]byte, int64) { return [][]byte{content}, last })
	write(func(old []byte) ([][]byte, int64) { return [][]byte{old}, last })
	path := s.Path("f.json")
	recorded, _ := os.ReadFile(path)
	if int64(len(recorded)) <= copyLimit {
		t.Fatalf("the test file has %d bytes, not more than %d", len(recorded), copyLimit)
	}
	at := func(block int64) [2]int64 { return [2]int64{block*blockSize + 10, block*blockSize + 20} }
	edited := func(block int64) []byte {
		b := append([]byte(nil), recorded...)
		b[block*blockSize+15] ^= 1
		return b
	}
	lastBlock := blockCount(int64(len(recorded))) - 1
	for _, c := range []struct {
		name   string
		data   []byte
		ranges [][2]int64
		want   bool
	}{
		{"the recorded bytes, every block", recorded, [][2]int64{{0, int64(len(recorded))}}, true},
		{"the recorded bytes, one range", recorded, [][2]int64{at(2)}, true},
		{"no range", recorded, nil, true},
		{"an edit in another block", edited(2), [][2]int64{at(0), at(lastBlock)}, true},
		{"an edit in the block read", edited(2), [][2]int64{at(0), at(2)}, false},
		{"an edit in the last block", edited(lastBlock), [][2]int64{at(lastBlock)}, false},
		{"an edit in the second block of a range across two", edited(3), [][2]int64{{3*blockSize - 5, 3*blockSize + 20}}, false},
		{"an edit in the third block of a range across three", edited(3), [][2]int64{{blockSize - 5, 3*blockSize + 20}}, false},
		{"an edit just past a range ending at a block's start", edited(3), [][2]int64{{3*blockSize - 5, 3 * blockSize}}, true},
		{"an edit just before a range starting at a block's start", edited(2), [][2]int64{{3 * blockSize, 3*blockSize + 5}}, true},
		{"a range past the end", recorded, [][2]int64{{int64(len(recorded)) - 1, int64(len(recorded)) + 1}}, false},
		{"a range turned over", recorded, [][2]int64{{20, 10}}, false},
	} {
		fi := putBack(t, path, c.data)
		if _, ok := s.Trusted("f.json", fi, c.data); ok {
			t.Fatalf("%s: a copy under a new identity is trusted whole", c.name)
		}
		b := s.VouchedBlocks("f.json", fi, c.data)
		if b == nil {
			t.Fatalf("%s: no vouched blocks for a copy of the recorded size", c.name)
		}
		if got := b.Check(c.data, c.ranges...); got != c.want {
			t.Errorf("%s: Check = %v, want %v", c.name, got, c.want)
		}
		if got := b.Check(c.data, c.ranges...); got != c.want {
			t.Errorf("%s: Check again = %v, want %v (a failed block is not taken as checked)", c.name, got, c.want)
		}
		if b.Check(c.data[:len(c.data)-1], at(0)) {
			t.Errorf("%s: Check passes bytes of another size", c.name)
		}
	}
	fi := putBack(t, path, recorded[:len(recorded)-1])
	if s.VouchedBlocks("f.json", fi, recorded[:len(recorded)-1]) != nil {
		t.Error("a copy of another size has vouched blocks")
	}
	fi = putBack(t, path, recorded)
	if s.VouchedBlocks("f.json", fi, recorded[:copyLimit]) != nil {
		t.Error("content of up to copyLimit bytes has vouched blocks (it is hashed whole)")
	}
	if s.VouchedBlocks("f.json", nil, recorded) != nil {
		t.Error("content read through a journal (no identity) has vouched blocks")
	}
	sf, _ := s.loadStamps()
	st := sf.Files["f.json"]
	st.Facts = []byte(`{"a":{"count":1,"last":[1,2],"span":[0,3]}}`)
	sf.Files["f.json"] = st
	s.writeStamps(sf.Event, sf.Files)
	if s.VouchedBlocks("f.json", fi, recorded) != nil {
		t.Error("a stamp whose facts the log's head does not vouch for has vouched blocks")
	}
}

// A write's drift check that finds a long file put back with the recorded
// bytes stamps that version with the facts the stamp of the same content
// had (derived when baton wrote it), not with its hash only: the readers
// after it can still read it by blocks.
func TestVouchedCopyKeepsItsFacts(t *testing.T) {
	s := stampTestStore(t)
	content, _, last := bigRecords(1600, 0)
	write := func(build func(old []byte) ([][]byte, int64)) { stampTestWrite(t, s, func() {}, build) }
	write(func([]byte) ([][]byte, int64) { return [][]byte{content}, last })
	write(func(old []byte) ([][]byte, int64) { return [][]byte{old}, last })
	before, _ := s.verifiedStamp("f.json")
	recorded, _ := os.ReadFile(s.Path("f.json"))
	putBack(t, s.Path("f.json"), recorded)
	if err := s.Update(context.Background(), func(tx *Tx) error {
		if d, err := tx.Drift(); err != nil || len(d) > 0 {
			t.Fatalf("drift: %v %v", d, err)
		}
		tx.Log(Event{Type: "task"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	after, ok := s.verifiedStamp("f.json")
	if !ok || after.HashOnly || !bytes.Equal(after.Facts, before.Facts) || after.ID == before.ID {
		t.Fatalf("the copy's stamp: vouched %v, hash only %v, facts %s (before %s)", ok, after.HashOnly, after.Facts, before.Facts)
	}
	fi := putBack(t, s.Path("f.json"), recorded)
	if b := s.VouchedBlocks("f.json", fi, recorded); b == nil || !b.Check(recorded, [2]int64{0, 10}) {
		t.Fatal("no blocks to check a copy of that version against")
	}
}
