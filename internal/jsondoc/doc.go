package jsondoc

import (
	"bytes"
	"fmt"

	"github.com/tidwall/gjson"
)

// Doc is a state file: a top-level object some of whose members are arrays
// of records. The records are kept raw, so that a record no command changes
// is written back as it was read.
type Doc struct {
	Top    *Object
	arrays map[string]*Array
	names  []string // the arrays' names, in the order they were declared
}

// Array is a top-level array of raw records (each at depth 2 in the file).
type Array struct {
	elems   [][]byte
	offsets []int // byte offset of each element in the parsed document (-1: new)
	// srcs are the records as read, substrings of the one string the
	// document was parsed from, so that checking a record copies nothing
	// ("": added or replaced since).
	srcs []string
}

// RecordDepth is the depth of a record inside a top-level array.
const RecordDepth = 2

// ParseDoc splits data (already checked with Check) into its members and
// the named arrays into raw records. A named array that is absent is created
// empty; one that is not an array is an *InvalidError.
func ParseDoc(data []byte, arrays ...string) (*Doc, error) {
	src := string(data) // the one copy: every parse below reads substrings of it
	top, err := objectOf(gjson.Parse(src), data, 0)
	if err != nil {
		return nil, &InvalidError{Msg: "the file must hold one JSON object: " + err.Error()}
	}
	d := &Doc{Top: top, arrays: map[string]*Array{}, names: arrays}
	for _, name := range arrays {
		a := &Array{}
		if i := top.index(name); i >= 0 {
			m := top.Members[i]
			r := gjson.Parse(src[m.Offset : m.Offset+len(m.Raw)])
			if !r.IsArray() {
				return nil, &InvalidError{Offset: m.Offset, Path: name, Msg: "expected a JSON array, found " + describe(r)}
			}
			r.ForEach(func(_, v gjson.Result) bool {
				a.elems = append(a.elems, sub(m.Raw, v))
				a.offsets = append(a.offsets, m.Offset+v.Index)
				a.srcs = append(a.srcs, v.Raw)
				return true
			})
		}
		d.arrays[name] = a
	}
	return d, nil
}

// NewDoc returns an empty document with the named arrays.
func NewDoc(arrays ...string) *Doc {
	d := &Doc{Top: NewObject(0), arrays: map[string]*Array{}, names: arrays}
	for _, name := range arrays {
		d.arrays[name] = &Array{}
		d.Top.SetRaw(name, []byte("[]"))
	}
	return d
}

// Array returns the named array (nil when it was not declared).
func (d *Doc) Array(name string) *Array { return d.arrays[name] }

// Bytes encodes the document with its arrays as they are now, ending in a
// newline.
func (d *Doc) Bytes() []byte {
	for _, name := range d.names { // keep every declared array a member
		if !d.Top.Has(name) {
			d.Top.SetRaw(name, []byte("[]"))
		}
	}
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, m := range d.Top.Members {
		b.WriteString("  ")
		b.Write(quote(m.Key))
		b.WriteString(": ")
		if a, ok := d.arrays[m.Key]; ok {
			a.write(&b)
		} else {
			b.Write(m.Raw)
		}
		if i < len(d.Top.Members)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// write encodes the array at depth 1 into b, one record a line.
func (a *Array) write(b *bytes.Buffer) {
	if len(a.elems) == 0 {
		b.WriteString("[]")
		return
	}
	b.WriteString("[\n")
	for i, e := range a.elems {
		b.WriteString("    ")
		b.Write(e)
		if i < len(a.elems)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("  ]")
}

// Elems returns the records.
func (a *Array) Elems() [][]byte { return a.elems }

// Len is the number of records.
func (a *Array) Len() int { return len(a.elems) }

// Parsed returns record i parsed.
func (a *Array) Parsed(i int) gjson.Result {
	if i < len(a.srcs) && a.srcs[i] != "" {
		return gjson.Parse(a.srcs[i])
	}
	return gjson.ParseBytes(a.elems[i])
}

// Last returns the last record (nil when there is none).
func (a *Array) Last() []byte {
	if len(a.elems) == 0 {
		return nil
	}
	return a.elems[len(a.elems)-1]
}

// FromEnd calls fn with the records from the last one backwards until fn
// returns false.
func (a *Array) FromEnd(fn func(raw []byte) bool) {
	for i := len(a.elems) - 1; i >= 0; i-- {
		if !fn(a.elems[i]) {
			return
		}
	}
}

// Append adds a record encoded from v and returns its raw form.
func (a *Array) Append(v any) ([]byte, error) {
	raw, err := Indent(v, RecordDepth)
	if err != nil {
		return nil, err
	}
	a.AppendRaw(raw)
	return raw, nil
}

// AppendRaw adds an already-encoded record (at record depth).
func (a *Array) AppendRaw(raw []byte) {
	a.elems = append(a.elems, raw)
	a.offsets = append(a.offsets, -1)
	a.srcs = append(a.srcs, "")
}

// Record parses element i as an object at record depth.
func (a *Array) Record(i int) (*Object, error) {
	return ParseObject(a.elems[i], RecordDepth)
}

// Replace stores o as element i.
func (a *Array) Replace(i int, o *Object) {
	a.elems[i] = o.Bytes()
	if i < len(a.srcs) {
		a.srcs[i] = ""
	}
}

// Invalid builds an *InvalidError for element i of the array name.
func (a *Array) Invalid(name string, i int, field, format string, args ...any) *InvalidError {
	path := fmt.Sprintf("%s[%d]", name, i)
	if field != "" {
		path += "." + field
	}
	off := 0
	if i < len(a.offsets) && a.offsets[i] > 0 {
		off = a.offsets[i]
	}
	return &InvalidError{Offset: off, Path: path, Msg: fmt.Sprintf(format, args...)}
}
