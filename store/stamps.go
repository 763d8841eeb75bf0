package store

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Stamps let baton skip re-reading what it already knows about a file it
// wrote itself. After every commit the writer records each file's identity
// (device, inode, size, modification and change time) in .baton/stamps.json,
// with the hash of its content and facts the domain packages derived while
// writing it (record counts, the largest id, where the last record sits). A
// reader whose file still has that identity knows it holds what a validated
// transaction wrote and may use the facts; the drift check takes the hash
// instead of reading the file; a file changed any other way is read and
// validated in full. The stamps are a cache: lost or stale, they only cost
// a full read (verify never uses them).

const stampsName = "stamps.json"

type stamp struct {
	ID    string          `json:"id"`
	Hash  string          `json:"hash,omitempty"`
	Facts json.RawMessage `json:"facts,omitempty"`
}

func (s *Store) stampsPath() string { return filepath.Join(s.BatonDir(), stampsName) }

// identity is what a stamp compares.
func identity(fi os.FileInfo) string { return fileID(fi) }

func (s *Store) readStamps() map[string]stamp {
	out := map[string]stamp{}
	if b, err := ReadRegular(s.stampsPath()); err == nil && b != nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

// recordStamps stores the identity of the named files as they are now,
// with their facts and the hashes the commit's event recorded (none
// without an event). Each file as recorded is also linked into
// .baton/recorded, so that a later change outside baton can be shown as a
// difference. Called under the lock, after a commit.
func (s *Store) recordStamps(names []string, facts map[string]json.RawMessage, hashes map[string]string) {
	stamps := s.readStamps()
	for _, n := range names {
		if IsRef(n) {
			continue
		}
		if isDirName(n) {
			list, _ := dirListing(s.Path(n))
			b, _ := json.Marshal(list)
			stamps[s.key(n)] = stamp{Hash: hashes[s.key(n)], Facts: b}
			continue
		}
		s.linkRecorded(n) // first: a new link changes the file's change time
		if fi, err := os.Stat(s.Path(n)); err == nil {
			stamps[s.key(n)] = stamp{ID: identity(fi), Hash: hashes[s.key(n)], Facts: facts[n]}
		} else {
			delete(stamps, s.key(n))
		}
	}
	b, _ := json.Marshal(stamps)
	tmp := s.stampsPath() + ".tmp"
	if os.WriteFile(tmp, b, 0o644) == nil {
		_ = os.Rename(tmp, s.stampsPath())
	}
}

// Trusted reports whether the file name, as described by fi, is the one
// baton's last transaction wrote, and returns the facts recorded with it.
func (s *Store) Trusted(name string, fi os.FileInfo) (json.RawMessage, bool) {
	st, ok := s.readStamps()[s.key(name)]
	if !ok || fi == nil || st.ID != identity(fi) {
		return nil, false
	}
	return st.Facts, true
}

// readStamped reads a file and says whether its stamp matches (with the
// recorded facts). A missing file is (nil, nil, false, nil).
func (s *Store) readStamped(name string) ([]byte, json.RawMessage, bool, error) {
	f, fi, err := OpenRegular(s.Path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	defer f.Close()
	data, err := readAll(f, fi.Size())
	if err != nil {
		return nil, nil, false, err
	}
	facts, ok := s.Trusted(name, fi)
	return data, facts, ok, nil
}
