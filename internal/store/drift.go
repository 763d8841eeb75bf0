package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Drift is the check that nothing changed between two transactions: every
// tracked file (the state files and baton's control files) must hold what
// the last audit event recorded. A tracked name ending in "/" is a
// directory whose every file counts (the prompt overrides).

// Drift is one tracked file whose content is not what the last event
// recorded.
type Drift struct {
	File       string `json:"file"`
	Recorded   string `json:"recorded"` // the hash the event recorded ("" = no file)
	Now        string `json:"now"`      // the hash of the content now
	EventID    string `json:"event_id"`
	Timestamp  string `json:"timestamp"`
	Difference string `json:"difference"`
}

// Message says what changed, for a person or an agent.
func (d Drift) Message() string {
	if IsRef(d.File) {
		return fmt.Sprintf("%s (git) moved outside baton after event %s (%s): %s", strings.TrimPrefix(d.File, "git:"), d.EventID, d.Timestamp, d.Difference)
	}
	if d.EventID == "" {
		return fmt.Sprintf("%s was changed outside baton: %s", d.File, d.Difference)
	}
	return fmt.Sprintf("%s was changed outside baton after event %s (%s): %s", d.File, d.EventID, d.Timestamp, d.Difference)
}

func isDirName(name string) bool { return strings.HasSuffix(name, "/") }

// IsRef says whether a tracked name is a git ref ("git:..."), whose value,
// the commit it points at, Store.Probe reads.
func IsRef(name string) bool { return strings.HasPrefix(name, "git:") }

// Unknown is what Probe returns for a ref it cannot read from here (the
// command runs outside the repository): it is not compared, and the log
// keeps the value it had.
const Unknown = "?"

// dirListing maps each regular file of a directory to its content hash.
func dirListing(path string) (map[string]string, error) {
	entries, err := os.ReadDir(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := ReadRegular(filepath.Join(path, e.Name()))
		if err != nil {
			return nil, err
		}
		out[e.Name()] = HashContent(b)
	}
	return out, nil
}

// listingHash is the hash recorded for a directory: "" when it holds no
// file, else the sha256 of its sorted names and content hashes.
func listingHash(list map[string]string) string {
	if len(list) == 0 {
		return ""
	}
	names := make([]string, 0, len(list))
	for n := range list {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s\x00%s\n", n, list[n])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// currentHash hashes a tracked file (or directory, or ref) as it is now,
// as committed (see ReadPath), and returns the content of a file.
func (s *Store) currentHash(name string) (string, []byte, error) {
	if IsRef(name) {
		if s.Probe == nil {
			return "", nil, nil
		}
		v, err := s.Probe(name)
		return v, nil, err
	}
	if isDirName(name) {
		list, err := dirListing(s.Path(name))
		return listingHash(list), nil, err
	}
	data, err := s.readCommitted(name)
	if err != nil || data == nil {
		return "", nil, err
	}
	return HashContent(data), data, nil
}

// CheckDrift compares every tracked file with the last committed event of
// the log and returns the files that differ (with that event). A file the
// last event does not record (a log older than the file's tracking) is not
// compared.
func (s *Store) CheckDrift() ([]Drift, *Event, error) {
	d, last, _, err := s.checkDrift()
	return d, last, err
}

// checkDrift is CheckDrift that also gives the content of each file it read.
func (s *Store) checkDrift() ([]Drift, *Event, map[string][]byte, error) {
	last, err := s.committedHead()
	if err != nil || last == nil {
		if err == nil && s.hadLog() {
			return []Drift{{File: ".baton/" + EventsName, Difference: "the audit log is gone (deleted or emptied) while baton's records of the files remain"}}, nil, nil, nil
		}
		return nil, last, nil, err
	}
	read := map[string][]byte{}
	var out []Drift
	for _, name := range s.Tracked {
		want, ok := last.Metadata.Files[s.key(name)]
		if !ok {
			continue
		}
		now, data, err := s.currentHash(name)
		if err != nil {
			return nil, last, nil, err
		}
		if data != nil {
			read[name] = data
		}
		if now == want || now == Unknown {
			continue
		}
		d := Drift{File: s.key(name), Recorded: want, Now: now, EventID: last.EventID, Timestamp: last.Timestamp}
		d.Difference = s.difference(name, want, now, data)
		out = append(out, d)
	}
	return out, last, read, nil
}

// hadLog says whether a log's commits left their traces here: the
// anchor in .baton/, or a recorded copy (both written after a commit
// point).
func (s *Store) hadLog() bool {
	if exists(filepath.Join(s.BatonDir(), HeadName)) {
		return true
	}
	entries, _ := os.ReadDir(s.recordedDir())
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			return true
		}
	}
	return false
}

// recordedDir holds the versions of the tracked files the last event
// recorded.
func (s *Store) recordedDir() string { return filepath.Join(s.BatonDir(), "recorded") }

// recordedPath is where the version of a file the last event recorded is
// kept: a copy written in the transaction that recorded it, so that a
// change made outside baton since can be shown as a difference.
func (s *Store) recordedPath(name string) string {
	return filepath.Join(s.recordedDir(), strings.NewReplacer("/", "_", "\\", "_").Replace(s.key(name)))
}

// difference summarizes how a file differs from its recorded version.
func (s *Store) difference(name, want, now string, data []byte) string {
	if IsRef(name) {
		short := func(h string) string {
			if h == "" {
				return "no commit"
			}
			return h[:min(7, len(h))]
		}
		return fmt.Sprintf("it was at %s, and is at %s now", short(want), short(now))
	}
	if isDirName(name) {
		var before map[string]string
		if b, err := ReadRegular(s.recordedPath(name)); err != nil || json.Unmarshal(b, &before) != nil || listingHash(before) != want {
			before = nil
		}
		after, _ := dirListing(s.Path(name))
		return listingDifference(before, after)
	}
	switch {
	case want == "" && now != "":
		return "it did not exist then and was created outside baton"
	case now == "":
		return "it was deleted"
	}
	old, ok := s.Recorded(name, want)
	if !ok {
		return fmt.Sprintf("its content changed (now %d bytes); the recorded version is in the audit log only as a hash", len(data))
	}
	return lineDifference(old, data)
}

func listingDifference(before, after map[string]string) string {
	var parts []string
	for n, h := range after {
		if b, ok := before[n]; !ok {
			parts = append(parts, n+" added")
		} else if b != h {
			parts = append(parts, n+" changed")
		}
	}
	for n := range before {
		if _, ok := after[n]; !ok {
			parts = append(parts, n+" removed")
		}
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "its files changed"
	}
	return strings.Join(parts, ", ")
}

// lineDifference names the first line that differs and how many lines
// changed.
func lineDifference(old, now []byte) string {
	a, b := bytes.Split(old, []byte("\n")), bytes.Split(now, []byte("\n"))
	p := 0
	for p < len(a) && p < len(b) && bytes.Equal(a[p], b[p]) {
		p++
	}
	q := 0
	for q < len(a)-p && q < len(b)-p && bytes.Equal(a[len(a)-1-q], b[len(b)-1-q]) {
		q++
	}
	removed, added := a[p:len(a)-q], b[p:len(b)-q]
	line := func(l [][]byte) string {
		if len(l) == 0 {
			return "(nothing)"
		}
		t := strings.TrimSpace(string(l[0]))
		if len(t) > 80 {
			t = t[:77] + "..."
		}
		return fmt.Sprintf("%q", t)
	}
	msg := fmt.Sprintf("line %d was %s, now %s", p+1, line(removed), line(added))
	if n := max(len(removed), len(added)); n > 1 {
		msg += fmt.Sprintf(" (%d lines removed, %d added)", len(removed), len(added))
	}
	return msg
}

// Drift compares, inside the lock, every tracked file with the last event
// (see CheckDrift); the files it read are the ones the transaction reads,
// so that what it validates and writes over is what was compared.
func (tx *Tx) Drift() ([]Drift, error) {
	d, _, read, err := tx.s.checkDrift()
	for n, b := range read {
		if _, ok := tx.read[n]; !ok {
			tx.read[n] = b
		}
	}
	return d, err
}

// Adopt makes the transaction's event record the named files as they are
// now (a change made outside baton that a person reconciled, or a state
// file an INITIALIZER wrote by hand), and makes it log an event.
func (tx *Tx) Adopt(names ...string) {
	if tx.adopt == nil {
		tx.adopt = map[string]bool{}
	}
	for _, n := range names {
		tx.adopt[n] = true
	}
}

// Recorded returns the version of a tracked file that the last event
// recorded (hash), when it is still kept in .baton/recorded: what baton
// wrote, whatever was done to the file since. It serves the difference a
// drift message shows; no answer is computed from it.
func (s *Store) Recorded(name, hash string) ([]byte, bool) {
	if hash == "" {
		return nil, false
	}
	b, err := ReadRegular(s.recordedPath(name))
	if err != nil || HashContent(b) != hash {
		return nil, false
	}
	return b, true
}

// Replaced compares a state file a reader read (data; nil: missing) with
// the version the last committed event recorded, and returns the
// difference (nil when it is that version, or the log does not record it,
// or records it as absent).
func (s *Store) Replaced(name string, data []byte) (*Drift, error) {
	last, err := s.committedHead()
	if err != nil || last == nil {
		return nil, nil // the log's own problems are verify's and the next write's to report
	}
	want, ok := last.Metadata.Files[s.key(name)]
	if !ok || want == "" {
		return nil, nil
	}
	now := HashContent(data)
	if now == want {
		return nil, nil
	}
	d := &Drift{File: s.key(name), Recorded: want, Now: now, EventID: last.EventID, Timestamp: last.Timestamp}
	d.Difference = s.difference(name, want, now, data)
	return d, nil
}
