package store

import (
	"bytes"
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

// anchorSize is the fixed length of an anchor file: each write overwrites
// the whole record in place (one small write, no rename), padded with
// spaces, so that it costs little on every command.
const anchorSize = 512

// writeAnchor records e as the log's head (best effort: a lost anchor only
// weakens what verify can tell).
func (s *Store) writeAnchor(e *Event) {
	b, _ := json.Marshal(Anchor{Seq: e.Seq, Hash: e.Hash, Dir: s.Dir})
	if len(b) < anchorSize {
		b = append(b, bytes.Repeat([]byte(" "), anchorSize-len(b)-1)...)
		b = append(b, '\n')
	}
	for _, p := range s.anchorPaths() {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o600)
		if errors.Is(err, fs.ErrNotExist) {
			_ = os.MkdirAll(filepath.Dir(p), 0o700)
			f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o600)
		}
		if err != nil {
			continue
		}
		_, _ = f.WriteAt(b, 0)
		f.Close()
	}
}

// LogHead returns the sequence and hash of the log's last entry (0 and ""
// for an empty log), reading only its tail.
func (s *Store) LogHead() (int, string, error) {
	e, _, err := s.lastEvent()
	if err != nil || e == nil {
		return 0, "", err
	}
	return e.Seq, e.Hash, nil
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

// WriteAnchorForBench records a head, for benchmarks of the write cost.
func WriteAnchorForBench(s *Store, seq int, hash string) { s.writeAnchor(&Event{Seq: seq, Hash: hash}) }
