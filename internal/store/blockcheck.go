package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"os"
	"runtime"
	"sync"
)

// A reader's check of the blocks it reads. A file larger than copyLimit
// that baton's last transaction did not write under its present identity
// (a copy put back by a checkout, a restore or a copy tool) would
// otherwise be hashed whole before a read of a few fields: on a long
// history that hash is most of the read. The stamp the log's head vouches
// for holds the sums of the recorded version's blocks (see contentHash),
// and its facts say where that version's arrays and their last records
// are. A read that takes only some bytes (a top-level member beside the
// arrays, the last record of one) hashes just the blocks those bytes lie
// in: when they have the recorded sums, the bytes it reads are the
// recorded version's, at the offsets the facts give, so it answers as
// from that version. A difference elsewhere in the file is not its to
// find: the next write's drift check and verify hash every block, and a
// read that needs more of the file checks it whole first.

// Blocks is the version of a file the log's head vouches for, checked
// block by block against the bytes of a copy of it.
type Blocks struct {
	facts   json.RawMessage
	sums    []byte
	size    int64
	checked []bool
}

// VouchedBlocks returns the recorded version of the file name for a read
// of some of data's bytes (a copy described by fi that no stamp nor note
// vouches for), or nil when there is none to check them against: a file
// no larger than copyLimit (hashed whole: it costs little), no stamp the
// log's head vouches for with the facts a reader uses and the sums of its
// blocks, or a copy of another size.
func (s *Store) VouchedBlocks(name string, fi os.FileInfo, data []byte) *Blocks {
	if fi == nil || int64(len(data)) <= copyLimit {
		return nil
	}
	st, ok := s.stampOf(s.key(name)) // a stamp the log's head vouches for
	if !ok || st.HashOnly || len(st.Facts) == 0 || !sizeIs(st.ID, len(data)) {
		return nil
	}
	sums := sumsOf(st.Hash, int64(len(data)), st.Blocks)
	if sums == nil {
		return nil
	}
	return &Blocks{facts: st.Facts, sums: sums, size: int64(len(data)), checked: make([]bool, blockCount(int64(len(data))))}
}

// Facts are the facts recorded with the vouched version.
func (b *Blocks) Facts() json.RawMessage { return b.facts }

// Check reports whether the bytes of data in each range [from, to) are
// those of the vouched version: the blocks they lie in, which Check has
// not checked before, are hashed (on every processor when there are
// several) and compared with the recorded sums. A range outside the
// content, or data of another size, is never the version's.
func (b *Blocks) Check(data []byte, ranges ...[2]int64) bool {
	if int64(len(data)) != b.size {
		return false
	}
	var todo []int64
	seen := map[int64]bool{}
	for _, r := range ranges {
		if r[0] < 0 || r[1] > b.size || r[0] > r[1] {
			return false
		}
		for i := r[0] / blockSize; i*blockSize < r[1]; i++ {
			if !b.checked[i] && !seen[i] {
				seen[i] = true
				todo = append(todo, i)
			}
		}
	}
	sums, ok := sumsAt(data, todo)
	if !ok {
		return false
	}
	for k, i := range todo {
		if !bytes.Equal(sums[k*sumLen:(k+1)*sumLen], b.sums[i*sumLen:(i+1)*sumLen]) {
			return false
		}
	}
	for _, i := range todo {
		b.checked[i] = true
	}
	return true
}

// sumsAt sums the blocks of data at the given indexes, in order, on every
// processor when there are several; ok is false when the content was cut
// while it was read (a mapped file shortened meanwhile).
func sumsAt(data []byte, at []int64) ([]byte, bool) {
	sums := make([]byte, len(at)*sumLen)
	one := func(k int) {
		i := at[k]
		s := sha256.Sum256(data[i*blockSize : min((i+1)*blockSize, int64(len(data)))])
		copy(sums[k*sumLen:], s[:])
	}
	workers := min(runtime.GOMAXPROCS(0), len(at))
	faults := make([]any, max(workers, 1))
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			faults[w] = faultOf(func() {
				for k := w; k < len(at); k += workers {
					one(k)
				}
			})
		}()
	}
	faults[0] = faultOf(func() {
		for k := 0; k < len(at); k += max(workers, 1) {
			one(k)
		}
	})
	wg.Wait()
	for _, f := range faults {
		if f != nil {
			return nil, false
		}
	}
	return sums, true
}
