package store

import "sync"

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
		h.sum = HashContent(data)
		close(h.done)
	}()
	return h
}

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
