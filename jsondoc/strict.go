package jsondoc

import (
	"bytes"
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
// wherever a state file is read, by readers and writers alike.

// strictCheck reports the first invalid UTF-8 byte or duplicate key in
// data, which is already known to be well-formed JSON — unless data nests
// deeper than encoding/json accepts (deep; no error then: the caller
// reports that). One pass over the structure finds both the depth and the
// duplicates.
func strictCheck(data []byte) (deep bool, err error) {
	deep, dup := duplicateKeys(data)
	if deep {
		return true, nil
	}
	if !utf8.Valid(data) {
		return false, invalidUTF8(data)
	}
	return false, dup
}

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

// frame is one open object or array during the duplicate-key scan.
type frame struct {
	object   bool
	expect   bool     // an object expects a key next
	index    int      // an array's current element
	key      []byte   // an object's current key (raw), for paths
	keys     [][]byte // the keys seen so far (raw, between the quotes)
	keyIndex map[string]bool
}

// duplicateKeys scans well-formed JSON for an object with a key twice (the
// first one), and for nesting deeper than maxDepth (deep), which it scans
// the whole data for.
func duplicateKeys(data []byte) (deep bool, dup error) {
	stack := make([]frame, 0, 16)
	var spare [][][]byte // key slices of closed objects, reused (no allocation per object)
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{':
			var keys [][]byte
			if n := len(spare); n > 0 {
				keys, spare = spare[n-1][:0], spare[:n-1]
			}
			if stack = append(stack, frame{object: true, expect: true, keys: keys}); len(stack) > maxDepth {
				return true, nil
			}
		case '[':
			if stack = append(stack, frame{}); len(stack) > maxDepth {
				return true, nil
			}
		case '}', ']':
			if top := stack[len(stack)-1]; top.object && top.keyIndex == nil {
				spare = append(spare, top.keys)
			}
			stack = stack[:len(stack)-1]
		case ',':
			if top := len(stack) - 1; top >= 0 {
				if stack[top].object {
					stack[top].expect = true
				} else {
					stack[top].index++
				}
			}
		case '"':
			start := i + 1
			i = stringEnd(data, start)
			top := len(stack) - 1
			if top < 0 || !stack[top].object || !stack[top].expect {
				continue
			}
			f := &stack[top]
			f.expect = false
			if dup == nil && f.seen(data[start:i]) {
				dup = &InvalidError{Offset: start - 1, Path: pathOf(stack, keyText(data[start:i])), Msg: "duplicate key: the key appears twice in the same object, so readers disagree about its value; remove one of them"}
			}
			f.key = data[start:i]
		}
	}
	return false, dup
}

// seen records key in the frame and reports whether it was already there.
// Keys are compared decoded, so "a" and "\u0061" are the same key.
func (f *frame) seen(raw []byte) bool {
	if containsByte(raw, '\\') {
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

// stringEnd returns the index of the quote closing the string that starts
// at start (data is well-formed JSON).
func stringEnd(data []byte, start int) int {
	for i := start; ; {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			return len(data) - 1
		}
		i += j
		bs := 0
		for k := i - 1; k >= start && data[k] == '\\'; k-- {
			bs++
		}
		if bs%2 == 0 {
			return i
		}
		i++
	}
}
