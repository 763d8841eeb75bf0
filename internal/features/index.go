package features

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/baton-cli/baton/internal/jsondoc"
)

// The index of the list: each item's id, type and passes and where its
// record lies in the file, one line each, kept beside the file so that a
// write naming a feature reads it instead of scanning the list (1,000
// items in a long project's). It is derived from the file alone and valid
// only for the version whose stamp facts name it by sha256 (the Digest of
// the features array's facts): any other — stale, lost, edited by hand —
// is ignored, and the list is read as it is (parseLight).

// IndexName is where the index of the feature list lives, beside the stamps.
const IndexName = ".baton/features-index"

// indexHead is the index's first line.
const indexHead = "baton features index 1"

// Index builds the index of data, a list baton wrote or validated in full
// read with its facts, and returns it with the facts naming it (false when
// the list's items cannot all be read light).
func Index(data []byte, facts jsondoc.Facts) ([]byte, jsondoc.Facts, bool) {
	doc, err := jsondoc.ParseDocTrusted(data, facts, "features")
	if err != nil {
		return nil, nil, false
	}
	f, ok := parseLight(doc)
	if !ok {
		return nil, nil, false
	}
	arr := doc.Array("features")
	var b bytes.Buffer
	b.WriteString(indexHead)
	for i, raw := range arr.Elems() {
		it := f.items[i]
		id, _ := json.Marshal(it.ID)
		typ, _ := json.Marshal(it.Type)
		start := arr.RecordOffset(i)
		fmt.Fprintf(&b, "\n%d %d %d %s %s", start, start+len(raw), boolDigit(it.Passes), typ, id)
	}
	out := b.Bytes()
	named := jsondoc.Facts{}
	for k, v := range facts {
		named[k] = v
	}
	a := named["features"]
	a.Count = len(f.items)
	a.Digest = digest(out)
	named["features"] = a
	return out, named, true
}

func boolDigit(b bool) int {
	if b {
		return 1
	}
	return 0
}

func digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// parseIndexed reads the items from the index idx of the list doc, whose
// facts name idx by digest (false when idx is not the index they name or
// does not fit the file).
func parseIndexed(doc *jsondoc.Doc, data []byte, known jsondoc.ArrayFacts, idx []byte) (*File, bool) {
	if known.Digest == "" || idx == nil || digest(idx) != known.Digest {
		return nil, false
	}
	rest, ok := bytes.CutPrefix(idx, []byte(indexHead))
	n := known.Count
	if !ok || n < 0 || n > len(rest)/8 || known.Span[0] < 0 || known.Span[1] > len(data) {
		return nil, false
	}
	f := &File{doc: doc, index: make(map[string]int, n), items: make([]Feature, n), light: make([]bool, n), recs: make([][2]int, n)}
	// the ids and types are substrings of one copy of the index, not a
	// string each (a subslice b of body starts cap(body)-cap(b) into it)
	body, text := rest, string(rest)
	sub := func(b []byte) string { at := cap(body) - cap(b); return text[at : at+len(b)] }
	prev := known.Span[0]
	for i := range n {
		if len(rest) == 0 || rest[0] != '\n' {
			return nil, false
		}
		line := rest[1:]
		if e := bytes.IndexByte(line, '\n'); e >= 0 {
			line, rest = line[:e], line[e:]
		} else {
			rest = nil
		}
		rec, it, ok := indexLine(line, sub)
		if !ok || rec[0] <= prev || rec[1] > known.Span[1] || data[rec[0]] != '{' || data[rec[1]-1] != '}' {
			return nil, false
		}
		if _, dup := f.index[it.ID]; dup {
			return nil, false
		}
		prev = rec[1] - 1
		f.items[i], f.light[i], f.recs[i], f.index[it.ID] = it, true, rec, i
	}
	return f, len(rest) == 0
}

// indexLine reads one item's line: start, end, passes, type, id.
func indexLine(l []byte, sub func([]byte) string) ([2]int, Feature, bool) {
	var rec [2]int
	var it Feature
	var ok bool
	for k := range rec {
		if rec[k], l, ok = number(l); !ok {
			return rec, it, false
		}
	}
	if rec[1] <= rec[0] || len(l) < 2 || l[0] != '0' && l[0] != '1' || l[1] != ' ' {
		return rec, it, false
	}
	it.Passes = l[0] == '1'
	it.Type, it.ID, ok = twoStrings(l[2:], sub)
	return rec, it, ok && it.ID != ""
}

// number reads a decimal number and the space after it.
func number(l []byte) (int, []byte, bool) {
	n, i := 0, 0
	for ; i < len(l) && i < 12 && l[i] >= '0' && l[i] <= '9'; i++ {
		n = n*10 + int(l[i]-'0')
	}
	if i == 0 || i >= len(l) || l[i] != ' ' {
		return 0, nil, false
	}
	return n, l[i+1:], true
}

// twoStrings reads `"type" "id"`, two JSON strings as json.Marshal wrote
// them: as they are when neither holds an escape (nearly always, then as
// sub makes them of b's bytes), else decoded.
func twoStrings(b []byte, sub func([]byte) string) (string, string, bool) {
	if bytes.IndexByte(b, '\\') < 0 {
		e := bytes.IndexByte(b[min(1, len(b)):], '"') + 1
		if len(b) < 5 || b[0] != '"' || e <= 0 || e+3 > len(b)-1 || b[e+1] != ' ' || b[e+2] != '"' || b[len(b)-1] != '"' {
			return "", "", false
		}
		id := b[e+3 : len(b)-1]
		return sub(b[1:e]), sub(id), bytes.IndexByte(id, '"') < 0
	}
	var typ, id string
	dec := json.NewDecoder(bytes.NewReader(b))
	if dec.Decode(&typ) != nil || dec.Decode(&id) != nil || dec.More() {
		return "", "", false
	}
	return typ, id, true
}
