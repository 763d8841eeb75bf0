package store

import (
	"bytes"
	"encoding/json"
	"maps"
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
	// Mids are sha256's states at record boundaries of the content, each
	// that of its block's hash over the bytes of the block before it, so
	// that the next commit hashes only what follows in that block.
	Mids []mid `json:"mids,omitempty"`
	// Blocks are the sums of the content's blocks when it has more than
	// one (see contentHash), so that a commit hashes only the blocks it
	// changes. They are kept as the stamps file holds them (a JSON string
	// of their base64), decoded only when a transaction takes the stamp.
	Blocks json.RawMessage `json:"blocks,omitempty"`
	sums   []byte          // the sums decoded (the hash's for one block), set by verifiedIn
	// HashOnly marks a stamp that vouches for the content's hash, not for
	// its validity (see vouch.go): the drift check uses it, readers do not.
	HashOnly bool `json:"hash_only,omitempty"`
}

func (s *Store) stampsPath() string { return filepath.Join(s.BatonDir(), stampsName) }

// identity is what a stamp compares.
func identity(fi os.FileInfo) string { return fileID(fi) }

// stampsFile is .baton/stamps.json: the stamps, the hash of the event
// after whose commit they were written, and a seal over both (the stamps'
// bytes as written). The seal proves nothing against an agent (it is a
// plain hash): it tells stamps written whole from torn ones (a power loss
// while the spare was written in place), and stamps that do not parse or
// match it are lost, not an outside edit: they cost a full read, which
// finds any edit of the files themselves.
type stampsFile struct {
	Event string           `json:"event"`
	Seal  string           `json:"seal"`
	Files map[string]stamp `json:"-"`
}

type stampsRaw struct {
	Event string          `json:"event"`
	Seal  string          `json:"seal"`
	Files json.RawMessage `json:"files"`
}

func sealOf(event string, files []byte) string {
	return HashContent(append([]byte(event+"\n"), files...))
}

// stampsParsed is a parse of the stamps file kept for this process, with
// the bytes parsed: the file alternates between two inodes rewritten in
// place (see replaceVia), so that an identity met again (same size, within
// one tick of the clock) does not prove the same content; the bytes do.
type stampsParsed struct {
	raw []byte
	sf  stampsFile
}

// loadStamps reads the stamps file: ok is false when it is missing, written
// before the seal, torn or otherwise not what baton wrote (then the stamps
// are lost: see stampsFile).
func (s *Store) loadStamps() (sf stampsFile, ok bool) {
	b, _, err := readIdentified(s.stampsPath())
	if err != nil || b == nil {
		return sf, false
	}
	if v, hit := s.parsed.latest(s.stampsPath()); hit {
		if p, is := v.(stampsParsed); is && bytes.Equal(p.raw, b) {
			sf = p.sf
			sf.Files = maps.Clone(sf.Files) // the caller's to change
			return sf, true
		}
	}
	if sf, ok = decodeStamps(b); !ok {
		return sf, false
	}
	s.parsed.put(s.stampsPath(), stampsKeep, stampsParsed{raw: b, sf: stampsFile{Event: sf.Event, Seal: sf.Seal, Files: maps.Clone(sf.Files)}})
	return sf, true
}

// decodeStamps reads the stamps file's bytes b (see loadStamps).
func decodeStamps(b []byte) (sf stampsFile, ok bool) {
	raw, split := splitStamps(b)
	if !split && json.Unmarshal(b, &raw) != nil || raw.Seal == "" {
		return sf, false
	}
	if raw.Seal != sealOf(raw.Event, raw.Files) || json.Unmarshal(raw.Files, &sf.Files) != nil {
		return stampsFile{}, false
	}
	sf.Event, sf.Seal = raw.Event, raw.Seal
	return sf, true
}

func (s *Store) readStamps() map[string]stamp {
	sf, ok := s.loadStamps()
	if !ok || sf.Files == nil {
		return map[string]stamp{}
	}
	return sf.Files
}

// recordStamps stores the identity of the named files as they are now,
// with their facts and the hashes the commit's event recorded (none
// without an event), and the stamps in add. Each file as recorded is also linked into
// .baton/recorded, so that a later change outside baton can be shown as a
// difference. Called under the lock, after a commit; prev is the log's
// head before it.
func (s *Store) recordStamps(names []string, staged map[string][][]byte, facts map[string]json.RawMessage, hs map[string]hashed, hashes map[string]string, event, prev string, add map[string]stamp) {
	sf, ok := s.loadStamps()
	stamps := sf.Files
	if stamps == nil {
		stamps = map[string]stamp{}
	}
	fresh := ok && sf.Event == prev
	for k, st := range stamps {
		// stale stamps (a transaction's were lost) are never carried on: a
		// file the event hashes must have that hash, any other (the
		// reviews index) the stamps must be those of the last event
		if h, tracked := hashes[k]; event != "" && (tracked && st.Hash != h || !tracked && !fresh) {
			delete(stamps, k)
		}
	}
	maps.Copy(stamps, add)
	for _, n := range names {
		if IsRef(n) || n == ".baton/"+stampsName {
			continue
		}
		if isDirName(n) {
			list, _ := dirListing(s.Path(n))
			b, _ := json.Marshal(list)
			stamps[s.key(n)] = stamp{Hash: hashes[s.key(n)], Facts: b}
			continue
		}
		if s.tracked(n) { // kept for the drift check's difference
			s.linkRecorded(n, staged[n]) // first: a new link changes the file's change time
		}
		if fi, err := os.Stat(s.Path(n)); err == nil {
			st := stampFor(hashes[s.key(n)], facts[n], hs[n])
			st.ID = identity(fi)
			stamps[s.key(n)] = st
		} else {
			delete(stamps, s.key(n))
		}
	}
	s.writeStamps(event, stamps)
}

// writeStamps replaces the stamps file with stamps, sealed with event
// (through a spare beside it: see replaceVia). Nothing is synced, as
// before the spare: after a power loss the stamps may be an older version
// (stale: only a full read), and they fit in one page, which a disk
// writes whole.
func (s *Store) writeStamps(event string, stamps map[string]stamp) {
	files, _ := json.Marshal(stamps)
	_ = replaceVia(s.stampsPath()+".tmp", s.stampsPath(), joinStamps(event, sealOf(event, files), files))
}

// joinStamps is json.Marshal(stampsRaw{event, seal, files}) for files
// json.Marshal wrote, without compacting the files again (they are most
// of the stamps: the block sums of every large file).
func joinStamps(event, seal string, files []byte) []byte {
	e, _ := json.Marshal(event)
	sl, _ := json.Marshal(seal)
	b := make([]byte, 0, len(files)+len(e)+len(sl)+32)
	b = append(append(append(b, `{"event":`...), e...), `,"seal":`...)
	b = append(append(append(b, sl...), `,"files":`...), files...)
	return append(b, '}')
}

// splitStamps reads the stamps as joinStamps wrote them, without a pass
// of encoding/json over the files (decodeStamps then checks them against
// the seal and decodes them); ok is false for any other layout, which
// encoding/json reads. What it reads, encoding/json reads the same, or
// refuses (the stamps are then lost: a full read).
func splitStamps(b []byte) (raw stampsRaw, ok bool) {
	rest, ok := bytes.CutPrefix(b, []byte(`{"event":"`))
	if !ok {
		return raw, false
	}
	event, rest, ok := bytes.Cut(rest, []byte(`","seal":"`))
	if !ok {
		return raw, false
	}
	seal, rest, ok := bytes.Cut(rest, []byte(`","files":`))
	if !ok || bytes.ContainsAny(event, `"\`) || bytes.ContainsAny(seal, `"\`) || !bytes.HasSuffix(rest, []byte("}}")) {
		return raw, false
	}
	return stampsRaw{Event: string(event), Seal: string(seal), Files: rest[:len(rest)-1]}, true
}

// Trusted reports whether the file name, as described by fi, with the
// content data (nil: not read), is one a reader need not validate nor
// compare with the log: the one baton's last transaction wrote (with the
// facts recorded then), or a version a reader before validated in full
// (see Remember). A stamp's identity and a reader's note are no secret
// (an agent that can write .baton/ can point them at an edited file), so
// content of up to copyLimit bytes is also hashed against what the log
// records, as the drift check hashes it: only a larger file is taken on
// its identity alone.
func (s *Store) Trusted(name string, fi os.FileInfo, data []byte) (json.RawMessage, bool) {
	if facts, ok := s.stamped(name, fi, data); ok {
		return facts, true
	}
	if fi == nil {
		return nil, false
	}
	facts, ok := s.validatedAs(name, fi)
	if ok && data != nil && int64(len(data)) <= copyLimit {
		if !sameContent(data, s.lastRecorded(s.key(name))) {
			return nil, false
		}
		return nil, true // the log's content; the note's facts are nobody's word
	}
	return facts, ok
}

// stamped reports whether the file name, as described by fi, is the one
// baton's last transaction wrote, and returns the facts recorded with it.
func (s *Store) stamped(name string, fi os.FileInfo, data []byte) (json.RawMessage, bool) {
	if fi == nil {
		return nil, false
	}
	st, ok := s.stampOf(s.key(name))
	if !ok || st.ID != identity(fi) || st.HashOnly {
		return nil, false
	}
	if data != nil && int64(len(data)) <= copyLimit && HashContent(data) != st.Hash {
		return nil, false // an edit the stamp's identity was pointed at (see Trusted)
	}
	return st.Facts, true
}
