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
		b, err := os.ReadFile(filepath.Join(path, e.Name()))
		if err != nil {
			return nil, err
		}
		// plain sha256, as every log recorded it: a listing's files are
		// never patched, so blocks would gain nothing
		sum := sha256.Sum256(b)
		out[e.Name()] = hex.EncodeToString(sum[:])
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

// currentHash hashes a tracked file (or directory) as it is now. With
// stamps, a file larger than copyLimit whose identity matches its stamp is
// taken to hold the content the stamp hashed, unread. A smaller file is
// always hashed: stamps.json is no secret, so an edit followed by a
// rewritten, resealed stamp would otherwise pass the next write unseen (verify
// hashes every file). The content read, if any, is returned when it is not
// the stamped one.
func (s *Store) currentHash(name string, stamps map[string]stamp) (string, []byte, error) {
	h, r, err := s.hashNow(name, stamps)
	if r.stamped {
		return h, nil, err
	}
	return h, r.data, err
}

// hashNow is currentHash that also says which version of the file the
// content read is (see driftRead).
func (s *Store) hashNow(name string, stamps map[string]stamp) (string, driftRead, error) {
	if IsRef(name) {
		if s.Probe == nil {
			return "", driftRead{}, nil
		}
		v, err := s.Probe(name)
		return v, driftRead{}, err
	}
	path := s.Path(name)
	if isDirName(name) {
		list, err := dirListing(path)
		return listingHash(list), driftRead{}, err
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", driftRead{}, nil
	}
	if err != nil {
		return "", driftRead{}, err
	}
	st, stamped := stamps[s.key(name)]
	stamped = stamped && st.Hash != "" && st.ID == identity(fi)
	if stamped && fi.Size() > copyLimit {
		return st.Hash, driftRead{}, nil
	}
	r, err := readStableInto(path, s.takeRoom(name))
	if err != nil || r.data == nil {
		return "", driftRead{}, err
	}
	h, sums := contentHash(r.data)
	r.sums = sums
	if !stamped || h != st.Hash {
		return h, r, nil
	}
	// as stamped: the transaction takes these bytes, not the file read
	// again (an edit made since would be read unhashed), patches them in
	// place, and may trust their facts when the log vouches for the stamp
	// (verifiedStamp); a stamp with no facts (a file written without them,
	// or hashed as it was when a transaction adopted it) gets them from the
	// transaction that validates it (Drift vouches for it)
	r.stamped, r.hash = true, st.Hash
	return st.Hash, r, nil
}

// CheckDrift compares every tracked file with the last event of the log and
// returns the files that differ (with that event). A file the last event
// does not record (a log older than the file's tracking) is not compared.
// Verify calls it without the stamps, so that every file is read.
func (s *Store) CheckDrift(useStamps bool) ([]Drift, *Event, error) {
	d, last, _, err := s.checkDrift(useStamps)
	return d, last, err
}

func (s *Store) checkDrift(useStamps bool) ([]Drift, *Event, map[string]driftRead, error) {
	last, _, err := s.lastEvent()
	if err != nil {
		return nil, last, nil, err
	}
	if last == nil {
		if _, err := os.Stat(s.stampsPath()); err == nil {
			return []Drift{{File: ".baton/" + EventsName, Difference: "the audit log is gone (deleted or emptied) while baton's records of the files remain"}}, nil, nil, nil
		}
		return nil, nil, nil, nil
	}
	var stamps map[string]stamp
	read := map[string]driftRead{}
	var out []Drift
	sf, ok := s.loadStamps() // torn or rewritten stamps are lost: every file is read
	if useStamps && ok && sf.Event == last.Hash {
		stamps = sf.Files // written after the last event: not stale
	}
	for _, name := range s.Tracked {
		want, ok := last.Metadata.Files[s.key(name)]
		if !ok {
			continue
		}
		now, r, err := s.hashNow(name, stamps)
		if err != nil {
			return nil, last, nil, err
		}
		if now != want && legacyMatch(want, r.data) {
			now = want // as an older baton recorded it
		}
		if r.data != nil {
			r.asRecorded = now == want && stamps != nil
			read[name] = r
		}
		if now == want || now == Unknown {
			continue
		}
		d := Drift{File: s.key(name), Recorded: want, Now: now, EventID: last.EventID, Timestamp: last.Timestamp}
		d.Difference = s.difference(name, want, now, r.data)
		out = append(out, d)
	}
	return out, last, read, nil
}

// recordedPath is where the version of a file the last event recorded is
// kept (a hard link made at commit).
func (s *Store) recordedPath(name string) string {
	return filepath.Join(s.BatonDir(), "recorded", strings.NewReplacer("/", "_", "\\", "_").Replace(s.key(name)))
}

// copyLimit is the size up to which the recorded version is a copy; a
// larger file is hard-linked (free, but an edit in place changes both).
const copyLimit = 1 << 20

// A copy is rewritten in place (Recorded checks it against the event's
// hash, so a torn one is only not kept), which spares the file system an
// inode per write; it is written from the content the transaction staged,
// when it staged it (pieces), rather than read back.
func (s *Store) linkRecorded(name string, pieces [][]byte) {
	dst := s.recordedPath(name)
	src := s.Path(name)
	size := piecesSize(pieces)
	if pieces == nil {
		fi, err := os.Stat(src)
		if err != nil {
			os.Remove(dst) // no file: no recorded version
			return
		}
		size = fi.Size()
	}
	if size > copyLimit {
		if os.MkdirAll(filepath.Dir(dst), 0o755) == nil {
			os.Remove(dst)
			_ = os.Link(src, dst)
		}
		return
	}
	if pieces == nil {
		b, err := os.ReadFile(src)
		if err != nil {
			return
		}
		pieces = [][]byte{b}
	}
	if rewrite(dst, pieces, false) == nil {
		return
	}
	if os.MkdirAll(filepath.Dir(dst), 0o755) == nil {
		os.Remove(dst)
		_ = os.WriteFile(dst, bytes.Join(pieces, nil), 0o644)
	}
}
func piecesSize(pieces [][]byte) int64 {
	n := int64(0)
	for _, p := range pieces {
		n += int64(len(p))
	}
	return n
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
		if want != "" {
			_ = json.Unmarshal(s.readStamps()[s.key(name)].Facts, &before)
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
	if data == nil {
		data, _ = os.ReadFile(s.Path(name))
	}
	old, err := os.ReadFile(s.recordedPath(name))
	if err != nil || !sameContent(old, want) {
		return fmt.Sprintf("its content was replaced in place (now %d bytes); the recorded version is in the audit log only as a hash", len(data))
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
// (see CheckDrift); the files it had to read are kept for the transaction.
func (tx *Tx) Drift() ([]Drift, error) {
	d, last, read, err := tx.s.checkDrift(true)
	if last != nil {
		tx.driftHead = last.Hash
	}
	for n, r := range read {
		if r.stamped && r.id != "" {
			if tx.driftBases == nil {
				tx.driftBases = map[string]driftRead{}
			}
			tx.driftBases[n] = r // the base readBase takes: see hashNow
			if v, ok := tx.verified(n); (!ok || v.Facts == nil) && r.asRecorded {
				tx.vouch(n, r, r.hash) // its facts vouched for by no event: this one may
			}
			continue
		}
		if _, ok := tx.read[n]; !ok {
			tx.read[n] = r.data
			if r.asRecorded && r.id != "" && last != nil {
				tx.vouch(n, r, last.Metadata.Files[tx.s.key(n)])
			}
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
// recorded, when it is still kept in .baton/recorded (and has that hash):
// what baton wrote, whatever was done to the file since.
func (s *Store) Recorded(name, hash string) ([]byte, bool) {
	if hash == "" {
		return nil, false
	}
	b, err := ReadRegular(s.recordedPath(name))
	if err != nil || !sameContent(b, hash) {
		return nil, false
	}
	return b, true
}
