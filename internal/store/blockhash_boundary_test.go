package store

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"testing"
)

// A base the drift check did not hash (checked false), whose length is a
// whole number of blocks, with a forged saved state at its end: an append
// resumes from that state, and checkBase checks no block, so the log would
// record a hash of content baton did not write.
func TestForgedMidAtBlockBoundaryEnd(t *testing.T) {
	blen := int64(4 * blockSize)
	data := bytes.Repeat([]byte("x"), int(blen))
	h, sums := contentHash(data)
	evil := sha256.New()
	evil.Write([]byte("EVIL history of the forger's"))
	state, _ := evil.(encoding.BinaryMarshaler).MarshalBinary()
	b := &base{data: data, hash: h, sums: sumsOf(h, blen, blocksJSON(sums)), mids: []mid{{At: blen, State: state}}}
	if b.sums == nil {
		t.Fatal("no sums")
	}
	tail := []byte(",{\"id\":9}")
	pieces := [][]byte{data, tail}
	p, q, size := changed(data, pieces)
	got, read, ok := patchedHash(b, p, q, size, pieces, nil)
	if !ok {
		t.Fatal("not patched")
	}
	tx := &Tx{s: New(t.TempDir())}
	err := tx.checkBase("f.json", b, read)
	want := HashContent(append(append([]byte(nil), data...), tail...))
	if err == nil && got.hash != want {
		t.Fatalf("forged state at the base's end was used unchecked: recorded %s, content hashes to %s (blocks read: %v)", got.hash, want, read.blocks)
	}
}
