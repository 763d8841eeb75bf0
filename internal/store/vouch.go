package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
)

// Vouching: a transaction's drift check reads each tracked file no current
// stamp vouches for (restored from git, migrated, validated only by a
// reader) and compares its hash with the last event's. When they agree,
// the transaction knows that version: its identity (the same before and
// after the read), its content hash and, when the transaction also parsed
// it in full (Validated), the facts a writer would have recorded. After the
// commit it records a stamp for that version, so that the transactions
// after it take the file as baton's own instead of reading, hashing and
// validating it again: once per version, not once per write. A file larger
// than copyLimit that the transaction did not parse gets a stamp with its
// hash only (hashOnly), which the drift check uses and readers do not. The
// stamp records the identity seen at the read, never a later one: a change
// made since gives the file another identity, which the stamp does not
// match.

// driftRead is a file the drift check read.
type driftRead struct {
	data       []byte
	id         string // the identity of the version read; "" when it changed during the read
	asRecorded bool   // it hashes to what the last event recorded, and the stamps were current
	stamped    bool   // it hashes to what its current stamp says (a base the transaction may patch)
	hash       string // that hash, when stamped
	sums       []byte // the sums of its blocks (see contentHash)
}

// vouched is what a transaction knows of a file it read as recorded.
type vouched struct {
	id, hash string
	size     int64
	facts    json.RawMessage
	sums     []byte // its blocks' sums, when known
}

// readStable reads the file at path with the identity of the version read
// (a missing file is the zero driftRead).
func readStable(path string) (driftRead, error) { return readStableInto(path, nil) }

// readStableInto is readStable into buf's room when it is large enough.
func readStableInto(path string, buf []byte) (driftRead, error) {
	f, fi, err := OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return driftRead{}, nil
	}
	if err != nil {
		return driftRead{}, err
	}
	defer f.Close()
	data, err := readAllInto(f, fi.Size(), buf)
	if err != nil {
		return driftRead{}, err
	}
	r := driftRead{data: data}
	if after, err := f.Stat(); err == nil && identity(after) == identity(fi) && int64(len(data)) == fi.Size() {
		r.id = identity(fi)
	}
	return r, nil
}

func (tx *Tx) vouch(name string, r driftRead, hash string) {
	if tx.vouched == nil {
		tx.vouched = map[string]vouched{}
	}
	v := vouched{id: r.id, hash: hash, size: int64(len(r.data)), sums: r.sums}
	if st, ok := tx.verified(name); ok && !st.HashOnly && st.Hash == hash {
		v.facts = st.Facts // that content's, derived when a stamp the log vouches for was written
	}
	tx.vouched[name] = v
}

// Validated tells the transaction that it parsed and validated in full the
// file name as the drift check read it, and the facts a reader may use:
// the stamp recorded for that version carries them. Nothing happens for a
// file the drift check did not vouch for.
func (tx *Tx) Validated(name string, facts json.RawMessage) {
	if v, ok := tx.vouched[name]; ok && facts != nil {
		v.facts = facts
		tx.vouched[name] = v
	}
}

// renewStamps writes the stamps after tx, once: those of the files it
// wrote or adopted (sealed with its event), and those of the files it
// vouched for, when the stamps are then sealed with the head of the log
// after tx (see stampsAfter).
func (s *Store) renewStamps(tx *Tx, committed bool) {
	after := tx.stampsAfter(committed)
	names := tx.stampNames()
	var hashes map[string]string
	event := ""
	if tx.event != nil {
		hashes, event = tx.event.Metadata.Files, tx.event.Hash
	}
	if len(names) == 0 && (event == "" || event != after) {
		s.recordVouched(tx, after)
		return
	}
	// an event that writes no file still records the stamps' digests:
	// the stamps are sealed with it, or they would be stale from now on
	if fault(StepStamps) != nil {
		return
	}
	var add map[string]stamp
	if event != "" && event == after {
		add = s.vouchedStamps(tx)
	}
	s.recordStamps(names, tx.staged, tx.facts, tx.hashed, hashes, event, tx.prevHead, add)
}

// vouchedStamps are the stamps of the files tx vouched for and neither
// wrote nor adopted.
func (s *Store) vouchedStamps(tx *Tx) map[string]stamp {
	add := map[string]stamp{}
	for name, v := range tx.vouched {
		if _, staged := tx.staged[name]; staged || tx.adopt[name] {
			continue
		}
		st := stamp{ID: v.id, Hash: v.hash, Facts: v.facts}
		if b := blocksJSON(v.sums); b != nil && sumsOf(v.hash, v.size, b) != nil {
			st.Blocks = b
		}
		if v.facts == nil {
			if v.size <= copyLimit {
				continue // read and hashed by every drift check anyway
			}
			st.HashOnly = true
		}
		add[s.key(name)] = st
	}
	return add
}

// recordVouched adds the stamps of the files tx vouched for, when the
// stamps on disk are those of event (the head of the log after the
// transaction) and would change.
func (s *Store) recordVouched(tx *Tx, event string) {
	add := s.vouchedStamps(tx)
	if len(add) == 0 || event == "" {
		return
	}
	sf, ok := s.loadStamps()
	if !ok || sf.Event != event {
		return
	}
	if sf.Files == nil {
		sf.Files = map[string]stamp{}
	}
	same := true
	for k, st := range add {
		same = same && equalStamp(sf.Files[k], st)
		sf.Files[k] = st
	}
	if !same {
		s.writeStamps(event, sf.Files)
	}
}

func equalStamp(a, b stamp) bool {
	return a.ID == b.ID && a.Hash == b.Hash && a.HashOnly == b.HashOnly && bytes.Equal(a.Facts, b.Facts) && len(a.Mids) == 0 && len(b.Mids) == 0 && bytes.Equal(a.Blocks, b.Blocks)
}

// stampsAfter is the event the stamps on disk should be sealed with after
// tx: its own, once committed, else the head the drift check saw.
func (tx *Tx) stampsAfter(committed bool) string {
	if committed && tx.event != nil && tx.event.Hash != "" {
		return tx.event.Hash
	}
	return tx.driftHead
}
