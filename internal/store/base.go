package store

import (
	"errors"
	"io/fs"
	"os"

	"github.com/baton-cli/baton/internal/errs"
)

// base is a file baton's last transaction wrote (its stamp vouches for
// it) as a transaction found it, to be patched in place: mapped when it is
// large (the mapping lives until the transaction ends), else read.
type base struct {
	data    []byte
	id      string // the file's identity when mapped
	hash    string // its content's hash, as stamped
	sums    []byte // its blocks' sums, as stamped (see contentHash)
	mids    []mid  // sha256 states saved at record boundaries
	checked bool   // its bytes were hashed against the log (the drift check's)
	release func()
}

// readBase opens a state file for a transaction: mapped when its stamp
// vouches for it and it is large, else read whole (and kept as the base of
// a patch when the stamp vouches for it). A stamp vouches only when the
// log's head vouches for it (verifiedStamp) and it is not hash-only (which
// vouches for no validation); the stamp returned says so, with the facts
// recorded then. A file the drift check read as stamped is not read again:
// its bytes are the ones it hashed. A missing file is nil.
func (tx *Tx) readBase(name string) ([]byte, *stamp, error) {
	if r, ok := tx.driftBases[name]; ok {
		st, ok := tx.verified(name)
		if !ok || st.ID != r.id || st.HashOnly || r.hash != st.Hash {
			return r.data, nil, nil
		}
		tx.keepBase(name, &base{data: r.data, id: st.ID, hash: st.Hash, sums: r.sums, mids: st.Mids, checked: true, release: func() {}})
		return r.data, &st, nil
	}
	f, fi, err := OpenRegular(tx.s.Path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, ok := tx.verified(name)
	vouched := ok && st.ID == identity(fi) && !st.HashOnly
	if vouched && fi.Size() >= patchFrom {
		data, release, err := mapOpen(f, fi.Size())
		if err != nil {
			return nil, nil, err
		}
		tx.keepBase(name, &base{data: data, id: st.ID, hash: st.Hash, sums: st.sums, mids: st.Mids, release: release})
		return data, &st, nil
	}
	data, err := readAll(f, fi.Size())
	if err != nil || !vouched {
		if err == nil && fi.Size() > copyLimit {
			err = tx.vouchRead(name, f, fi, data)
		}
		return data, nil, err
	}
	// read, not mapped, and patched all the same: a replacement would
	// create a file (and sync two directories) for every small write
	tx.keepBase(name, &base{data: data, id: st.ID, hash: st.Hash, sums: st.sums, mids: st.Mids, release: func() {}})
	return data, &st, nil
}

// vouchRead vouches for a large file read whole because no stamp the log's
// head records vouches for it — its stamp is hash-only, or from a log
// before the stamps' digests, and the drift check took it on its identity
// unread — when the bytes read hash to what the log's head recorded. The
// transaction that validates them then stamps their facts and its event
// records the stamp's digest, so that the writes after it take the file as
// baton's instead of reading it whole every time. Bytes that hash to
// something else, under the identity the drift check took as recorded,
// were changed outside baton (and the stamp with them): the transaction is
// refused, as checkBase refuses a base.
func (tx *Tx) vouchRead(name string, f *os.File, fi os.FileInfo, data []byte) error {
	if _, ok := tx.vouched[name]; ok || tx.driftHead == "" {
		return nil
	}
	last, _, err := tx.s.lastEvent()
	if err != nil || last == nil || last.Hash != tx.driftHead {
		return nil
	}
	want := last.Metadata.Files[tx.s.key(name)]
	if want == "" {
		return nil
	}
	// the drift check took the file on its stamp's identity, unread: bytes
	// that differ from the log's record were changed outside baton (the
	// same bytes under a new identity — restored, touched — were not)
	h, sums := contentHash(data)
	if h != want && !legacyMatch(want, data) {
		return tx.changedOutside(name)
	}
	if after, err := f.Stat(); err == nil && identity(after) == identity(fi) {
		tx.vouch(name, driftRead{data: data, id: identity(fi), asRecorded: true, sums: sums}, want)
	}
	return nil
}

func (tx *Tx) keepBase(name string, b *base) {
	if tx.bases == nil {
		tx.bases = map[string]*base{}
	}
	tx.bases[name] = b
}

// releaseBases unmaps the files the transaction mapped.
func (tx *Tx) releaseBases() {
	if !tx.s.KeepMapped { // else left to the exit, as a reader's (KeepMapped)
		for _, b := range tx.bases {
			b.release()
		}
	}
	tx.bases = nil
}

// plan decides how a staged file is committed: as a patch of its mapped
// base (when the base is still the file and the change is a short tail),
// or replaced whole. It returns the new content's hash, its blocks' sums
// and the sha256 states saved at its record boundaries, or the error of a
// base that does not hold what its stamp says (checkBase).
func (tx *Tx) plan(name, dst string, pieces [][]byte) (hashed, *patchEntry, error) {
	marks := marksOf(tx.facts[name])
	b := tx.bases[name]
	if b == nil || !patching || !sameID(dst, b.id) {
		return hashContent(pieces, marks), nil, tx.checkBase(name, b, nil)
	}
	p, q, size := changed(b.data, pieces)
	if q-p > patchMax {
		return hashContent(pieces, marks), nil, tx.checkBase(name, b, nil)
	}
	if b.checked {
		// the content is the log's: resume from, and carry into the new
		// stamp, only the states checked against it
		b.mids = heldMids(b)
	}
	h, read, ok := patchedHash(b, p, q, size, pieces, marks)
	if !ok {
		// no sums to patch the hash with: hashed whole, and still patched
		// in place; a file the log does not hash (the reviews index, whose
		// stamp keeps only its identity) is not hashed at all
		h, read = hashed{}, nil
		if b.hash != "" || tx.s.tracked(name) {
			h = hashContent(pieces, marks)
		}
	}
	return h, &patchEntry{Dst: dst, Off: p, Data: cut(pieces, p, q), Size: size, Hash: h.hash}, tx.checkBase(name, b, read)
}

// heldMids are the saved sha256 states of b that give, over the rest of
// their block, the sum of that block. A stamp's states are believed only as
// far as the log's head records their digest, and an entry an agent
// appended in its own session could record a forged one; for a base whose
// bytes the drift check hashed (checked) the sums are the content's own,
// and this costs the hash of each state's block.
func heldMids(b *base) []mid {
	var held []mid
	for _, m := range b.mids {
		if b.resumesTo(&m) {
			held = append(held, m)
		}
	}
	return held
}

// resumesTo says whether the saved state m, resumed over the rest of its
// block of b, gives that block's sum.
func (b *base) resumesTo(m *mid) bool {
	i := m.At / blockSize
	if b.sums == nil || m.At < 0 || m.At > int64(len(b.data)) || (i+1)*sumLen > int64(len(b.sums)) {
		return false
	}
	mh := newMidHasher(0, m, nil)
	if mh == nil {
		return false
	}
	mh.Write(b.data[m.At:min((i+1)*blockSize, int64(len(b.data)))])
	return string(mh.finish()) == string(b.sums[i*sumLen:(i+1)*sumLen])
}

// checkBase makes sure that a base its stamp vouched for by identity alone
// (a file the drift check did not hash: over 1 MiB) holds the content the
// log recorded, as far as the commit takes bytes from it: the identity in
// .baton/stamps.json can be rewritten with an edit of the file, and the
// edit would otherwise be hashed into the log as baton's. Replaced whole
// (read nil), the base is hashed whole; patched, each block the new hash
// read bytes of is hashed against its sum (which the log vouches for, as
// it does the state the block's hash resumes from). A file the log does
// not hash is not checked.
func (tx *Tx) checkBase(name string, b *base, read *blockSpan) error {
	if b == nil || b.checked || b.hash == "" {
		return nil
	}
	if read == nil {
		if sameContent(b.data, b.hash) {
			return nil
		}
		return tx.changedOutside(name)
	}
	for _, i := range read.blocks {
		m := &mid{At: i * blockSize, State: emptyState()}
		if i == read.resumed && read.from != nil {
			m = read.from
		}
		if !b.resumesTo(m) {
			return tx.changedOutside(name)
		}
	}
	return nil
}

// changedOutside is the refusal of a file that does not hold what the log
// recorded though its stamp says it is unchanged.
func (tx *Tx) changedOutside(name string) error {
	return errs.New(errs.Invalid, "%s was changed outside baton: it does not hold what the last audit event recorded, though baton's record of the file says it is unchanged — nothing was written; baton records no more changes until a person reconciles this. Stop and report it", tx.s.Path(name))
}

// sameID says whether path still has identity id.
func sameID(path, id string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && identity(fi) == id
}
