package store

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
)

// The content hash, and hashing without reading the history.
//
// The audit event records a hash of each file's whole content. Content of
// up to blockSize bytes is hashed with plain sha256, which sha256sum gives
// too. Longer content is cut into blocks of blockSize bytes (the last may
// be shorter) and hashed as a list: "sha256-blocks:" followed by the hex
// sha256 of a header line ("baton blocks BLOCKSIZE SIZE\n") and the raw
// sha256 of every block in order. A commit that changes a long history in
// one place then hashes only the blocks the change touches: the stamp keeps
// the blocks' sums (Blocks) with the file's identity, and every block the
// change leaves at its offset keeps its sum. This is what lets reviews.json
// take a review in the middle (the fixes after the reviews do not move)
// without hashing the fixes again.
//
// Within a block, sha256's state after a prefix can be saved and resumed:
// the stamp keeps the state at a few record boundaries (the start of each
// array's last record, which the next append leaves in place), as the state
// of that record's block after the bytes before it; the next commit resumes
// from the latest one before its change in the same block.

// blockSize is the size of the blocks of the content hash; content no
// longer than one block is hashed with plain sha256.
const blockSize = 256 << 10

// blocksPrefix starts the hash of content longer than one block.
const blocksPrefix = "sha256-blocks:"

// sumLen is the length of a block's raw sha256.
const sumLen = sha256.Size

// HashContent is the hash recorded for a file's content ("" for none).
func HashContent(b []byte) string {
	if b == nil {
		return ""
	}
	h, _ := contentHash(b)
	return h
}

// contentHash is HashContent with the sums of the content's blocks.
// Long content is hashed on every processor: the blocks do not depend on
// each other.
func contentHash(b []byte) (string, []byte) {
	n := blockCount(int64(len(b)))
	sums := make([]byte, n*sumLen)
	workers := min(runtime.GOMAXPROCS(0), int(n/8))
	if workers < 2 {
		sumBlocks(b, sums, 0, n, 1)
		return sumsHash(int64(len(b)), sums), sums
	}
	var wg sync.WaitGroup
	faults := make([]any, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			faults[w] = faultOf(func() { sumBlocks(b, sums, int64(w), n, int64(workers)) })
		}()
	}
	wg.Wait()
	for _, f := range faults {
		if f != nil {
			panic(f) // on the caller's goroutine, which knows what a cut file means
		}
	}
	return sumsHash(int64(len(b)), sums), sums
}

// faultOf runs fn, returning the fault of a read of a mapped file that was
// cut meanwhile (SIGBUS, as a runtime error with the address) rather than
// letting it kill the process; any other panic goes on.
func faultOf(fn func()) (fault any) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(interface{ Addr() uintptr }); !ok {
				panic(r)
			}
			fault = r
		}
	}()
	fn()
	return nil
}

// sumBlocks sums the blocks i, i+step, ... below n of b into sums.
func sumBlocks(b, sums []byte, i, n, step int64) {
	for ; i < n; i += step {
		s := sha256.Sum256(b[i*blockSize : min((i+1)*blockSize, int64(len(b)))])
		copy(sums[i*sumLen:], s[:])
	}
}

// blockCount is how many blocks content of size bytes has (one, empty,
// for none).
func blockCount(size int64) int64 { return max(1, (size+blockSize-1)/blockSize) }

// sumsHash is the content hash of content of size bytes whose blocks have
// the given sums.
func sumsHash(size int64, sums []byte) string {
	if size <= blockSize {
		return hex.EncodeToString(sums[:sumLen])
	}
	h := sha256.New()
	fmt.Fprintf(h, "baton blocks %d %d\n", blockSize, size)
	h.Write(sums)
	return blocksPrefix + hex.EncodeToString(h.Sum(nil))
}

// sumsOf are the sums of the blocks of content of size bytes hashed hash,
// given the sums a stamp kept (blocks, see blocksJSON; none for one block,
// whose sum is the hash): nil when they do not give that hash.
func sumsOf(hash string, size int64, blocks json.RawMessage) []byte {
	if size <= blockSize {
		s, err := hex.DecodeString(hash)
		if err != nil || len(s) != sumLen || len(blocks) != 0 {
			return nil
		}
		return s
	}
	sums, err := decodeBlocks(blocks)
	if err != nil || int64(len(sums)) != blockCount(size)*sumLen || sumsHash(size, sums) != hash {
		return nil
	}
	return sums
}

// decodeBlocks decodes what blocksJSON wrote: a JSON string of base64,
// decoded in place when it holds no escape (as json.Marshal writes it),
// else as encoding/json would.
func decodeBlocks(blocks json.RawMessage) ([]byte, error) {
	n := len(blocks)
	if n < 2 || blocks[0] != '"' || blocks[n-1] != '"' || bytes.IndexByte(blocks, '\\') >= 0 {
		var sums []byte
		err := json.Unmarshal(blocks, &sums)
		return sums, err
	}
	sums := make([]byte, base64.StdEncoding.DecodedLen(n-2))
	k, err := base64.StdEncoding.Decode(sums, blocks[1:n-1])
	return sums[:k], err
}

// blocksJSON is how a stamp keeps the sums of more than one block: a JSON
// string of their base64 (none for one block).
func blocksJSON(sums []byte) json.RawMessage {
	if len(sums) <= sumLen {
		return nil
	}
	b, _ := json.Marshal(sums)
	return b
}

// legacyMatch says whether content longer than one block, which the log
// recorded when every content was hashed with plain sha256 (an older baton
// wrote the entry), is still that content: want is then its plain sha256.
func legacyMatch(want string, data []byte) bool {
	if len(data) <= blockSize || len(want) != 2*sumLen || strings.HasPrefix(want, blocksPrefix) {
		return false
	}
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:]) == want
}

// sameContent says whether data is the content recorded as want.
func sameContent(data []byte, want string) bool {
	return data != nil && (HashContent(data) == want || legacyMatch(want, data))
}

// mid is the state of sha256 over the bytes of At's block before At.
type mid struct {
	At    int64  `json:"at"`
	State []byte `json:"state"`
}

// hashed is a content's hash, the sums of its blocks and the states saved
// at its record boundaries: what a stamp keeps of the content.
type hashed struct {
	hash string
	sums []byte
	mids []mid
}

// midHasher hashes content in order from a block's start (or a saved state
// within it), summing each block and saving the state at the given offsets
// (marks) as it passes them.
type midHasher struct {
	h     hash.Hash
	n     int64
	marks []int64 // ascending, not yet passed
	mids  []mid
	sums  []byte // of the blocks from n's first block on, as each ends
}

// newMidHasher starts at offset at, which starts a block, or from m when
// given.
func newMidHasher(at int64, from *mid, marks []int64) *midHasher {
	mh := &midHasher{h: sha256.New(), n: at}
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

// passMarks saves the state at a mark the hasher is at, and drops the
// marks it passed.
func (mh *midHasher) passMarks() {
	for len(mh.marks) > 0 && mh.marks[0] <= mh.n {
		if mh.marks[0] == mh.n {
			mh.save()
		}
		mh.marks = mh.marks[1:]
	}
}

func (mh *midHasher) Write(p []byte) {
	for len(p) > 0 {
		mh.passMarks()
		take := min(int64(len(p)), blockSize-mh.n%blockSize)
		if len(mh.marks) > 0 && mh.marks[0]-mh.n < take {
			take = mh.marks[0] - mh.n
		}
		mh.h.Write(p[:take])
		mh.n += take
		p = p[take:]
		if mh.n%blockSize == 0 {
			mh.sums = mh.h.Sum(mh.sums)
			mh.h.Reset()
		}
	}
	mh.passMarks()
}

// finish sums the last block, unless the content ended with a whole one
// (or, empty, has one empty block); the sums are then complete.
func (mh *midHasher) finish() []byte {
	if mh.n%blockSize != 0 || mh.n == 0 {
		mh.sums = mh.h.Sum(mh.sums)
	}
	return mh.sums
}

// marksOf reads, from a file's facts (see jsondoc.Facts), where the last
// record of each array starts: where the next commit's change begins at the
// earliest when it appends.
func marksOf(facts json.RawMessage) []int64 {
	var arrays map[string]arrayMarks
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

// arrayMarks is what marksOf reads of an array's facts.
type arrayMarks struct {
	Count int      `json:"count"`
	Last  [2]int64 `json:"last"`
}

// resumeFrom picks the latest saved state at or before off within off's
// block.
func resumeFrom(mids []mid, off int64) *mid {
	var best *mid
	start := off - off%blockSize
	for i := range mids {
		if mids[i].At <= off && mids[i].At >= start && (best == nil || mids[i].At > best.At) {
			best = &mids[i]
		}
	}
	return best
}

// hashContent hashes pieces whole, saving the state at marks.
func hashContent(pieces [][]byte, marks []int64) hashed {
	mh := newMidHasher(0, nil, marks)
	for _, p := range pieces {
		mh.Write(p)
	}
	sums := mh.finish()
	return hashed{hash: sumsHash(mh.n, sums), sums: sums, mids: mh.mids}
}
