package store

import (
	"encoding/json"
)

// What a stamp is trusted for. .baton/stamps.json is no secret: an agent
// that can write the project can rewrite it, seal and all. Its parts are
// trusted differently:
//
//   - The identity (device, inode, size, times) says only "unchanged since
//     it was stamped". Nothing can prove that; the drift check takes it
//     for files larger than copyLimit only, and verify reads every file.
//   - The content-derived parts — the hash, the facts a writer derived, the
//     sha256 states (mids) a commit resumes hashing from — would let a
//     forger choose what baton records: a forged mid makes the next commit
//     log sha256(a history of the forger's) ‖ the new tail) as the file's
//     hash. So the event a transaction appends, which is keyed, chained and
//     anchored like every entry, records a digest of each stamp's
//     content-derived parts (EventMetadata.Stamps), and a transaction uses
//     a stamp's facts and mids (a reader its facts: stampOf) only when the
//     stamps were written after the log's head and the head records that
//     stamp's digest and hash. Any other stamp costs a full read, never a
//     wrong record.
//   - What a write takes from a file on its identity alone (over 1 MiB) is
//     checked against the log's hash as far as it hashes it (checkBase).

// stampFor is the stamp a commit records for content hashed hash, before
// its identity is known.
func stampFor(hash string, facts json.RawMessage, h hashed) stamp {
	st := stamp{Hash: hash, Facts: facts}
	if hash != "" && h.hash == hash { // states and sums of the content the event hashed
		st.Mids = h.mids
		st.Blocks = blocksJSON(h.sums)
	}
	return st
}

// stampDigest is the digest of a stamp's content-derived parts: its JSON
// as the stamps file holds it, without the identity.
func stampDigest(st stamp) string {
	st.ID = ""
	b, err := json.Marshal(st)
	if err != nil {
		return ""
	}
	return HashContent(b)
}

// stampDigests are the digests the transaction's event records, given the
// file hashes it records: those of the stamps the commit writes (the files
// it writes or adopts, and those it vouched for), and, for the others, the
// digests the log's head recorded (their stamps are carried over).
func (tx *Tx) stampDigests(head *Event, files map[string]string) map[string]string {
	out := map[string]string{}
	if head != nil {
		for k, d := range head.Metadata.Stamps {
			out[k] = d
		}
	}
	for k, st := range tx.s.vouchedStamps(tx) {
		out[k] = stampDigest(st)
	}
	for _, n := range tx.stampNames() {
		if IsRef(n) || isDirName(n) || n == ".baton/"+stampsName {
			continue
		}
		k := tx.s.key(n)
		if h := files[k]; h != "" {
			out[k] = stampDigest(stampFor(h, tx.facts[n], tx.hashed[n]))
		} else {
			delete(out, k)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// verifiedStamp is the stamp of name when the log's head vouches for its
// content-derived parts (see above).
func (s *Store) verifiedStamp(name string) (stamp, bool) {
	head, _, err := s.lastEvent()
	if err != nil || head == nil {
		return stamp{}, false
	}
	sf, ok := s.loadStamps()
	return s.verifiedIn(sf, ok, head, name)
}

// verifiedIn is verifiedStamp given the stamps file and the log's head.
func (s *Store) verifiedIn(sf stampsFile, ok bool, head *Event, name string) (stamp, bool) {
	if !ok || head == nil || sf.Event == "" || sf.Event != head.Hash {
		return stamp{}, false // stale: written before the head, or lost
	}
	k := s.key(name)
	st, ok := sf.Files[k]
	if _, tracked := head.Metadata.Files[k]; ok && !tracked {
		// a file the log does not hash (the reviews index, which the
		// facts of the file it indexes name by digest): its identity
		// makes it a base to patch, and nothing else is taken
		st.Hash, st.Facts, st.Mids, st.Blocks = "", nil, nil, nil
		return st, true
	}
	want, recorded := head.Metadata.Stamps[k]
	if !ok || !recorded || st.Hash == "" || st.Hash != head.Metadata.Files[k] || stampDigest(st) != want {
		return stamp{}, false
	}
	size, ok := idSize(st.ID)
	if st.sums = sumsOf(st.Hash, size, st.Blocks); !ok || st.sums == nil {
		// a file of more than one block hashed whole by an older baton,
		// or sums that do not give the hash: the file is read
		return stamp{}, false
	}
	return st, true
}

// verified is verifiedStamp for a transaction, which holds the lock: the
// stamps and the log's head are read once, and each stamp checked once.
func (tx *Tx) verified(name string) (stamp, bool) {
	if tx.stampView == nil {
		v := &stampView{checked: map[string]verifiedResult{}}
		v.head, _, _ = tx.s.lastEvent()
		v.sf, v.ok = tx.s.loadStamps()
		tx.stampView = v
	}
	r, done := tx.stampView.checked[name]
	if !done {
		v := tx.stampView
		r.st, r.ok = tx.s.verifiedIn(v.sf, v.ok, v.head, name)
		v.checked[name] = r
	}
	return r.st, r.ok
}

// stampView is what a transaction read of the stamps and the log's head
// before its commit (neither changes under the lock but by the commit).
type stampView struct {
	sf      stampsFile
	ok      bool
	head    *Event
	checked map[string]verifiedResult
}

type verifiedResult struct {
	st stamp
	ok bool
}
