package store

import (
	"os"
	"sync"
)

// room holds, for each tracked file the drift check reads whole (up to
// copyLimit bytes), a buffer made before the transaction takes the lock and
// written once on every page: a fresh buffer's first write to each page is a
// page fault (the kernel finds, zeroes and charges a page), and those faults
// were half the cost of reading a file under the lock. The buffer is sized
// with room for what other writers append while this one waits (sixteen
// records of a kilobyte, at most the file's size again: every page made is
// a fault, whether the file grows into it or not); a file grown past it is
// read into a larger buffer, as before. Nothing is read ahead: the bytes
// are read, and hashed, under the lock.
type room struct {
	mu  sync.Mutex
	buf map[string][]byte
}

// pageSize is the stride at which a buffer is touched.
const pageSize = 4096

// makeRoom makes the buffers for the tracked files as they are now.
func (s *Store) makeRoom() {
	for _, name := range s.Tracked {
		if IsRef(name) || isDirName(name) {
			continue
		}
		fi, err := os.Stat(s.Path(name))
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > copyLimit {
			continue
		}
		n := fi.Size() + min(fi.Size(), 16<<10) + fi.Size()/16
		b := make([]byte, n)
		for i := 0; i < len(b); i += pageSize {
			b[i] = 0
		}
		s.room.mu.Lock()
		if s.room.buf == nil {
			s.room.buf = map[string][]byte{}
		}
		s.room.buf[name] = b[:0]
		s.room.mu.Unlock()
	}
}

// dropRoom lets go of the buffers no read took (a transaction that ended
// before its drift check), which a process that lives would keep.
func (s *Store) dropRoom() {
	s.room.mu.Lock()
	s.room.buf = nil
	s.room.mu.Unlock()
}

// takeRoom hands out name's buffer once (nil when none was made).
func (s *Store) takeRoom(name string) []byte {
	s.room.mu.Lock()
	defer s.room.mu.Unlock()
	b := s.room.buf[name]
	delete(s.room.buf, name)
	return b
}
