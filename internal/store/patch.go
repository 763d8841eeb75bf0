package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// In-place tail patches. A file baton's last transaction wrote (its stamp
// vouches for it) is mapped, not read, by a transaction; the new content
// shares the mapped bytes it keeps (the history) at the same offsets. The
// commit then writes only what changed: the journal records, for that file,
// the offset where the change starts, the changed bytes and the new size,
// and applying it is a write at that offset and a truncate to the size —
// idempotent, so a replay after a kill just does it again. Files that are
// not vouched for and changes of more than patchMax bytes are replaced by
// rename. Small files are patched too: the patch costs a write, a truncate
// and an fsync, where a replacement creates a temp file (an inode, which
// ext4 allocates by scanning past every recently deleted one), renames it
// and syncs the directory before and after the commit point.

// patchFrom is the size from which a vouched file is mapped; a smaller one
// is read whole (and still patched).
var patchFrom int64 = 64 << 10

// patching says whether vouched files are patched at all; tests turn it
// off to exercise replacement by rename (SetPatching).
var patching = true

// SetPatching turns patching in place on or off and returns the previous
// setting. For tests only: off, every written file is replaced by rename.
func SetPatching(on bool) bool {
	old := patching
	patching = on
	return old
}

// patchMax bounds the changed bytes a patch carries in the journal.
const patchMax = 1 << 20

// SetPatchFrom sets the size from which vouched files are mapped and
// returns the previous one. For tests only.
func SetPatchFrom(n int64) int64 {
	old := patchFrom
	patchFrom = n
	return old
}

// patchEntry is the journal's record of an in-place change: Data written at
// Off, then the file cut or extended to Size; Hash is the sha256 of the
// whole new content.
type patchEntry struct {
	Dst  string `json:"dst"`
	Off  int64  `json:"off"`
	Data []byte `json:"data"`
	Size int64  `json:"size"`
	Hash string `json:"sha256"`
}

// changed returns the range [p, q) of the content given in pieces that
// differs from base, and the content's size. A piece that is base's own
// bytes at the same offset compares in constant time (same memory).
func changed(base []byte, pieces [][]byte) (p, q, size int64) {
	p, q = -1, -1
	pos := int64(0)
	blen := int64(len(base))
	for _, piece := range pieces {
		n := int64(len(piece))
		if pos < blen {
			k := min(n, blen-pos)
			if i, j, diff := mismatch(piece[:k], base[pos:pos+k]); diff {
				if p < 0 || pos+i < p {
					p = pos + i
				}
				q = max(q, pos+j)
			}
		}
		if pos+n > blen {
			if p < 0 || max(pos, blen) < p {
				p = max(pos, blen)
			}
			q = pos + n
		}
		pos += n
	}
	if p < 0 { // nothing differs: at most a truncation
		p, q = min(pos, blen), min(pos, blen)
	}
	return p, q, pos
}

// mismatch returns the first differing index and the end of the last
// differing byte of two slices of equal length.
func mismatch(a, b []byte) (first, end int64, diff bool) {
	if bytes.Equal(a, b) {
		return 0, 0, false
	}
	const chunk = 4096
	i := 0
	for i+chunk <= len(a) && bytes.Equal(a[i:i+chunk], b[i:i+chunk]) {
		i += chunk
	}
	for i < len(a) && a[i] == b[i] {
		i++
	}
	j := len(a)
	for j-chunk >= i && bytes.Equal(a[j-chunk:j], b[j-chunk:j]) {
		j -= chunk
	}
	for j > i && a[j-1] == b[j-1] {
		j--
	}
	return int64(i), int64(j), true
}

// cut copies bytes [from, to) of the content given in pieces.
func cut(pieces [][]byte, from, to int64) []byte {
	out := make([]byte, 0, to-from)
	pos := int64(0)
	for _, piece := range pieces {
		n := int64(len(piece))
		if pos+n > from && pos < to {
			s, e := max(from-pos, 0), min(to-pos, n)
			out = append(out, piece[s:e]...)
		}
		pos += n
	}
	return out
}

// piecesFrom returns the content given in pieces from byte off on.
func piecesFrom(pieces [][]byte, off int64) [][]byte {
	pos := int64(0)
	for i, piece := range pieces {
		n := int64(len(piece))
		if pos+n > off {
			out := append([][]byte{piece[off-pos:]}, pieces[i+1:]...)
			return out
		}
		pos += n
	}
	return nil
}

// applyPatch makes dst hold the patched content; it is idempotent. The
// write and the truncate happen under the apply lock, so that a reader
// holding it shared never sees the file half-patched. It returns the file,
// open, for the caller to sync (with the commit's other files, see
// syncAll) and close.
func (s *Store) applyPatch(p patchEntry) (*os.File, error) {
	f, err := os.OpenFile(p.Dst, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	done, err := patched(f, p)
	if err == nil && !done {
		err = s.writePatch(f, p)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil // a replay's too: it is made durable
}

// writePatch writes p into f under the apply lock.
func (s *Store) writePatch(f *os.File, p patchEntry) error {
	unlock, err := s.applyLock()
	if err != nil {
		return err
	}
	err = fault(StepPatch)
	if err == nil {
		_, err = f.WriteAt(p.Data, p.Off)
	}
	if err == nil {
		err = fault(StepTruncate)
	}
	if err == nil {
		err = f.Truncate(p.Size)
	}
	unlock()
	if err != nil {
		return fmt.Errorf("patching %s: %w", p.Dst, err)
	}
	return nil
}

// patched says whether f already holds the patch (size and bytes); a file
// shorter than the patch's offset was cut outside baton.
func patched(f *os.File, p patchEntry) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if fi.Size() < p.Off {
		return false, fmt.Errorf("%s is shorter (%d bytes) than the change this journal makes at byte %d: it was cut outside baton; run 'baton verify'", p.Dst, fi.Size(), p.Off)
	}
	if fi.Size() != p.Size {
		return false, nil
	}
	have := make([]byte, len(p.Data))
	if _, err := f.ReadAt(have, p.Off); err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	return bytes.Equal(have, p.Data), nil
}
