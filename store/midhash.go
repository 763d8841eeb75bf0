package store

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"hash"
	"sort"
)

// Hashing without reading the history. The audit event records the plain
// sha256 of each file's whole content, but a commit that appends to a long
// history need not hash it all again: sha256's state after a prefix can be
// saved and resumed. The stamp keeps, with the file's identity, the state
// at a few record boundaries (the start of each array's last record, which
// the next append leaves in place); the next commit resumes from the
// latest one before its change and hashes only the bytes after it.

// mid is sha256's state after the first At bytes of a file.
type mid struct {
	At    int64  `json:"at"`
	State []byte `json:"state"`
}

// midHasher hashes a file's content in order, saving the state at the
// given offsets (marks) as it passes them.
type midHasher struct {
	h     hash.Hash
	n     int64
	marks []int64 // ascending, not yet passed
	mids  []mid
}

// newMidHasher starts at offset 0, or from m when given.
func newMidHasher(from *mid, marks []int64) *midHasher {
	mh := &midHasher{h: sha256.New()}
	if from != nil {
		if err := mh.h.(encoding.BinaryUnmarshaler).UnmarshalBinary(from.State); err != nil {
			return nil
		}
		mh.n = from.At
	}
	for _, m := range marks {
		if m >= mh.n {
			mh.marks = append(mh.marks, m)
		}
	}
	sort.Slice(mh.marks, func(i, j int) bool { return mh.marks[i] < mh.marks[j] })
	return mh
}

func (mh *midHasher) save() {
	st, err := mh.h.(encoding.BinaryMarshaler).MarshalBinary()
	if err == nil && (len(mh.mids) == 0 || mh.mids[len(mh.mids)-1].At != mh.n) {
		mh.mids = append(mh.mids, mid{At: mh.n, State: st})
	}
}

func (mh *midHasher) Write(p []byte) {
	for len(p) > 0 {
		for len(mh.marks) > 0 && mh.marks[0] <= mh.n {
			if mh.marks[0] == mh.n {
				mh.save()
			}
			mh.marks = mh.marks[1:]
		}
		take := int64(len(p))
		if len(mh.marks) > 0 && mh.marks[0]-mh.n < take {
			take = mh.marks[0] - mh.n
		}
		mh.h.Write(p[:take])
		mh.n += take
		p = p[take:]
	}
	for len(mh.marks) > 0 && mh.marks[0] == mh.n {
		mh.save()
		mh.marks = mh.marks[1:]
	}
}

func (mh *midHasher) sum() string { return hex.EncodeToString(mh.h.Sum(nil)) }

// marksOf reads, from a file's facts (see jsondoc.Facts), where the last
// record of each array starts: where the next commit's change begins at the
// earliest when it appends.
func marksOf(facts json.RawMessage) []int64 {
	var arrays map[string]struct {
		Count int      `json:"count"`
		Last  [2]int64 `json:"last"`
	}
	if len(facts) == 0 || json.Unmarshal(facts, &arrays) != nil {
		return nil
	}
	var out []int64
	for _, a := range arrays {
		if a.Count > 0 && a.Last[0] > 0 {
			out = append(out, a.Last[0])
		}
	}
	return out
}

// resumeFrom picks the latest saved state at or before off.
func resumeFrom(mids []mid, off int64) *mid {
	var best *mid
	for i := range mids {
		if mids[i].At <= off && (best == nil || mids[i].At > best.At) {
			best = &mids[i]
		}
	}
	return best
}

// hashContent hashes pieces whole, saving the state at marks.
func hashContent(pieces [][]byte, marks []int64) (string, []mid) {
	mh := newMidHasher(nil, marks)
	for _, p := range pieces {
		mh.Write(p)
	}
	return mh.sum(), mh.mids
}

// hashPatched hashes the content base becomes under a change at p: from
// the latest saved state before p, base's bytes up to p, then the new
// content from p. Saved states before the resume point that the change
// leaves in place are kept. ok is false when no saved state can be used.
func hashPatched(base []byte, mids []mid, p int64, pieces [][]byte, marks []int64) (string, []mid, bool) {
	from := resumeFrom(mids, p)
	if from == nil {
		return "", nil, false
	}
	mh := newMidHasher(from, marks)
	if mh == nil {
		return "", nil, false
	}
	var kept []mid
	for _, m := range marks {
		if m < from.At {
			for _, old := range mids {
				if old.At == m {
					kept = append(kept, old)
				}
			}
		}
	}
	mh.Write(base[from.At:p])
	for _, piece := range piecesFrom(pieces, p) {
		mh.Write(piece)
	}
	return mh.sum(), append(kept, mh.mids...), true
}
