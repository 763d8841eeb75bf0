package store

import (
	"errors"
	"io/fs"
	"os"
)

// base is a file baton's last transaction wrote (its stamp vouches for
// it) as a transaction found it, to be patched in place: mapped when it is
// large (the mapping lives until the transaction ends), else read.
type base struct {
	data    []byte
	id      string // the file's identity when mapped
	hash    string // its content's hash, as stamped
	mids    []mid  // sha256 states saved at record boundaries
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
		tx.keepBase(name, &base{data: r.data, id: st.ID, hash: st.Hash, mids: st.Mids, release: func() {}})
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
		return data, nil, err
	}
	// read, not mapped, and patched all the same: a replacement would
	// create a file (and sync two directories) for every small write
	tx.keepBase(name, &base{data: data, id: st.ID, hash: st.Hash, mids: st.Mids, release: func() {}})
	return data, &st, nil
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
// states saved at its record boundaries.
func (tx *Tx) plan(name, dst string, pieces [][]byte) (string, []mid, *patchEntry) {
	marks := marksOf(tx.facts[name])
	b := tx.bases[name]
	if b == nil || !patching || !sameID(dst, b.id) {
		h, m := hashContent(pieces, marks)
		return h, m, nil
	}
	p, q, size := changed(b.data, pieces)
	if q-p > patchMax {
		h, m := hashContent(pieces, marks)
		return h, m, nil
	}
	h, m, ok := hashPatched(b.data, b.mids, p, pieces, marks)
	if !ok {
		h, m = hashContent(pieces, marks)
	}
	return h, m, &patchEntry{Dst: dst, Off: p, Data: cut(pieces, p, q), Size: size, Hash: h}
}

// sameID says whether path still has identity id.
func sameID(path, id string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && identity(fi) == id
}
