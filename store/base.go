package store

import (
	"errors"
	"io/fs"
	"os"

	"github.com/baton-cli/baton/errs"
)

// base is a file baton's last transaction wrote (its stamp vouches for
// it) as a transaction found it, to be patched in place: mapped when it is
// large (the mapping lives until the transaction ends), else read.
type base struct {
	data    []byte
	id      string // the file's identity when mapped
	hash    string // its content's hash, as stamped
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
		tx.keepBase(name, &base{data: r.data, id: st.ID, hash: st.Hash, mids: st.Mids, checked: true, release: func() {}})
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
		tx.keepBase(name, &base{data: data, id: st.ID, hash: st.Hash, mids: st.Mids, release: release})
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
	tx.keepBase(name, &base{data: data, id: st.ID, hash: st.Hash, mids: st.Mids, release: func() {}})
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
	if HashContent(data) != want {
		return tx.changedOutside(name)
	}
	if after, err := f.Stat(); err == nil && identity(after) == identity(fi) {
		tx.vouch(name, driftRead{data: data, id: identity(fi), asRecorded: true}, want)
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
	for _, b := range tx.bases {
		b.release()
	}
	tx.bases = nil
}

// plan decides how a staged file is committed: as a patch of its mapped
// base (when the base is still the file and the change is a short tail),
// or replaced whole. It returns the new content's hash and the sha256
// states saved at its record boundaries, or the error of a base that does
// not hold what its stamp says (checkBase).
func (tx *Tx) plan(name, dst string, pieces [][]byte) (string, []mid, *patchEntry, error) {
	marks := marksOf(tx.facts[name])
	b := tx.bases[name]
	if b == nil || !patching || !sameID(dst, b.id) {
		h, m := hashContent(pieces, marks)
		return h, m, nil, tx.checkBase(name, b, 0, true)
	}
	p, q, size := changed(b.data, pieces)
	if q-p > patchMax {
		h, m := hashContent(pieces, marks)
		return h, m, nil, tx.checkBase(name, b, p, true)
	}
	if b.checked {
		// the content is the log's: resume from, and carry into the new
		// stamp, only the states checked against it
		b.mids = heldMids(b)
	}
	h, m, ok := hashPatched(b.data, b.mids, p, pieces, marks)
	if !ok {
		h, m = hashContent(pieces, marks)
	}
	return h, m, &patchEntry{Dst: dst, Off: p, Data: cut(pieces, p, q), Size: size, Hash: h}, tx.checkBase(name, b, p, !ok)
}

// heldMids are the saved sha256 states of b that give, over the rest of
// b, the hash of b. A stamp's states are believed only as far as the
// log's head records their digest, and an entry an agent appended in its
// own session could record a forged one; for a base whose bytes the drift
// check hashed (checked) the content is the log's, and this costs the hash
// of each state's tail (the file is under copyLimit).
func heldMids(b *base) []mid {
	var held []mid
	for _, m := range b.mids {
		if b.resumesTo(&m) == b.hash {
			held = append(held, m)
		}
	}
	return held
}

// resumesTo is the hash of b's content resumed from the saved state m over
// the rest of b ("" when m cannot be resumed from).
func (b *base) resumesTo(m *mid) string {
	mh := newMidHasher(m, nil)
	if mh == nil {
		return ""
	}
	mh.Write(b.data[m.At:])
	return mh.sum()
}

// checkTailMax bounds what checkBase hashes of a base beyond what the
// commit hashes anyway.
const checkTailMax = 256 << 10

// checkBase makes sure that a base its stamp vouched for by identity alone
// (a file the drift check did not hash: over 1 MiB) holds the content the
// log recorded, as far as the commit takes bytes from it: the identity in
// .baton/stamps.json can be rewritten with an edit of the file, and the
// edit would otherwise be hashed into the log as baton's. Replaced whole
// (whole), the base is hashed whole; patched, from the saved state the new
// hash resumes from (which the log vouches for) to its end — unless that is
// over checkTailMax (the fixes after the reviews of a long reviews.json),
// which is left to verify. A file the log does not hash is not checked.
func (tx *Tx) checkBase(name string, b *base, p int64, whole bool) error {
	if b == nil || b.checked || b.hash == "" {
		return nil
	}
	h := ""
	if from := resumeFrom(b.mids, p); !whole && from != nil {
		if int64(len(b.data))-from.At > checkTailMax {
			return nil
		}
		h = b.resumesTo(from)
	} else {
		h = HashContent(b.data)
	}
	if h == b.hash {
		return nil
	}
	return tx.changedOutside(name)
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
