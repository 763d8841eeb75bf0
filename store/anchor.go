package store

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// The log's head (its last entry's sequence and hash) is anchored where
// deleting or truncating the log shows: in .baton/head.json, and in
// AnchorPath, a file outside the project (the person's state directory),
// which 'rm -rf .baton' leaves in place. Each commit that appends an entry
// rewrites both; verify compares the log with them.

// HeadName is the in-project anchor inside .baton/.
const HeadName = "head.json"

// Anchor is a recorded head of the log.
type Anchor struct {
	Seq  int    `json:"seq"`
	Hash string `json:"hash"`
	Dir  string `json:"state_dir"`
}

func (s *Store) anchorPaths() []string {
	paths := []string{filepath.Join(s.BatonDir(), HeadName)}
	if s.AnchorPath != "" {
		paths = append(paths, s.AnchorPath)
	}
	return paths
}

// writeAnchor records e as the log's head (best effort: a lost anchor only
// weakens what verify can tell).
func (s *Store) writeAnchor(e *Event) {
	b, _ := json.Marshal(Anchor{Seq: e.Seq, Hash: e.Hash, Dir: s.Dir})
	for _, p := range s.anchorPaths() {
		if p != filepath.Join(s.BatonDir(), HeadName) {
			_ = os.MkdirAll(filepath.Dir(p), 0o700)
		}
		tmp := p + ".tmp"
		if os.WriteFile(tmp, b, 0o600) == nil {
			_ = os.Rename(tmp, p)
		}
	}
}

// Anchors returns each anchor found, by path.
func (s *Store) Anchors() (map[string]Anchor, error) {
	out := map[string]Anchor{}
	for _, p := range s.anchorPaths() {
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, err
		}
		var a Anchor
		if err := json.Unmarshal(b, &a); err != nil {
			return out, errors.New(p + ": unreadable anchor: " + err.Error())
		}
		out[p] = a
	}
	return out, nil
}
