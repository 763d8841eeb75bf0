package features

import (
	"bytes"
	"strings"

	"github.com/baton-cli/baton/internal/jsondoc"
)

// A trusted read (a list baton wrote or validated in full) is what every
// write naming a feature makes, so it reads no more of the list than those
// writes use: in one pass over the array, each item's id, type and passes
// (jsondoc.SplitKeys), the rest of an item only when it is asked for. The
// answers are those of the full read: an item whose id, type or passes is
// not a plain value is read whole at once, and anything else the pass does
// not vouch for (a duplicate id, an item the full read refuses) leaves the
// list to the full read, which decides and words the error.

// lightKeys are the members a light item holds, in SplitKeys' order.
var lightKeys = []string{"id", "type", "passes"}

// parseLight reads the items of a trusted list as light ones; false when
// the full read must decide.
func parseLight(doc *jsondoc.Doc) (*File, bool) {
	arr := doc.Array("features")
	vals, ok := arr.SplitKeys(lightKeys)
	if !ok {
		return nil, false
	}
	elems := arr.Elems()
	f := &File{doc: doc, index: make(map[string]int, len(elems)), items: make([]Feature, len(elems)), light: make([]bool, len(elems))}
	for i, raw := range elems {
		v := vals[i*len(lightKeys) : (i+1)*len(lightKeys)]
		id, idOK := plainString(v[0])
		typ, typOK := plainString(v[1])
		passes, passesOK := plainBool(v[2])
		if idOK && v[0] != nil && strings.TrimSpace(id) != "" && typOK && passesOK {
			f.items[i], f.light[i] = Feature{ID: id, Type: typ, Passes: passes}, true
		} else {
			item, err := parseItem(raw)
			if err != nil {
				return nil, false
			}
			f.items[i] = item
		}
		if _, dup := f.index[f.items[i].ID]; dup {
			return nil, false
		}
		f.index[f.items[i].ID] = i
	}
	return f, true
}

// plainString reads a member's raw value as parseItem's String does when
// it is absent, null or a string without escapes (ok false otherwise).
func plainString(raw []byte) (string, bool) {
	switch {
	case raw == nil || string(raw) == "null":
		return "", true
	case len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0:
		return string(raw[1 : len(raw)-1]), true
	}
	return "", false
}

// plainBool reads passes as parseItem does (ok false for any other value,
// which parseItem refuses).
func plainBool(raw []byte) (bool, bool) {
	switch string(raw) {
	case "true":
		return true, true
	case "", "false", "null":
		return false, true
	}
	return false, false
}

// item returns item i whole, reading the rest of a light one first.
func (f *File) item(i int) Feature {
	if f.light != nil && f.light[i] {
		if whole, err := parseItem(f.record(i)); err == nil {
			f.items[i] = whole
		}
		f.light[i] = false
	}
	return f.items[i]
}
