package store

import (
	"crypto/sha256"
	"encoding"
)

// blockSpan is what a patched hash read of its base's bytes: the base's
// blocks it read bytes of, the first of them (resumed) from the saved
// state from when one was used.
type blockSpan struct {
	blocks  []int64
	resumed int64
	from    *mid
}

// patchedHash hashes the content b becomes under a change of its bytes
// [p, q) (see changed) that leaves size bytes: the blocks before p's block
// keep their sums, and so does every block after q that the change leaves
// at its offset whole (a change in the middle that keeps the size, or a
// block before a shorter or longer last one); the others are hashed from
// the new content, p's block resumed from the latest state saved in it
// before p. Saved states in blocks the change leaves alone are kept when
// they are at a mark. ok is false when b's sums are not known.
func patchedHash(b *base, p, q, size int64, pieces [][]byte, marks []int64) (hashed, *blockSpan, bool) {
	blen := int64(len(b.data))
	if b.sums == nil || int64(len(b.sums)) != blockCount(blen)*sumLen {
		return hashed{}, nil, false
	}
	k := p / blockSize
	from := resumeFrom(b.mids, p)
	if from != nil && from.At%blockSize == 0 {
		from = nil // a block's start: sha256's initial state, never a saved one
	}
	start := k * blockSize
	if from != nil {
		start = from.At
	}
	// blocks [r, m) are reused; the content from m on is hashed again
	r := (q + blockSize - 1) / blockSize * blockSize
	m := min(size, blen) / blockSize * blockSize
	if size == blen {
		m = blockCount(size) * blockSize
	}
	end := size
	if r < m {
		end = r
	}
	mh := newMidHasher(start, from, marks)
	if mh == nil {
		return hashed{}, nil, false
	}
	mh.Write(b.data[start:p])
	writeRange(mh, pieces, p, end)
	mids := keptMids(b.mids, marks, func(at int64) bool { return at < start || at >= r && at < m })
	mids = append(mids, mh.mids...)
	span := &blockSpan{resumed: k, from: from}
	for i := k; i < blockCount(blen) && i*blockSize < min(end, blen); i++ {
		span.blocks = append(span.blocks, i)
	}
	sums := append([]byte(nil), b.sums[:k*sumLen]...)
	if end == size {
		sums = append(sums, mh.finish()...)
	} else {
		sums = append(append(sums, mh.sums...), b.sums[r/blockSize*sumLen:m/blockSize*sumLen]...)
		if m < size {
			tail := newMidHasher(m, nil, marks)
			writeRange(tail, pieces, m, size)
			sums = append(sums, tail.finish()...)
			mids = append(mids, tail.mids...)
			if m < blen {
				span.blocks = append(span.blocks, m/blockSize)
			}
		}
	}
	return hashed{hash: sumsHash(size, sums), sums: sums, mids: mids}, span, true
}

// keptMids are the saved states at marks for which keep holds.
func keptMids(mids []mid, marks []int64, keep func(at int64) bool) []mid {
	var out []mid
	for _, m := range mids {
		for _, at := range marks {
			if m.At == at && keep(at) {
				out = append(out, m)
				break
			}
		}
	}
	return out
}

// writeRange hashes bytes [from, to) of the content given in pieces.
func writeRange(mh *midHasher, pieces [][]byte, from, to int64) {
	pos := int64(0)
	for _, piece := range pieces {
		n := int64(len(piece))
		if pos+n > from && pos < to {
			mh.Write(piece[max(from-pos, 0):min(to-pos, n)])
		}
		pos += n
	}
}

// emptyState is sha256's state before any byte.
func emptyState() []byte {
	st, _ := sha256.New().(encoding.BinaryMarshaler).MarshalBinary()
	return st
}
