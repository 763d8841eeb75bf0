package jsondoc

import "fmt"

// Doc is a state file: a top-level object some of whose members are arrays
// of records. The records are kept raw and only decoded when a command needs
// them, so that rewriting a file with ten thousand sessions touches one.
type Doc struct {
	Top    *Object
	arrays map[string]*Array
	names  []string // the arrays' names, in the order they were declared
}

// Array is a top-level array of raw records (each at depth 2 in the file).
type Array struct {
	Elems   [][]byte
	Offsets []int // byte offset of each element in the parsed document
}

// RecordDepth is the depth of a record inside a top-level array.
const RecordDepth = 2

// ParseDoc splits data (already checked with Check) into its members and
// the named arrays into raw records. A named array that is absent is created
// empty; one that is not an array is an *InvalidError.
func ParseDoc(data []byte, arrays ...string) (*Doc, error) {
	top, err := ParseObject(data, 0)
	if err != nil {
		return nil, &InvalidError{Msg: "the file must hold one JSON object: " + err.Error()}
	}
	d := &Doc{Top: top, arrays: map[string]*Array{}, names: arrays}
	for _, name := range arrays {
		i := top.index(name)
		if i < 0 {
			d.arrays[name] = &Array{}
			continue
		}
		m := top.Members[i]
		elems, offs, err := SplitArray(m.Raw)
		if err != nil {
			return nil, &InvalidError{Offset: m.Offset, Path: name, Msg: err.Error()}
		}
		for j := range offs {
			offs[j] += m.Offset
		}
		d.arrays[name] = &Array{Elems: elems, Offsets: offs}
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
	for _, name := range d.names {
		d.Top.SetRaw(name, JoinArray(d.arrays[name].Elems, 1))
	}
	return append(d.Top.Bytes(), '\n')
}

// Append adds a record encoded from v and returns its raw form.
func (a *Array) Append(v any) ([]byte, error) {
	raw, err := Indent(v, RecordDepth)
	if err != nil {
		return nil, err
	}
	a.Elems = append(a.Elems, raw)
	a.Offsets = append(a.Offsets, -1)
	return raw, nil
}

// Record parses element i as an object at record depth.
func (a *Array) Record(i int) (*Object, error) {
	return ParseObject(a.Elems[i], RecordDepth)
}

// Replace stores o as element i.
func (a *Array) Replace(i int, o *Object) { a.Elems[i] = o.Bytes() }

// Invalid builds an *InvalidError for element i of the array name.
func (a *Array) Invalid(name string, i int, field, format string, args ...any) *InvalidError {
	path := fmt.Sprintf("%s[%d]", name, i)
	if field != "" {
		path += "." + field
	}
	off := 0
	if i < len(a.Offsets) && a.Offsets[i] > 0 {
		off = a.Offsets[i]
	}
	return &InvalidError{Offset: off, Path: path, Msg: fmt.Sprintf(format, args...)}
}
