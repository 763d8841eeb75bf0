package store

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Genesis returns the hash of the log's first entry ("" for none), reading
// only the log's first line.
func (s *Store) Genesis() string {
	f, err := os.Open(s.EventsPath())
	if err != nil {
		return ""
	}
	defer f.Close()
	line := firstLine(f, 64<<10)
	var e genesisEntry
	if json.Unmarshal(line, &e) != nil || e.Seq != 1 {
		return ""
	}
	return e.Hash
}

// genesisEntry is what Genesis reads of the log's first entry.
type genesisEntry struct {
	Seq  int    `json:"seq"`
	Hash string `json:"hash"`
}

// firstLine reads f's first line (at most max bytes of it), a page at a
// time: an entry is a kilobyte or two, and every commit reads it.
func firstLine(f *os.File, max int) []byte {
	buf := make([]byte, 0, 4<<10)
	for len(buf) < max {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):min(cap(buf), max)])
		if i := bytes.IndexByte(buf[len(buf):len(buf)+n], '\n'); i >= 0 {
			return buf[:len(buf)+i]
		}
		buf = buf[:len(buf)+n]
		if err != nil || n == 0 {
			break
		}
	}
	return buf
}

// StrayAnchors returns the anchors in dirs (the directories that hold the
// anchors outside projects) of this log (the same genesis) written under
// another path than this store's own anchors: the anchors the project
// left where it was before it was moved (or reached by another path).
func (s *Store) StrayAnchors(dirs []string) []AnchorAt {
	genesis := s.Genesis()
	if genesis == "" {
		return nil
	}
	own := map[string]bool{}
	write, watch := s.anchorPaths()
	for _, p := range append(write, watch...) {
		own[filepath.Clean(p)] = true
	}
	var out []AnchorAt
	seen := map[string]bool{}
	for _, d := range dirs {
		names, _ := filepath.Glob(filepath.Join(d, "*.json"))
		sort.Strings(names)
		for _, p := range names {
			p = filepath.Clean(p)
			if own[p] || seen[p] || !strings.HasSuffix(p, ".json") {
				continue
			}
			seen[p] = true
			if a, problem := readAnchor(p); problem == "" && a != nil && a.Genesis == genesis {
				out = append(out, AnchorAt{Path: p, Anchor: *a})
			}
		}
	}
	return out
}

// PathBase is where this path's history of the log began, as its own
// anchors outside the project record it (nil when none does; the anchor in
// .baton/ moves with the project, so it does not say).
func (s *Store) PathBase() *AnchorBase {
	genesis := s.Genesis()
	write, watch := s.anchorPaths()
	for _, p := range append(append([]string(nil), write[1:]...), watch...) {
		if a, problem := readAnchor(p); problem == "" && a != nil && a.Genesis == genesis && a.Base != nil {
			return a.Base
		}
	}
	return nil
}

// AnchorDirs are the directories this store's anchors outside the project
// live in.
func (s *Store) AnchorDirs() []string {
	write, watch := s.anchorPaths()
	var out []string
	seen := map[string]bool{}
	for _, p := range append(write, watch...) {
		d := filepath.Dir(p)
		if filepath.Base(d) != "anchors" || seen[d] { // the in-project head.json is not among them
			continue
		}
		seen[d] = true
		out = append(out, d)
	}
	return out
}
