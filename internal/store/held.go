package store

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
)

// Held content: a reader that validates a file baton did not write also
// compares it with the audit log, which hashes all of it. The two do not
// depend on each other, so the hash runs on another goroutine (the second
// core) while the reader validates, and the read costs the longer of the
// two rather than their sum.

// Held is content a reader holds (mapped or read), whose sha256 is being
// computed in the background.
type Held struct {
	data []byte
	once sync.Once
	done chan struct{}
	sum  string
}

// Hold starts hashing data on another goroutine. The caller must call
// Wait (or Sum) before data is released: a mapping unmapped under the
// hash would fault.
func Hold(data []byte) *Held {
	h := &Held{data: data, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		if faultOf(func() { h.sum = HashContent(data) }) != nil {
			h.sum = cutSum // cut while hashed: it is no version the log recorded
		}
	}()
	return h
}

// cutSum is the hash of content that was cut while it was hashed: no
// content has it.
const cutSum = "cut while read"

// held is a Held hashed on first use, on the caller's goroutine.
func held(data []byte) *Held { return &Held{data: data} }

// Sum returns the hash of the content (as HashContent), waiting for it.
func (h *Held) Sum() string {
	if h.done == nil {
		h.once.Do(func() { h.sum = HashContent(h.data) })
		return h.sum
	}
	<-h.done
	return h.sum
}

// Wait waits until the content is no longer read.
func (h *Held) Wait() {
	if h != nil && h.done != nil {
		<-h.done
	}
}

// Data is the content held (nil for none, or a nil Held).
func (h *Held) Data() []byte {
	if h == nil {
		return nil
	}
	return h.data
}

// VouchedContent returns the facts of the stamp of the state file name
// when the content h holds is, byte for byte, the version that stamp
// vouches for (one baton's transaction wrote, or validated in full) and
// the log's head vouches for the stamp (see verifiedStamp): a copy of that
// version put back under a new identity — a checkout, a backup restored —
// is known valid from its hash alone, which the comparison with the log
// needs anyway. It waits for the hash only when the content is the
// stamped version's size. Without the lock a writer may change the log
// and the stamps meanwhile: they then do not match, and the content is
// validated.
func (s *Store) VouchedContent(name string, h *Held) (json.RawMessage, bool) {
	if h.Data() == nil {
		return nil, false
	}
	st, ok := s.verifiedStamp(name)
	if !ok || st.HashOnly || st.Hash == "" || !sizeIs(st.ID, len(h.Data())) {
		return nil, false
	}
	if h.Sum() != st.Hash {
		return nil, false
	}
	return st.Facts, true
}

// sizeIs says whether the file identity id (see fileID: device, inode,
// size, modification and change time, or size and modification time where
// there is no inode) names a file of n bytes.
func sizeIs(id string, n int) bool {
	size, ok := idSize(id)
	return ok && size == int64(n)
}

// idSize is the size an identity (see fileID) records.
func idSize(id string) (int64, bool) {
	f := strings.Split(id, ":")
	i := -1
	switch len(f) {
	case 5:
		i = 2
	case 2:
		i = 0
	}
	if i < 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(f[i], 10, 64)
	return n, err == nil && n >= 0
}
