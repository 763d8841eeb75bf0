package jsondoc

import (
	"fmt"
	"slices"
	"sort"
	"unicode/utf8"
)

// The one-pass validation. A reader that meets a state file baton did not
// write validates all of it: before, the grammar scan (Check) and then a
// second walk through gjson for the types, enums, required members and
// record ids, each record parsed again. Validate does both in the scan
// itself: a Shape says, per object, the members it must or may have, which
// members hold objects checked in turn, and which hold arrays of records
// with unique ids, and the scanner checks each value as it passes it.
//
// Validate only answers "valid" or "not known valid": it never writes an
// error. A file it does not accept is parsed by the domain package's full
// parser, which finds the problem and reports it with the same text,
// record and position as it always has — so a valid file the fast pass is
// unsure of (an escaped key, a number written as 1.0, null where a member
// is not normally null) costs only the old, slower validation, and a bad
// file gets the message it always got. What Validate accepts, the full
// parser accepts (the differential tests and fuzz targets hold it to that).

// Shape is what an object of a state file holds, for Validate.
type Shape struct {
	wants    []Want
	required uint32   // bit j: wants[j] is required
	inner    []*Shape // by want: the shape of the member's value when it is an object
	records  []*recordsShape
	id       int // the want that is the record's id (-1: none)
}

// recordsShape is a top-level member holding an array of records.
type recordsShape struct {
	name   string
	record *Shape
}

// NewShape is the shape of an object whose members must be as wants say.
func NewShape(wants []Want) *Shape {
	if len(wants) > 31 {
		panic("jsondoc: a shape has at most 31 members")
	}
	s := &Shape{wants: wants, id: -1, inner: make([]*Shape, len(wants)), records: make([]*recordsShape, len(wants))}
	for j, w := range wants {
		if w.Required {
			s.required |= 1 << j
		}
	}
	return s
}

func (s *Shape) want(key string) int {
	for j := range s.wants {
		if s.wants[j].Key == key {
			return j
		}
	}
	panic(fmt.Sprintf("jsondoc: %q is not a member of the shape", key))
}

// Inner checks the value of member key, when it is an object, with inner.
func (s *Shape) Inner(key string, inner *Shape) *Shape {
	s.inner[s.want(key)] = inner
	return s
}

// Records makes member key an array of records, each an object of shape
// record (its Inner members named first) with a member id holding a
// unique whole number from 1 to MaxID; Validate reports the array's facts.
// Arrays of records are the top-level object's.
func (s *Shape) Records(key, id string, record *Shape) *Shape {
	r := NewShape(append([]Want{{Key: id, Type: TypeInt, Required: true}}, record.wants...))
	copy(r.inner[1:], record.inner)
	r.id = 0
	s.records[s.want(key)] = &recordsShape{name: key, record: r}
	return s
}

// valueFits reports whether the raw value v (whole, grammar already
// checked) is one want w accepts, as checkValueAt would — or false when
// that cannot be told cheaply here (the full parser then decides). esc
// says whether v, when a string, holds an escape.
func valueFits(v []byte, w *Want, esc bool) bool {
	var t string
	switch v[0] {
	case 'n':
		return w.Null // null where the member is not nullable: left to the full parser
	case '{':
		t = TypeObject
	case '[':
		t = TypeArray
	case '"':
		if w.Type != TypeString && w.Also != TypeString {
			return false
		}
		if w.Enum == nil {
			return true
		}
		return !esc && oneOf(string(v[1:len(v)-1]), w.Enum)
	case 't', 'f':
		t = TypeBool
	default:
		if w.Type == TypeNumber || w.Also == TypeNumber {
			return true
		}
		t = TypeInt
		if !plainInt(v) {
			return false
		}
	}
	return w.Type == t || w.Also == t
}

// plainInt reports whether v is an integer written in digits that a
// float64 holds exactly (at most 15 digits): a whole number however
// gjson reads it.
func plainInt(v []byte) bool {
	if v[0] == '-' {
		v = v[1:]
	}
	if len(v) == 0 || len(v) > 15 {
		return false
	}
	for _, c := range v {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// recordID reads a record id written as plain digits, 1 to MaxID (0: not
// one, or not plainly written).
func recordID(v []byte) int64 {
	if len(v) == 0 || len(v) > 16 || v[0] < '1' || v[0] > '9' {
		return 0
	}
	var n int64
	for _, c := range v {
		if !isDigit(c) {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	if n > MaxID {
		return 0
	}
	return n
}

// uniqueIDs reports whether ids holds no id twice (sorting it when it is
// not already ascending, as a file's records usually are), and the
// largest.
func uniqueIDs(ids []int64) (max int64, ok bool) {
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
			for k := 1; k < len(ids); k++ {
				if ids[k] == ids[k-1] {
					return 0, false
				}
			}
			break
		}
	}
	if len(ids) == 0 {
		return 0, true
	}
	return slices.Max(ids), true
}

// Validate checks data as Check does and, in the same pass, the shape of
// its top-level object; it returns the facts of the arrays of records
// (as Doc.ReadFacts gives them after a full parse, with the largest id). ok false says only
// that data is not known valid: the caller runs the full parser, which
// decides and words the error.
func Validate(data []byte, top *Shape) (facts Facts, ok bool) {
	s := &scanner{data: data, stack: make([]frame, 0, 16), facts: Facts{}}
	if s.ws() >= len(data) || data[s.i] != '{' {
		return nil, false
	}
	s.next = top
	if !s.value() || s.ws() != len(data) || s.deep || s.dup != nil || s.bad {
		return nil, false
	}
	if !utf8.Valid(data) {
		return nil, false
	}
	return s.facts, true
}

// ValidateOr is Validate with full, the format's full parser, for what
// the one pass does not vouch for: full then decides, words the error, and
// gives the facts of what it accepts.
func ValidateOr[T interface{ ReadFacts() Facts }](data []byte, top *Shape, full func([]byte) (T, error)) (Facts, error) {
	if facts, ok := Validate(data, top); ok {
		return facts, nil
	}
	f, err := full(data)
	if err != nil {
		return nil, err
	}
	return f.ReadFacts(), nil
}

// member finds key among the wants of the object f being scanned and
// sets what its value is checked with; -1 when the shape does not name it
// (the scan then looks for it among the other keys). A named member given
// twice is a duplicate key.
func (s *scanner) member(f *frame, key []byte, esc bool) int {
	if esc {
		s.bad = true // keys are matched decoded: the full parser's to match
		return -1
	}
	sh := f.shape
	for j := range sh.wants {
		if sh.wants[j].Key == string(key) {
			if f.found&(1<<j) != 0 {
				s.bad = true
			}
			s.next, s.nextRecs = sh.inner[j], sh.records[j]
			return j
		}
	}
	return -1
}

// fits checks the value just scanned (from vs) against want j of the
// object being scanned.
func (s *scanner) fits(j, vs int) {
	f := &s.stack[len(s.stack)-1]
	f.found |= 1 << j
	v := s.data[vs:s.i]
	if j == f.shape.id {
		id := recordID(v)
		if id == 0 {
			s.bad = true
		}
		s.ids = append(s.ids, id)
		return
	}
	if !valueFits(v, &f.shape.wants[j], s.escaped) {
		s.bad = true
	}
}

// record starts element vs of an array of records: an object of the
// records' shape.
func (s *scanner) record(rs *recordsShape, vs int) {
	if vs >= len(s.data) || s.data[vs] != '{' {
		s.bad = true
		return
	}
	s.next = rs.record
}

// closeObject ends the object being scanned (at its closing brace),
// checking that its required members were there.
func (s *scanner) closeObject() {
	if f := &s.stack[len(s.stack)-1]; f.shape != nil && f.found&f.shape.required != f.shape.required {
		s.bad = true
	}
	s.pop()
}

// closeArray ends the array being scanned (at its closing bracket), of n
// elements; an array of records gets its facts.
func (s *scanner) closeArray(n int) {
	if f := &s.stack[len(s.stack)-1]; f.recs != nil {
		max, ok := uniqueIDs(s.ids)
		if !ok {
			s.bad = true
		}
		af := ArrayFacts{Count: n, MaxID: int(max), Span: [2]int{f.start, s.i + 1}}
		if n > 0 {
			af.Last = f.last
		}
		s.facts[f.recs.name] = af
	}
	s.pop()
}
