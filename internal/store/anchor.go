package store

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"

	"github.com/baton-cli/baton/internal/errs"
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
	// Genesis is the hash of the log's first entry: it names the log
	// wherever the project is moved, so that verify finds the anchors a
	// log left under its earlier paths.
	Genesis string `json:"genesis,omitempty"`
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

// writeAnchor records e as the log's head (best effort: a lost anchor
// only weakens what verify can tell). Each anchor is replaced whole (temp
// file, sync, rename), so that a crash leaves the old head or the new one;
// a watched anchor is replaced only where one exists.
func (s *Store) writeAnchor(e *Event) {
	genesis := e.Hash
	if e.Seq > 1 {
		genesis = s.Genesis()
	}
	b, _ := json.Marshal(Anchor{Seq: e.Seq, Hash: e.Hash, Dir: s.Dir, Genesis: genesis})
	b = append(b, '\n')
	write, watch := s.anchorPaths()
	for i, p := range append(write, watch...) {
		if fault(StepAnchor) != nil {
			continue
		}
		if i >= len(write) && !exists(p) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			continue
		}
		_ = WriteFileAtomic(p, b, 0o600)
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

// Anchors returns each anchor found, in the order of their paths.
func (s *Store) Anchors() ([]AnchorAt, error) {
	var out []AnchorAt
	for _, p := range s.anchorFiles() {
		b, err := ReadRegular(p) // a FIFO here would block a plain read
		if err != nil {
			return out, err
		}
		if b == nil {
			continue
		}
		var a Anchor
		if err := json.Unmarshal(b, &a); err != nil {
			return out, errors.New(p + ": unreadable anchor: " + err.Error())
		}
		out = append(out, AnchorAt{Path: p, Anchor: a})
	}
	return out, nil
}

// WriteAnchorForBench records a head, for benchmarks of the write cost.
func WriteAnchorForBench(s *Store, seq int, hash string) { s.writeAnchor(&Event{Seq: seq, Hash: hash}) }

// LogGap is an anchor ahead of the log: the log ends before the head an
// anchor recorded, or holds another entry at that sequence number. Entries
// were removed or rewritten outside baton.
type LogGap struct {
	Path   string `json:"anchor"`
	Anchor Anchor `json:"anchored"`
	Seq    int    `json:"log_seq"` // the log's last sequence number (0: empty or missing)
}

// logGap compares the log's last entry with every anchor. It reads the
// entry at an anchor's sequence number only when the log reaches it and
// its last entry is not that one.
func (s *Store) logGap(last *Event) (*LogGap, error) {
	seq, hash := 0, ""
	if last != nil {
		seq, hash = last.Seq, last.Hash
	}
	return s.logGapAt(seq, hash)
}

// logGapAt is logGap of a log whose last entry has sequence number seq and
// hash hash (0 and "" for none).
func (s *Store) logGapAt(seq int, hash string) (*LogGap, error) {
	anchors, err := s.Anchors()
	if err != nil {
		return nil, errs.New(errs.Invalid, "%v: nothing was written; run 'baton verify'", err)
	}
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
	anchors, err := s.Anchors()
	if err != nil {
		return nil, nil
	}
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
	return errs.New(errs.Invalid, "the audit log %s ends at entry %d, but %s records its head at entry %d: entries were removed or rewritten outside baton, so nothing was written; stop and report it — a person restores the log from .baton/backup/ or records the loss with 'baton reconcile'", s.EventsPath(), g.Seq, g.Path, g.Anchor.Seq)
}
