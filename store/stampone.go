package store

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
)

// stampOf is the stamp of the file key, as readStamps()[key] gives it,
// without decoding the others. A reader needs one stamp: a process that
// has not parsed the stamps file (a one-shot read) checks the file and its
// seal as loadStamps does, then picks the one stamp out of the sealed
// bytes, instead of decoding every stamp, with their facts and hash
// states, through encoding/json's reflection (about a tenth of a
// --field read's own work).
func (s *Store) stampOf(key string) (stamp, bool) {
	b, _, err := readIdentified(s.stampsPath())
	if v, hit := s.parsed.latest(s.stampsPath()); hit && err == nil {
		if p, is := v.(stampsParsed); is && bytes.Equal(p.raw, b) {
			st, ok := p.sf.Files[key]
			return st, ok
		}
	}
	if err != nil || b == nil || !gjson.ValidBytes(b) {
		return stamp{}, false
	}
	top := lastMembers(gjson.ParseBytes(b), "event", "seal", "files")
	event, seal, files := top[0], top[1], top[2]
	if !stringOrNull(event) || !stringOrNull(seal) || seal.Str == "" || !files.IsObject() ||
		seal.Str != sealOf(event.Str, []byte(files.Raw)) {
		return stamp{}, false
	}
	var found gjson.Result
	files.ForEach(func(k, v gjson.Result) bool {
		if k.Str == key { // map keys match exactly; the last of equal keys wins
			found = v
		}
		return true
	})
	if !found.IsObject() {
		return stamp{}, false
	}
	m := lastMembers(found, "id", "hash", "facts", "hash_only")
	if !stringOrNull(m[0]) || !stringOrNull(m[1]) || (m[3].Exists() && m[3].Type != gjson.True && m[3].Type != gjson.False && m[3].Type != gjson.Null) {
		return stamp{}, false
	}
	st := stamp{ID: m[0].Str, Hash: m[1].Str, HashOnly: m[3].Type == gjson.True}
	if m[2].Exists() {
		st.Facts = json.RawMessage(m[2].Raw)
	}
	return st, true
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
