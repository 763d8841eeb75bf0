package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/baton-cli/baton/internal/errs"
)

// The log's head (its last entry's sequence and hash) is anchored where
// deleting or truncating the log shows: in .baton/head.json, and in
// AnchorPath, a file outside the project (the person's state directory),
// which 'rm -rf .baton' leaves in place. Each commit that appends an entry
// replaces both whole; verify compares the log with them. An anchor that
// cannot be read (emptied, cut, replaced by something else) is rewritten by
// the next commit, which records that in its entry: deleting an anchor
// has the same effect, and a write is never refused for it.

// HeadName is the in-project anchor inside .baton/.
const HeadName = "head.json"

// Anchor is a recorded head of the log.
type Anchor struct {
	Seq  int    `json:"seq"`
	Hash string `json:"hash"`
	Dir  string `json:"state_dir"`
	// Genesis is the hash of the log's first entry: it names the log
	// wherever the project is moved, so that verify finds the anchors a
	// log left under its earlier paths.
	Genesis string `json:"genesis,omitempty"`
	// Base is the log's head when the anchor's path first recorded an
	// entry (seq 0: the log began there): what came before was written
	// under another path, which a move or a copy left behind.
	Base *AnchorBase `json:"base,omitempty"`
}

// AnchorBase is an entry of the log, by sequence number and hash.
type AnchorBase struct {
	Seq  int    `json:"seq"`
	Hash string `json:"hash"`
}

// AnchorNote is an anchor a commit rewrote though it did not hold the
// log's head, and why.
type AnchorNote struct {
	Path    string `json:"anchor"`
	Problem string `json:"problem"`
}

// anchorPaths are the anchors every append writes (creating them), then
// the watched ones, which it only updates where they exist.
func (s *Store) anchorPaths() (write, watch []string) {
	s.anchorsOnce.Do(func() {
		if s.ResolveAnchors == nil {
			return
		}
		if w, watch := s.ResolveAnchors(); len(w) > 0 || len(watch) > 0 {
			if len(w) > 0 {
				s.AnchorPath, s.MoreAnchors = w[0], w[1:]
			}
			s.WatchAnchors = watch
		}
	})
	write = []string{filepath.Join(s.BatonDir(), HeadName)}
	if s.AnchorPath != "" {
		write = append(write, s.AnchorPath)
	}
	write = append(write, s.MoreAnchors...)
	return write, s.WatchAnchors
}

// writeAnchors records e as the log's head (best effort: a lost anchor
// only weakens what verify can tell). Each anchor is replaced whole (temp
// file, sync, rename), so that a crash leaves the old head or the new one;
// a watched anchor is replaced only where one exists. base is the log's
// head before the transaction's entries: an anchor new to this log starts
// its path's history there.
func (s *Store) writeAnchors(e *Event, base AnchorBase) {
	genesis := e.Hash
	if e.Seq > 1 {
		genesis = s.Genesis()
	}
	if b := s.PathBase(); b != nil {
		base = *b // the same log's: its path's history began where its anchors say
	}
	write, watch := s.anchorPaths()
	for i, p := range append(write, watch...) {
		if fault(StepAnchor) != nil {
			continue
		}
		if i >= len(write) && !exists(p) {
			continue
		}
		an := Anchor{Seq: e.Seq, Hash: e.Hash, Dir: s.Dir, Genesis: genesis, Base: &base}
		if old, problem := readAnchor(p); problem == "" && old != nil && old.Genesis == genesis && old.Base != nil {
			an.Base = old.Base
		}
		b, _ := json.Marshal(an)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			continue
		}
		_ = WriteFileAtomic(p, append(b, '\n'), 0o600)
	}
}

// readAnchor reads the anchor at p (nil when there is none), or says why
// the file there is none.
func readAnchor(p string) (*Anchor, string) {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ""
	}
	if err == nil && !fi.Mode().IsRegular() {
		return nil, describeMode(fi.Mode()) + ", not a regular file"
	}
	var b []byte
	if err == nil {
		b, err = ReadRegular(p)
	}
	if err != nil {
		return nil, "unreadable: " + err.Error()
	}
	if len(b) == 0 {
		return nil, "empty (0 bytes)"
	}
	var a Anchor
	if err := json.Unmarshal(b, &a); err != nil || a.Seq < 0 {
		return nil, fmt.Sprintf("not an anchor (%d bytes that do not decode as one)", len(b))
	}
	return &a, ""
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

// AnchorAt is an anchor found, and the file it was read from.
type AnchorAt struct {
	Path string
	Anchor
}

// anchorFiles are the paths of every anchor, written and watched, in order.
func (s *Store) anchorFiles() []string {
	write, watch := s.anchorPaths()
	paths := append(append([]string(nil), write...), watch...)
	sort.Strings(paths)
	return paths
}

// Anchors returns each anchor found, in the order of their paths, and the
// anchor files that are none (see readAnchor).
func (s *Store) Anchors() ([]AnchorAt, []AnchorNote) {
	var out []AnchorAt
	var broken []AnchorNote
	for _, p := range s.anchorFiles() {
		a, problem := readAnchor(p)
		switch {
		case problem != "":
			broken = append(broken, AnchorNote{Path: p, Problem: problem})
		case a != nil:
			out = append(out, AnchorAt{Path: p, Anchor: *a})
		}
	}
	return out, broken
}

// LogGap is an anchor ahead of the log: the log ends before the head an
// anchor recorded, or holds another entry at that sequence number. Entries
// were removed or rewritten outside baton.
type LogGap struct {
	Path   string `json:"anchor"`
	Anchor Anchor `json:"anchored"`
	Seq    int    `json:"log_seq"` // the log's last sequence number (0: empty or missing)
}

// logGap compares the log's last entry with every anchor that can be
// read. It reads the entry at an anchor's sequence number only when the log
// reaches it and its last entry is not that one.
func (s *Store) logGap(last *Event) (*LogGap, error) {
	seq, hash := 0, ""
	if last != nil {
		seq, hash = last.Seq, last.Hash
	}
	anchors, _ := s.Anchors()
	return s.gapIn(anchors, seq, hash)
}

// gapIn is logGap over anchors, for a log whose last entry has sequence
// number seq and hash hash (0 and "" for none).
func (s *Store) gapIn(anchors []AnchorAt, seq int, hash string) (*LogGap, error) {
	for _, an := range anchors {
		switch {
		case an.Seq > seq:
		case an.Seq == seq && an.Hash != hash && seq > 0:
		case an.Seq < seq && an.Seq > 0:
			h, err := s.entryHash(an.Seq)
			if err != nil {
				return nil, err
			}
			if h == an.Hash {
				continue
			}
		default:
			continue
		}
		return &LogGap{Path: an.Path, Anchor: an.Anchor, Seq: seq}, nil
	}
	return nil, nil
}

// entryHash returns the hash of the log's entry with sequence number seq
// ("" when the log has none).
func (s *Store) entryHash(seq int) (string, error) {
	events, err := s.ReadEvents()
	if err != nil {
		return "", err
	}
	if seq < 1 || seq > len(events) {
		return "", nil
	}
	return events[seq-1].Hash, nil
}

// LogGap reports an anchor ahead of the log (nil when every anchor is at or
// behind the log's head and agrees with it).
func (s *Store) LogGap() (*LogGap, error) {
	last, _, err := s.lastEvent()
	if err != nil {
		return nil, err
	}
	return s.logGap(last)
}

// LogAhead reports an anchor ahead of the log's last committed entry, or
// at it with another hash: what a lock-free reader checks before it
// answers from a state file (a state put back together with its log). An
// anchor behind the log (left by calls with another state home) is left to
// the writes and verify, which read the log whole to check it; an anchor
// that cannot be read is theirs to report too.
func (s *Store) LogAhead() (*LogGap, error) {
	anchors, _ := s.Anchors()
	last, err := s.committedHead()
	if err != nil || last == nil {
		return nil, nil
	}
	for _, an := range anchors {
		if an.Seq > last.Seq || an.Seq == last.Seq && an.Hash != last.Hash {
			return &LogGap{Path: an.Path, Anchor: an.Anchor, Seq: last.Seq}, nil
		}
	}
	return nil, nil
}

// gapError is the refusal of a write that would chain new entries to a log
// whose anchored entries are gone: the write would overwrite the anchor, the
// only evidence of what was removed.
func gapError(s *Store, g *LogGap) error {
	return errs.New(errs.Invalid, "the audit log %s ends at entry %d, but %s records its head at entry %d: entries were removed or rewritten outside baton, so nothing was written; stop and report it: a person must look (see 'baton verify')", s.EventsPath(), g.Seq, g.Path, g.Anchor.Seq)
}
