// Package jsondoc keeps a JSON document as its members in order with their
// values raw, so that baton can change one field of one record and write
// the file back with everything else — unknown fields, their order, their
// values — as it was, and it checks a state file strictly: its syntax, a
// key given twice, invalid UTF-8. encoding/json decodes into maps or structs,
// which lose the members' order and every field the struct does not name,
// and neither it nor gjson refuses a duplicate key: that is what this
// package adds.
//
// Output is indented with two spaces per level, as the seed files are.
package jsondoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// TimeFormat is how every timestamp is written: ISO 8601, UTC, seconds.
const TimeFormat = "2006-01-02T15:04:05Z"

// Timestamp formats t as the state files store it.
func Timestamp(t time.Time) string { return t.UTC().Format(TimeFormat) }

// ParseTime reads the timestamp forms found in state files: the seed's own,
// RFC 3339 with fractions or offsets, and the predecessor's isoformat().
func ParseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05.999999-07:00", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO 8601 timestamp (want e.g. 2025-01-29T10:00:00Z)", s)
}

// Member is one key of an object with its raw JSON value.
type Member struct {
	Key    string
	Raw    []byte
	Offset int // byte offset of Raw in the parsed input, for error positions
}

// Object is a JSON object kept as raw members in document order. Depth is its
// nesting level in the file (0 for the top-level object); values set on it are
// indented to match.
type Object struct {
	Members []Member
	Depth   int
}

// NewObject returns an empty object at the given depth.
func NewObject(depth int) *Object { return &Object{Depth: depth} }

// ParseObject splits a raw JSON object into its members. The input must
// already be known to be valid JSON (see Check).
func ParseObject(raw []byte, depth int) (*Object, error) {
	return objectOf(gjson.ParseBytes(raw), raw, depth)
}

// objectOf is ParseObject of r, raw parsed.
func objectOf(r gjson.Result, raw []byte, depth int) (*Object, error) {
	if !r.IsObject() {
		return nil, fmt.Errorf("expected a JSON object, found %s", describe(r))
	}
	o := &Object{Depth: depth}
	r.ForEach(func(k, v gjson.Result) bool {
		o.Members = append(o.Members, Member{Key: strings.Clone(k.Str), Raw: sub(raw, v), Offset: v.Index})
		return true
	})
	return o, nil
}

// sub returns v's raw bytes as a slice of raw (v came from parsing raw),
// so that records are not copied.
func sub(raw []byte, v gjson.Result) []byte {
	if v.Index > 0 && v.Index+len(v.Raw) <= len(raw) {
		return raw[v.Index : v.Index+len(v.Raw) : v.Index+len(v.Raw)]
	}
	return []byte(v.Raw)
}

func describe(r gjson.Result) string {
	switch {
	case r.IsArray():
		return "an array"
	case r.Type == gjson.String:
		return "a string"
	case r.Type == gjson.Number:
		return "a number"
	case r.Type == gjson.True, r.Type == gjson.False:
		return "a boolean"
	case r.Type == gjson.Null:
		return "null"
	}
	return "nothing"
}

func (o *Object) index(key string) int {
	for i := len(o.Members) - 1; i >= 0; i-- {
		if o.Members[i].Key == key {
			return i
		}
	}
	return -1
}

// Raw returns the raw value of key, or nil when absent.
func (o *Object) Raw(key string) []byte {
	if i := o.index(key); i >= 0 {
		return o.Members[i].Raw
	}
	return nil
}

// Has reports whether key is present.
func (o *Object) Has(key string) bool { return o.index(key) >= 0 }

// Get decodes the value of key into v; an absent key leaves v unchanged.
func (o *Object) Get(key string, v any) error {
	raw := o.Raw(key)
	if raw == nil {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// SetRaw sets key to an already-encoded value, keeping its position when the
// key exists and appending it otherwise.
func (o *Object) SetRaw(key string, raw []byte) {
	if i := o.index(key); i >= 0 {
		o.Members[i].Raw = raw
		return
	}
	o.Members = append(o.Members, Member{Key: key, Raw: raw})
}

// Set encodes v at this object's depth and sets key to it.
func (o *Object) Set(key string, v any) error {
	raw, err := Indent(v, o.Depth+1)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", key, err)
	}
	o.SetRaw(key, raw)
	return nil
}

// Bytes encodes the object, indented for its depth.
func (o *Object) Bytes() []byte {
	if len(o.Members) == 0 {
		return []byte("{}")
	}
	var b bytes.Buffer
	inner := indentOf(o.Depth + 1)
	b.WriteString("{\n")
	for i, m := range o.Members {
		b.WriteString(inner)
		b.Write(quote(m.Key))
		b.WriteString(": ")
		b.Write(m.Raw)
		if i < len(o.Members)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(indentOf(o.Depth))
	b.WriteByte('}')
	return b.Bytes()
}

// Decode decodes the whole object into v (unknown keys are ignored by v but
// stay in o).
func (o *Object) Decode(v any) error { return json.Unmarshal(o.Bytes(), v) }

func indentOf(depth int) string { return strings.Repeat("  ", depth) }

func quote(s string) []byte {
	s = strings.ToValidUTF8(s, "\uFFFD") // so that a second rewrite encodes it the same way
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimRight(b.Bytes(), "\n")
}

// Indent encodes v as JSON indented for a value that sits at depth.
func Indent(v any, depth int) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(indentOf(depth), "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Compact encodes v as compact JSON without HTML escaping (text such as
// "a < b" is stored as written).
func Compact(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return json.RawMessage("null")
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// Pretty encodes v as a standalone, indented JSON document without a
// trailing newline (the output form of every command).
func Pretty(v any) []byte {
	b, err := Indent(v, 0)
	if err != nil {
		return []byte(fmt.Sprintf("%q", err.Error()))
	}
	return b
}

// SplitArray returns the raw elements of a JSON array and the byte offset of
// each inside raw.
func SplitArray(raw []byte) (elems [][]byte, offsets []int, err error) {
	r := gjson.ParseBytes(raw)
	if !r.IsArray() {
		return nil, nil, fmt.Errorf("expected a JSON array, found %s", describe(r))
	}
	r.ForEach(func(_, v gjson.Result) bool {
		elems = append(elems, sub(raw, v))
		offsets = append(offsets, v.Index)
		return true
	})
	return elems, offsets, nil
}

// JoinArray encodes raw elements as an array that sits at depth.
func JoinArray(elems [][]byte, depth int) []byte {
	if len(elems) == 0 {
		return []byte("[]")
	}
	n := 0
	for _, e := range elems {
		n += len(e) + 2*depth + 8
	}
	b := bytes.NewBuffer(make([]byte, 0, n))
	inner := indentOf(depth + 1)
	b.WriteString("[\n")
	for i, e := range elems {
		b.WriteString(inner)
		b.Write(e)
		if i < len(elems)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(indentOf(depth))
	b.WriteByte(']')
	return b.Bytes()
}

// InvalidError says where and why a document does not have the shape baton
// requires. Offset is a byte offset into the document.
type InvalidError struct {
	Offset int
	Path   string // the JSON path of the offending value, e.g. sessions[3].session_id
	Msg    string
}

func (e *InvalidError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// MaxID is the largest record id baton accepts: ids stay exact in every
// JSON reader (2^53) and the next id never overflows.
const MaxID = 1 << 53

// ErrIDsExhausted is returned when the next id would pass MaxID.
// (The number is MaxID's, spelled out: fmt at package initialisation
// would run in every baton process.)
var ErrIDsExhausted = errors.New("the next id would exceed 9007199254740992: no more records can be added to this file")

// NextID returns the id after max, or ErrIDsExhausted.
func NextID(max int) (int, error) {
	if max >= MaxID {
		return 0, ErrIDsExhausted
	}
	return max + 1, nil
}

// PositiveID reads a record id: a whole number from 1 to MaxID.
func PositiveID(r gjson.Result) (int, bool) {
	if r.Type != gjson.Number || r.Num != float64(r.Int()) || r.Int() < 1 || r.Int() > MaxID {
		return 0, false
	}
	return int(r.Int()), true
}

// Position turns a byte offset into a 1-based line and column.
func Position(data []byte, offset int) (line, col int) {
	if offset > len(data) {
		offset = len(data)
	}
	if offset < 0 {
		offset = 0
	}
	before := data[:offset]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = offset - bytes.LastIndexByte(before, '\n')
	return line, col
}

// Reindent formats a raw value found at any depth as a standalone document.
func Reindent(raw []byte) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return raw
	}
	return b.Bytes()
}
