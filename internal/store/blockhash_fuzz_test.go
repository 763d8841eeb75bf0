package store

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"fmt"
	"math/rand/v2"
	"testing"
)

func sharedPieces(base []byte, newc []byte, r *rand.Rand) [][]byte {
	// share base memory where equal at the same offset, to mimic WriteSegments
	var out [][]byte
	i := 0
	for i < len(newc) {
		j := i
		if i < len(base) && base[i] == newc[i] {
			for j < len(newc) && j < len(base) && base[j] == newc[j] {
				j++
			}
			out = append(out, base[i:j])
		} else {
			for j < len(newc) && !(j < len(base) && base[j] == newc[j]) {
				j++
			}
			out = append(out, append([]byte(nil), newc[i:j]...))
		}
		i = j
	}
	return out
}

// The hash patched from a base of every size around the block boundaries,
// under random edits that share the base's memory as WriteSegments does,
// equals the hash of the new content computed whole, block sums and saved
// states included.
func TestPatchedHashRandomEdits(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	B := int64(blockSize)
	sizes := []int64{0, 1, 100, B - 1, B, B + 1, 2*B - 1, 2 * B, 2*B + 1, 3*B + 7, 4 * B}
	for it := 0; it < 800; it++ {
		blen := sizes[r.IntN(len(sizes))]
		if r.IntN(3) == 0 {
			blen = r.Int64N(4*B + 10)
		}
		bdat := make([]byte, blen)
		for i := range bdat {
			bdat[i] = byte('a' + i%23)
		}
		// marks
		var marks []int64
		for range r.IntN(4) {
			if blen > 0 {
				marks = append(marks, r.Int64N(blen+1))
			}
		}
		for _, bnd := range []int64{B, 2 * B} {
			if r.IntN(4) == 0 && bnd <= blen {
				marks = append(marks, bnd)
			}
		}
		hb := hashContent([][]byte{bdat}, marks)
		bb := &base{data: bdat, hash: hb.hash, sums: sumsOf(hb.hash, blen, blocksJSON(hb.sums)), mids: hb.mids, checked: true}
		if bb.sums == nil {
			t.Fatalf("no sums for %d", blen)
		}
		// new content
		newc := append([]byte(nil), bdat...)
		switch r.IntN(5) {
		case 0: // truncate
			if blen > 0 {
				newc = newc[:r.Int64N(blen+1)]
			}
		case 1: // append
			newc = append(newc, bytes.Repeat([]byte("Z"), r.IntN(int(B)+100))...)
		case 2: // in place change
			if blen > 0 {
				p := r.Int64N(blen)
				n := min(int64(r.IntN(int(B))+1), blen-p)
				for i := p; i < p+n; i++ {
					newc[i] = 'Q'
				}
			}
		case 3: // change then truncate
			if blen > 0 {
				p := r.Int64N(blen)
				newc[p] = 'Q'
				newc = newc[:p+r.Int64N(blen-p+1)]
			}
		case 4: // change + cut to boundary / grow to boundary
			cands := []int64{B, 2 * B, 3 * B, B - 1, B + 1}
			nsz := cands[r.IntN(len(cands))]
			if nsz < blen {
				newc = newc[:nsz]
			} else {
				newc = append(newc, bytes.Repeat([]byte("Y"), int(nsz-blen))...)
			}
			if len(newc) > 0 && r.IntN(2) == 0 {
				newc[r.IntN(len(newc))] = 'W'
			}
		}
		pieces := sharedPieces(bdat, newc, r)
		p, q, size := changed(bdat, pieces)
		var nmarks []int64
		for range r.IntN(4) {
			if size > 0 {
				nmarks = append(nmarks, r.Int64N(size+1))
			}
		}
		nmarks = append(nmarks, marks...) // some old marks survive
		bcopy := *bb
		bcopy.mids = heldMids(&bcopy)
		h, _, ok := patchedHash(&bcopy, p, q, size, pieces, nmarks)
		desc := fmt.Sprintf("it %d blen %d size %d p %d q %d", it, blen, size, p, q)
		if !ok {
			t.Fatalf("%s: not ok", desc)
		}
		want, wsums := contentHash(newc)
		if h.hash != want {
			t.Fatalf("%s: hash %s want %s", desc, h.hash, want)
		}
		if !bytes.Equal(h.sums, wsums) {
			t.Fatalf("%s: sums differ", desc)
		}
		// every mid must be valid for the new content
		for _, m := range h.mids {
			i := m.At / B
			hh := sha256.New()
			if err := hh.(encoding.BinaryUnmarshaler).UnmarshalBinary(m.State); err != nil {
				t.Fatal(err)
			}
			if m.At > size {
				t.Fatalf("%s: mid at %d beyond size", desc, m.At)
			}
			hh.Write(newc[m.At:min((i+1)*B, size)])
			got := hh.Sum(nil)
			if int64(len(wsums)) < (i+1)*sumLen || !bytes.Equal(got, wsums[i*sumLen:(i+1)*sumLen]) {
				// a mid at exactly size on a block boundary has no block: check empty state
				if m.At == size && m.At%B == 0 {
					continue
				}
				t.Fatalf("%s: mid at %d invalid", desc, m.At)
			}
		}
	}
}
