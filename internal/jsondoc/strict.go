package jsondoc

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The strict half of Check: after the grammar, the two things encoding/json
// and gjson let through silently. A duplicate key makes every reader pick one
// of the values (gjson the first, encoding/json the last), so a file with two
// "sessions" arrays reads as one history and is written back as the other;
// invalid UTF-8 is read as U+FFFD and written back changed. Both are refused
// wherever a state file is read, by readers and writers alike. The scan
// that checks the grammar (scan.go) finds the duplicates; invalidUTF8
// names the first bad byte.

// invalidUTF8 reports the first invalid UTF-8 byte of data.
func invalidUTF8(data []byte) error {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return &InvalidError{Offset: i, Msg: fmt.Sprintf("invalid UTF-8 byte 0x%02x (state files must be UTF-8 text)", data[i])}
		}
		i += n
	}
	return nil
}

// frame is one open object or array during the scan.
type frame struct {
	object   bool
	index    int      // an array's current element
	key      []byte   // an object's current key (raw), for paths
	keys     [][]byte // the keys seen so far (raw, between the quotes)
	keyIndex map[string]bool

	// for Validate (shape.go)
	shape *Shape        // an object's shape (nil: not checked)
	found uint32        // an object's wants seen
	recs  *recordsShape // an array of records
	start int           // an array's opening bracket
	last  [2]int        // an array's last element
}

// seen records key in the frame and reports whether it was already there.
// Keys are compared decoded, so "a" and "\u0061" are the same key; esc
// says whether raw holds an escape.
func (f *frame) seen(raw []byte, esc bool) bool {
	if esc {
		raw = []byte(keyText(raw)) // compared decoded: "a" and "\u0061" are one key
	}
	if f.keyIndex != nil {
		if f.keyIndex[string(raw)] {
			return true
		}
		f.keyIndex[string(raw)] = true
		return false
	}
	for _, k := range f.keys {
		if string(k) == string(raw) {
			return true
		}
	}
	f.keys = append(f.keys, raw)
	if len(f.keys) > 32 {
		f.keyIndex = make(map[string]bool, 64)
		for _, k := range f.keys {
			f.keyIndex[string(k)] = true
		}
	}
	return false
}

func containsByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

// keyText decodes a raw key (the bytes between its quotes).
func keyText(raw []byte) string {
	if !containsByte(raw, '\\') {
		return string(raw)
	}
	var s string
	if err := json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s); err != nil {
		return string(raw)
	}
	return s
}

// pathOf names the member key inside the objects and arrays of stack, e.g.
// sessions[3].verdict.
func pathOf(stack []frame, key string) string {
	var b strings.Builder
	for i, f := range stack {
		if i == len(stack)-1 {
			break
		}
		if f.object {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(keyText(f.key))
		} else {
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		}
	}
	if b.Len() > 0 {
		b.WriteByte('.')
	}
	b.WriteString(key)
	return b.String()
}
