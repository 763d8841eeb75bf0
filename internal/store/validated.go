package store

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
)

// Validated files: a lock-free reader that met a state file baton did not
// write (a file restored from git, a migrated project, a hand edit a
// person made) validates it in full before reading it. It then remembers
// that validation of a large file in .baton/validated.json under the file's identity
// (device, inode, size, modification and change time, as a stamp), so that
// the readers after it read the same version without validating it again.
//
// The record is a cache, like the stamps: lost, stale or unwritable (a
// read-only state directory), it only costs the next reader a validation.
// Any change to the file gives it a new identity, which no record matches.
// It lets only readers skip validation: a transaction validates every file
// its own stamp does not vouch for, the drift check never looks at it, and
// verify reads everything.

const validatedName = "validated.json"

// validatedLimit bounds the records kept: one per state file is the rule,
// and a file that is not one of them has no business here.
const validatedLimit = 16

// rememberFrom is the size from which a validation is worth noting: a
// smaller file is validated again faster than a note is written.
var rememberFrom int64 = 256 << 10

func (s *Store) validatedPath() string { return filepath.Join(s.BatonDir(), validatedName) }

// The note is its records' JSON, a newline, and the sha256 of that JSON:
// it is rewritten in place in a spare and exchanged (see replaceCache),
// and a reader that opened it before two exchanges may read it while it is
// rewritten; a note whose hash does not hold was torn, and is no note.
func (s *Store) readValidated() map[string]stamp {
	out := map[string]stamp{}
	b, err := ReadRegular(s.validatedPath())
	if err != nil || b == nil {
		return out
	}
	body, sum, ok := bytes.Cut(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	if !ok || HashContent(body) != string(sum) || json.Unmarshal(body, &out) != nil {
		return map[string]stamp{}
	}
	return out
}

// sealedNote is the note holding records' JSON b (see readValidated).
func sealedNote(b []byte) []byte {
	return append(append(append(b, '\n'), HashContent(b)...), '\n')
}

// Remember records that the state file name, as described by fi (the
// version the caller read and validated in full), is valid, with the facts
// a later reader may use (nil for none). Best effort: nothing is reported.
func (s *Store) Remember(name string, fi os.FileInfo, facts json.RawMessage) {
	if fi == nil || fi.Size() < rememberFrom {
		return
	}
	if _, err := os.Stat(s.BatonDir()); err != nil {
		return // no state directory of baton's here: create nothing
	}
	records := s.readValidated()
	if len(records) >= validatedLimit {
		records = map[string]stamp{}
	}
	records[s.key(name)] = stamp{ID: identity(fi), Facts: facts}
	b, err := json.Marshal(records)
	if err != nil {
		return
	}
	_ = replaceCache(s.validatedPath()+".spare", s.validatedPath(), sealedNote(b))
}

// validatedAs returns the facts a reader remembered with the file's
// current version.
func (s *Store) validatedAs(name string, fi os.FileInfo) (json.RawMessage, bool) {
	r, ok := s.readValidated()[s.key(name)]
	if !ok || r.ID != identity(fi) {
		return nil, false
	}
	return r.Facts, true
}

// writeReplace replaces path with data through a temp file and a rename,
// without syncing: for caches, which a crash may lose but never tear.
func writeReplace(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}
