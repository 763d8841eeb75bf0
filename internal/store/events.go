package store

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/baton-cli/baton/internal/errs"
)

// EventsName is the audit log inside .baton/.
const EventsName = "events.jsonl"

// Event is one entry of the audit log: seed 002's Event (event_id, task_id,
// stage_id, type, timestamp, payload, metadata) plus a sequence number and
// the hash chain. Each entry's Hash covers the entry with Hash empty, and
// PrevHash is the previous entry's Hash, so an entry changed or removed
// breaks the chain from there on.
type Event struct {
	Seq       int             `json:"seq"`
	EventID   string          `json:"event_id"`
	TaskID    *string         `json:"task_id"`
	StageID   *string         `json:"stage_id"`
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	Payload   json.RawMessage `json:"payload"`
	Metadata  EventMetadata   `json:"metadata"`
	PrevHash  string          `json:"prev_hash"`
	Hash      string          `json:"hash"`
	// Auth names the key the entry is signed with ("person:KEYID" or
	// "session:N"; empty for an unsigned entry, such as the refusal of a
	// call without a credential). It is covered by Hash.
	Auth string `json:"auth,omitempty"`
	// Sig is the Ed25519 signature of Hash (see SignEvent) by the Auth
	// key: without its private key an entry can be neither forged nor
	// re-chained, and anyone with the public key can check it.
	Sig string `json:"sig,omitempty"`
	// MAC is what an older baton keyed its entries with; it is never
	// written, and verify names an entry that has one.
	MAC string `json:"mac,omitempty"`

	signKey ed25519.PrivateKey // the key Sig is made with, set by LogSigned
}

// EventMetadata carries what verify checks against the files.
type EventMetadata struct {
	// Files maps each state file to the sha256 of its content after the
	// transaction ("" when the file does not exist).
	Files map[string]string `json:"files"`
	// Rewritten are the anchors the transaction's commit rewrote though
	// they did not hold the log's head (see AnchorNote).
	Rewritten []AnchorNote `json:"anchors_rewritten,omitempty"`
}

// EventsPath is where the audit log lives.
func (s *Store) EventsPath() string { return filepath.Join(s.BatonDir(), EventsName) }

// Log stages an audit event for this transaction; the store fills in the
// sequence, chain and file hashes at commit. The event is written through
// the journal with the files, so both or neither are kept.
func (tx *Tx) Log(e Event) { tx.event = &e }

// LogSigned is Log for an entry signed with key and named auth (a nil key
// leaves the entry unsigned).
func (tx *Tx) LogSigned(e Event, auth string, key ed25519.PrivateKey) {
	e.Auth, e.signKey = auth, key
	tx.event = &e
}

// LogBefore stages an entry appended before the transaction's own event,
// in the order staged: history the transaction imports, chained and
// committed with the transaction's event (all of them or none). It is
// signed with key and named auth, as LogSigned's. The transaction must also
// stage its own event.
func (tx *Tx) LogBefore(e Event, auth string, key ed25519.PrivateKey) {
	e.Auth, e.signKey = auth, key
	tx.before = append(tx.before, &e)
}

// wipeKeys zeroes the keys the transaction's entries were to be signed
// with, once it has ended: a key given to LogSigned or LogBefore is the
// store's to zero.
func (tx *Tx) wipeKeys() {
	for _, e := range append(tx.before, tx.event) {
		if e != nil {
			clear(e.signKey)
		}
	}
}

// events are the entries the transaction appends, in order.
func (tx *Tx) events() []*Event {
	if tx.event == nil {
		return nil
	}
	return append(append([]*Event(nil), tx.before...), tx.event)
}

// eventDomain prefixes what an entry's signature covers, so that a
// signature made for the log is valid for nothing else the key signs.
const eventDomain = "baton audit event v1\n"

// SignEvent is the signature (base64) of an entry whose hash is hash.
func SignEvent(key ed25519.PrivateKey, hash string) string {
	return base64.StdEncoding.EncodeToString(ed25519.Sign(key, []byte(eventDomain+hash)))
}

// EventSigned says whether sig is pub's signature of an entry whose hash
// is hash.
func EventSigned(pub ed25519.PublicKey, hash, sig string) bool {
	b, err := base64.StdEncoding.DecodeString(sig)
	return err == nil && len(pub) == ed25519.PublicKeySize && ed25519.Verify(pub, []byte(eventDomain+hash), b)
}

// ChainHash computes an event's hash: sha256 of its JSON with Hash and
// the signature empty.
func ChainHash(e Event) string {
	e.Hash, e.Sig, e.MAC = "", "", ""
	b, _ := json.Marshal(e)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// prepareAppend completes the staged events, each chained to the one
// before (the first to the log's last entry), and returns the journal's
// record of their append. files are what the transaction writes.
func (tx *Tx) prepareAppend(events []*Event, files []staged) (*appendEntry, error) {
	if err := fault(StepEvent); err != nil {
		return nil, err
	}
	s := tx.s
	last, size, err := s.lastEvent()
	if err != nil {
		return nil, err
	}
	if err := tx.checkAnchors(last); err != nil {
		return nil, err
	}
	staged := map[string]string{}
	for _, f := range files {
		staged[f.name] = f.hash
	}
	var data []byte
	hashed := map[string]string{} // the files do not change between the entries of one commit
	for _, e := range events {
		if e == tx.event {
			e.Metadata.Rewritten = tx.notes
		}
		line, err := tx.prepareEvent(e, last, staged, hashed)
		if err != nil {
			return nil, err
		}
		data, last = append(data, line...), e
	}
	return &appendEntry{Path: s.EventsPath(), Offset: size, Data: data}, nil
}

// checkAnchors compares the log's last entry with the anchors before the
// commit chains entries to it (see LogGap), and notes the anchors it will
// rewrite though they do not hold that entry: those that cannot be read,
// and, where no state existed before, those an earlier project at the
// same path left.
func (tx *Tx) checkAnchors(last *Event) error {
	s := tx.s
	seq, hash := 0, ""
	if last != nil {
		seq, hash = last.Seq, last.Hash
	}
	tx.base = AnchorBase{Seq: seq, Hash: hash}
	anchors, broken := s.Anchors()
	tx.notes = broken
	if last == nil && tx.fresh {
		for _, an := range anchors {
			if an.Seq > 0 {
				tx.notes = append(tx.notes, AnchorNote{Path: an.Path, Problem: fmt.Sprintf("it recorded entry %d of another log, which an earlier project at %s left", an.Seq, an.Dir)})
			}
		}
		anchors = nil
	}
	if s.AllowLogGap {
		return nil
	}
	gap, err := s.gapIn(anchors, seq, hash)
	if err != nil {
		return err
	}
	if gap != nil {
		return gapError(s, gap)
	}
	return nil
}

// prepareEvent completes a staged event: sequence and chain from the last
// entry of the log, file hashes from the staged content or, for files this
// transaction did not change, from the last entry (or the file itself when
// the log does not record it yet, or the transaction adopts it: such files
// are kept in tx.asIs with the content hashed). hashed holds the files
// hashed for earlier entries of the same commit.
func (tx *Tx) prepareEvent(e *Event, last *Event, staged, hashed map[string]string) ([]byte, error) {
	s := tx.s
	e.Seq = 1
	if last != nil {
		e.Seq = last.Seq + 1
		e.PrevHash = last.Hash
	}
	e.EventID = fmt.Sprintf("E%06d", e.Seq)
	if e.Timestamp == "" {
		e.Timestamp = s.Now().UTC().Format("2006-01-02T15:04:05Z")
	}
	if len(e.Payload) == 0 {
		e.Payload = json.RawMessage("{}")
	}
	e.Metadata.Files = map[string]string{}
	if last != nil {
		for k, h := range last.Metadata.Files { // files this call does not see (another --file)
			e.Metadata.Files[k] = h
		}
	}
	for _, name := range s.Tracked {
		k := s.key(name)
		if h, ok := staged[name]; ok {
			e.Metadata.Files[k] = h
			continue
		}
		if last != nil && !tx.adopt[name] {
			if h, ok := last.Metadata.Files[k]; ok {
				e.Metadata.Files[k] = h
				continue
			}
		}
		h, ok := hashed[name]
		if !ok {
			var data []byte
			var err error
			if h, data, err = tx.hashAsIs(name); err != nil {
				return nil, err
			}
			hashed[name] = h
			if tx.asIs == nil {
				tx.asIs = map[string][]byte{}
			}
			tx.asIs[name] = data
		}
		if h == Unknown {
			if last == nil || last.Metadata.Files[k] == "" {
				delete(e.Metadata.Files, k)
			}
			continue
		}
		e.Metadata.Files[k] = h
	}
	e.Hash = ChainHash(*e)
	if e.signKey != nil {
		e.Sig = SignEvent(e.signKey, e.Hash)
	}
	line, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return append(line, '\n'), nil
}

// hashAsIs hashes a tracked file as it is now: the bytes the transaction
// read of it (the drift check's) when it read it, else the file.
func (tx *Tx) hashAsIs(name string) (string, []byte, error) {
	if data, ok := tx.read[name]; ok && !isDirName(name) && !IsRef(name) {
		return HashContent(data), data, nil
	}
	return tx.s.currentHash(name)
}

// lastEvent reads the final entry of the log (nil for an empty or missing
// log) and the log's size, reading only its tail.
func (s *Store) lastEvent() (*Event, int64, error) {
	f, fi, err := OpenRegular(s.EventsPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	size := fi.Size()
	if size == 0 {
		return nil, 0, nil
	}
	for chunk := int64(4096); ; chunk *= 4 {
		start := size - chunk
		if start < 0 {
			start = 0
		}
		buf := make([]byte, size-start)
		if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
			return nil, 0, err
		}
		buf = bytes.TrimRight(buf, "\n")
		i := bytes.LastIndexByte(buf, '\n')
		if i < 0 && start > 0 {
			continue // the last line is longer than the chunk
		}
		var e Event
		if err := json.Unmarshal(buf[i+1:], &e); err != nil {
			return nil, 0, errs.New(errs.Invalid, "%s: the last entry is unreadable (%v), so no entry can be chained to it: nothing was written; run 'baton verify'", s.EventsPath(), err)
		}
		return &e, size, nil
	}
}

// appendEntry is the journal's record of an audit-log append: the log is
// truncated to Offset and Data written, so a redo never duplicates it.
type appendEntry struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
	Data   []byte `json:"data"`
}

// applyAppend writes the journal's audit entry at its offset, unless it
// is there already, and syncs the log.
func applyAppend(a appendEntry) error {
	f, err := os.OpenFile(a.Path, os.O_RDWR|os.O_CREATE|noFollow, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	there, err := appended(f, a)
	if err != nil || there {
		return err
	}
	if err := f.Truncate(a.Offset); err != nil {
		return err
	}
	if _, err := f.WriteAt(a.Data, a.Offset); err != nil {
		return err
	}
	return f.Sync()
}

// appended says whether f holds a's entry at its offset already (an error
// when the log was changed so that it cannot).
func appended(f *os.File, a appendEntry) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	end := a.Offset + int64(len(a.Data))
	if fi.Size() >= end {
		// already appended — or a journal replayed late: either way the
		// bytes must be there, and nothing after them is touched
		have := make([]byte, len(a.Data))
		if _, err := f.ReadAt(have, a.Offset); err == nil && bytes.Equal(have, a.Data) {
			return true, nil
		}
		if fi.Size() > end {
			return false, fmt.Errorf("%s does not hold the entry this journal appended at byte %d: the log was changed outside baton; run 'baton verify'", a.Path, a.Offset)
		}
	}
	if fi.Size() < a.Offset {
		return false, fmt.Errorf("%s is shorter (%d bytes) than when the transaction began (%d): it was truncated outside baton; run 'baton verify'", a.Path, fi.Size(), a.Offset)
	}
	return false, nil
}

// ReadEvents reads the whole audit log as committed: with the entries a
// pending journal appends (a writer stopped after its commit point) in
// place of whatever of them the log holds so far. A line that does not
// parse is returned as an error naming its line number.
func (s *Store) ReadEvents() ([]Event, error) {
	data, err := ReadRegular(s.EventsPath())
	if err != nil {
		return nil, err
	}
	if j := s.pendingJournal(); j != nil && j.Append != nil && int64(len(data)) >= j.Append.Offset {
		data = append(data[:j.Append.Offset:j.Append.Offset], j.Append.Data...)
	}
	var out []Event
	for n, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(line, &e); err != nil {
			return out, errs.New(errs.Invalid, "%s: line %d: %v", s.EventsPath(), n+1, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// ChainProblem is one break found by CheckChain.
type ChainProblem struct {
	Seq     int    `json:"seq"`
	Line    int    `json:"line"`
	Problem string `json:"problem"`
}

// CheckChain verifies sequence numbers, prev-hash links and each entry's
// own hash.
func CheckChain(events []Event) []ChainProblem {
	var out []ChainProblem
	prev := ""
	for i, e := range events {
		line := i + 1
		if e.Seq != i+1 {
			out = append(out, ChainProblem{e.Seq, line, fmt.Sprintf("sequence %d where %d was expected: an entry was removed or inserted", e.Seq, i+1)})
		}
		if e.PrevHash != prev {
			out = append(out, ChainProblem{e.Seq, line, "prev_hash does not match the previous entry: the log was changed before this entry"})
		}
		if ChainHash(e) != e.Hash {
			out = append(out, ChainProblem{e.Seq, line, "the entry's hash does not match its content: this entry was edited"})
		}
		prev = e.Hash
	}
	return out
}
