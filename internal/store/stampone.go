package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tidwall/gjson"
)

// stampOf is the stamp of the file key, as readStamps()[key] gives it,
// without decoding the others, when the log's last entry vouches for it
// (see stampdigest.go; a stamp it does not vouch for is none: the reader
// validates the file and compares it with the log). A reader needs one
// stamp: a process that has not parsed the stamps file (a one-shot read)
// checks the file and its seal as loadStamps does, then picks the one stamp
// out of the sealed bytes, instead of decoding every stamp, with their
// facts and hash states, through encoding/json's reflection (about a tenth
// of a --field read's own work); the log's last entry is read the same way.
func (s *Store) stampOf(key string) (stamp, bool) {
	b, _, err := readIdentified(s.stampsPath())
	if err != nil || b == nil {
		return stamp{}, false
	}
	if v, hit := s.parsed.latest(s.stampsPath()); hit {
		if p, is := v.(stampsParsed); is && bytes.Equal(p.raw, b) {
			st, ok := p.sf.Files[key]
			return st, ok && s.headVouches(key, p.sf.Event, st.Hash, stampDigest(st))
		}
	}
	one := s.stampsPath() + "#" + key // a read by blocks takes it again after Trusted
	v, _ := s.parsed.latest(one)
	o, is := v.(oneStampParsed)
	if !is || !bytes.Equal(o.raw, b) {
		o = oneStampParsed{raw: b}
		o.st, o.event, o.digest, o.ok = parseStampOf(b, key)
		s.parsed.put(one, stampsKeep, o)
	}
	return o.st, o.ok && s.headVouches(key, o.event, o.st.Hash, o.digest)
}

// oneStampParsed is parseStampOf's answer for one key, kept with the
// stamps' bytes it was picked out of (looked up by them, as stampsParsed).
type oneStampParsed struct {
	raw           []byte
	st            stamp
	event, digest string
	ok            bool
}

// parseStampOf picks the stamp of key out of the stamps file's bytes b,
// with the event they are sealed with and the stamp's digest.
func parseStampOf(b []byte, key string) (stamp, string, string, bool) {
	if !gjson.ValidBytes(b) {
		return stamp{}, "", "", false
	}
	top := lastMembers(gjson.ParseBytes(b), "event", "seal", "files")
	event, seal, files := top[0], top[1], top[2]
	if !stringOrNull(event) || !stringOrNull(seal) || seal.Str == "" || !files.IsObject() ||
		seal.Str != sealOf(event.Str, []byte(files.Raw)) {
		return stamp{}, "", "", false
	}
	var found gjson.Result
	files.ForEach(func(k, v gjson.Result) bool {
		if k.Str == key { // map keys match exactly; the last of equal keys wins
			found = v
		}
		return true
	})
	if !found.IsObject() {
		return stamp{}, "", "", false
	}
	m := lastMembers(found, "id", "hash", "facts", "hash_only", "blocks")
	if !stringOrNull(m[0]) || !stringOrNull(m[1]) || (m[3].Exists() && m[3].Type != gjson.True && m[3].Type != gjson.False && m[3].Type != gjson.Null) {
		return stamp{}, "", "", false
	}
	st := stamp{ID: m[0].Str, Hash: m[1].Str, HashOnly: m[3].Type == gjson.True}
	if m[2].Exists() {
		st.Facts = json.RawMessage(m[2].Raw)
	}
	if m[4].Exists() {
		st.Blocks = json.RawMessage(m[4].Raw) // checked against the hash by sumsOf when used
	}
	return st, event.Str, rawStampDigest(found.Raw), true
}

// rawStampDigest is stampDigest of a stamp as the stamps file holds it (as
// encoding/json wrote it: the identity first), computed from its bytes: the
// identity's value emptied. Bytes not so written give no digest.
func rawStampDigest(raw string) string {
	const idPrefix = `{"id":"`
	if !strings.HasPrefix(raw, idPrefix) {
		return ""
	}
	rest := raw[len(idPrefix):]
	i := strings.IndexByte(rest, '"')
	if i < 0 || strings.IndexByte(rest[:i], '\\') >= 0 {
		return ""
	}
	return HashContent([]byte(idPrefix + rest[i:]))
}

// headVouches says whether the log's last entry is event and records hash
// for the file key and digest for its stamp, reading only the log's tail.
func (s *Store) headVouches(key, event, hash, digest string) bool {
	if event == "" || hash == "" || digest == "" {
		return false
	}
	line := s.lastLogLine()
	if line == nil || !gjson.ValidBytes(line) {
		return false
	}
	e := gjson.ParseBytes(line)
	h := lastMembers(e, "hash", "metadata")
	if h[0].Type != gjson.String || h[0].Str != event {
		return false
	}
	md := lastMembers(h[1], "files", "stamps")
	return memberString(md[0], key) == hash && memberString(md[1], key) == digest
}

// lastSeqHash is the sequence number and hash of the log's last entry, read
// from its last line without decoding the entry (ok false when the line is
// not one: the caller decodes the log as a write does).
func (s *Store) lastSeqHash() (int, string, bool) {
	line := s.lastLogLine()
	if line == nil || !gjson.ValidBytes(line) {
		return 0, "", false
	}
	m := lastMembers(gjson.ParseBytes(line), "seq", "hash")
	if m[0].Type != gjson.Number || m[1].Type != gjson.String || m[0].Num < 1 || m[0].Num != float64(int(m[0].Num)) {
		return 0, "", false
	}
	return int(m[0].Num), m[1].Str, true
}

// lastRecorded is the hash the log's last entry records for the file key
// ("" when it records none).
func (s *Store) lastRecorded(key string) string {
	line := s.lastLogLine()
	if line == nil || !gjson.ValidBytes(line) {
		return ""
	}
	md := lastMembers(gjson.ParseBytes(line), "metadata")
	return memberString(lastMembers(md[0], "files")[0], key)
}

// memberString is the string value of the member key of the object o ("" for
// none), the last of equal keys winning, as encoding/json decodes a map.
func memberString(o gjson.Result, key string) string {
	v := ""
	o.ForEach(func(k, m gjson.Result) bool {
		if k.Str == key {
			v = ""
			if m.Type == gjson.String {
				v = m.Str
			}
		}
		return true
	})
	return v
}

// lastLogLine is the last line of the audit log (nil when there is none),
// reading only its tail, once for each version of the log a process meets
// (a reader checks it for its stamp, its anchors and its note).
func (s *Store) lastLogLine() []byte {
	f, fi, err := OpenRegular(s.EventsPath())
	if err != nil {
		return nil
	}
	defer f.Close()
	key, id := s.EventsPath()+"#last line", identity(fi)
	if v, ok := s.parsed.get(key, id); ok {
		return v.([]byte)
	}
	line := lastLineOf(f, fi.Size())
	s.parsed.put(key, id, line)
	return line
}

// lastLineOf is the last line of the file f of size bytes (nil when there
// is none), reading only its tail.
func lastLineOf(f *os.File, size int64) []byte {
	for chunk := int64(4096); size > 0; chunk *= 4 {
		start := max(size-chunk, 0)
		buf := make([]byte, size-start)
		if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
			return nil
		}
		buf = bytes.TrimRight(buf, "\n")
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 || start == 0 {
			return buf[i+1:]
		}
	}
	return nil
}

// lastMembers are the members of the object o named names, matched as
// encoding/json matches a struct's fields: without regard to case, the
// last of equal names winning.
func lastMembers(o gjson.Result, names ...string) []gjson.Result {
	out := make([]gjson.Result, len(names))
	o.ForEach(func(k, v gjson.Result) bool {
		for i, n := range names {
			if strings.EqualFold(k.Str, n) {
				out[i] = v
			}
		}
		return true
	})
	return out
}

// stringOrNull says whether r, when present, decodes into a Go string (a
// JSON null leaves it empty).
func stringOrNull(r gjson.Result) bool {
	return !r.Exists() || r.Type == gjson.String || r.Type == gjson.Null
}

// PointStamp does what an agent that rewrites .baton/stamps.json can do:
// it points the stamp of name at the file as it is now (its identity) and
// reseals the stamps. For tests of what readers and writers then trust.
func (s *Store) PointStamp(name string) error {
	fi, err := os.Stat(s.Path(name))
	if err != nil {
		return err
	}
	sf, ok := s.loadStamps()
	st, has := sf.Files[s.key(name)]
	if !ok || !has {
		return fmt.Errorf("no stamp of %s to point", name)
	}
	st.ID = identity(fi)
	sf.Files[s.key(name)] = st
	s.writeStamps(sf.Event, sf.Files)
	return nil
}
