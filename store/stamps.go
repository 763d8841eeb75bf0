package store

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Stamps let readers skip validating a file baton itself wrote. After every
// commit the writer records each file's identity (inode, size, modification
// time) in .baton/stamps.json; a reader whose file still has that identity
// knows it holds what a validated transaction wrote, and a file changed any
// other way is validated in full before it is read. The stamps are a cache:
// lost or stale, they only cost a validation.

const stampsName = "stamps.json"

func (s *Store) stampsPath() string { return filepath.Join(s.BatonDir(), stampsName) }

// identity is what a stamp compares.
func identity(fi os.FileInfo) string {
	return fmt.Sprintf("%d:%d:%d", inode(fi), fi.Size(), fi.ModTime().UnixNano())
}

func (s *Store) readStamps() map[string]string {
	out := map[string]string{}
	if b, err := os.ReadFile(s.stampsPath()); err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

// recordStamps stores the identity of the named files as they are now.
// Called under the lock, after a commit.
func (s *Store) recordStamps(names []string) {
	stamps := s.readStamps()
	for _, n := range names {
		if fi, err := os.Stat(s.Path(n)); err == nil {
			stamps[n] = identity(fi)
		} else {
			delete(stamps, n)
		}
	}
	b, _ := json.Marshal(stamps)
	tmp := s.stampsPath() + ".tmp"
	if os.WriteFile(tmp, b, 0o644) == nil {
		_ = os.Rename(tmp, s.stampsPath())
	}
}

// Trusted reports whether the file name, as described by fi, is the one
// baton's last transaction wrote.
func (s *Store) Trusted(name string, fi os.FileInfo) bool {
	want, ok := s.readStamps()[name]
	return ok && want == identity(fi)
}
