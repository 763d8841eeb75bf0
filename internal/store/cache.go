package store

import (
	"errors"
	"io/fs"
	"sync"
)

// parsed keeps, for one process, what it parsed from a file of the state
// directory (the log's last entry, the stamps), under the identity the
// file had when it was read: device, inode, size, modification and change
// time. Any write gives the file another identity (the log only grows; the
// stamps are replaced by a rename), so a file met again with the same
// identity holds the same bytes, and a transaction that reads it twice —
// the drift check, then the commit — parses it once. Nothing is kept across
// processes.
type parsed struct {
	mu sync.Mutex
	m  map[string]parsedEntry
}

type parsedEntry struct {
	id string
	v  any
}

// get returns what was parsed from path when it had identity id.
func (p *parsed) get(path, id string) (any, bool) {
	if p == nil {
		return nil, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.m[path]
	if !ok || e.id != id || id == "" {
		return nil, false
	}
	return e.v, true
}

// stampsKeep is the identity the stamps' parse is kept under: it is
// looked up by its bytes (latest), not by identity.
const stampsKeep = "by content"

// latest returns what was last parsed from path, whatever its identity:
// the caller compares what it kept with the file.
func (p *parsed) latest(path string) (any, bool) {
	if p == nil {
		return nil, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.m[path]
	return e.v, ok
}

// put keeps v, parsed from path with identity id.
func (p *parsed) put(path, id string, v any) {
	if p == nil || id == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]parsedEntry{}
	}
	p.m[path] = parsedEntry{id: id, v: v}
}

// readIdentified reads the file at path with the identity of the version
// read ("" when it changed during the read); a missing file is nil.
func readIdentified(path string) ([]byte, string, error) {
	r, err := readStable(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	return r.data, r.id, err
}
