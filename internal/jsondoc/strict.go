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

// Check is the one validation of JSON syntax every state file, reader and
// writer alike, passes: data must be one well-formed JSON value in valid
// UTF-8 with no object holding a key twice. It returns an *InvalidError
// carrying the offset of the first problem.
func Check(data []byte) error {
	if !json.Valid(data) {
		return syntaxError(data)
	}
	if !utf8.Valid(data) {
		return invalidUTF8(data)
	}
	return duplicateKey(data)
}

// syntaxError has encoding/json say where and why data is not JSON.
func syntaxError(data []byte) error {
	var raw json.RawMessage
	err := json.Unmarshal(data, &raw)
	if se, ok := err.(*json.SyntaxError); ok {
		off := int(se.Offset)
		if off > 0 {
			off-- // Offset counts the byte that failed; point at it
		}
		return &InvalidError{Offset: off, Msg: se.Error()}
	}
	if err != nil {
		return &InvalidError{Offset: len(data), Msg: err.Error()}
	}
	return &InvalidError{Offset: 0, Msg: "not valid JSON"}
}

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

// duplicateKey finds the first key given twice in one object of data,
// which is valid JSON: one pass over the bytes that follows only the
// objects, arrays and strings. Keys are compared decoded, so "a" and
// "\u0061" are the same key.
func duplicateKey(data []byte) error {
	var stack []frame
	wantKey := false // the next string is an object's key
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{', '[':
			stack = push(stack, data[i] == '{')
			wantKey = data[i] == '{'
		case '}', ']':
			stack, wantKey = stack[:len(stack)-1], false
		case ',':
			top := &stack[len(stack)-1]
			top.index++
			wantKey = top.object
		case '"':
			end := stringEnd(data, i)
			if wantKey {
				top := &stack[len(stack)-1]
				top.key = data[i+1 : end]
				if top.seen(top.key) {
					return &InvalidError{Offset: i, Path: pathOf(stack, keyText(top.key)), Msg: "duplicate key: the key appears twice in the same object, so readers disagree about its value; remove one of them"}
				}
				wantKey = false
			}
			i = end
		}
	}
	return nil
}

// push opens an object or an array, reusing the room for keys of the one
// closed last at that depth.
func push(stack []frame, object bool) []frame {
	n := len(stack)
	if n == cap(stack) {
		return append(stack, frame{object: object})
	}
	stack = stack[:n+1]
	stack[n] = frame{object: object, keys: stack[n].keys[:0]}
	return stack
}

// stringEnd is the index of the quote that closes the string whose
// opening quote is at data[i]: the next quote after an even run of
// backslashes.
func stringEnd(data []byte, i int) int {
	for j := i + 1; ; j++ {
		q := bytes.IndexByte(data[j:], '"')
		if q < 0 {
			return len(data) - 1
		}
		j += q
		n := 0
		for data[j-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return j
		}
	}
}

// frame is one open object or array during the pass.
type frame struct {
	object   bool
	index    int      // an array's current element
	key      []byte   // an object's current key (raw), for paths
	keys     [][]byte // the keys seen so far (decoded when they hold an escape)
	keyIndex map[string]bool
}

// seen records the raw key in the frame and reports whether it was
// already there.
func (f *frame) seen(raw []byte) bool {
	if bytes.IndexByte(raw, '\\') >= 0 {
		raw = []byte(keyText(raw))
	}
	if f.keyIndex != nil {
		if f.keyIndex[string(raw)] {
			return true
		}
		f.keyIndex[string(raw)] = true
		return false
	}
	for _, k := range f.keys {
		if bytes.Equal(k, raw) {
			return true
		}
	}
	f.keys = append(f.keys, raw)
	if len(f.keys) > 32 { // a long object: looked up, not searched
		f.keyIndex = make(map[string]bool, 64)
		for _, k := range f.keys {
			f.keyIndex[string(k)] = true
		}
	}
	return false
}

// keyText decodes a raw key (the bytes between its quotes).
func keyText(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
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
	for _, f := range stack[:len(stack)-1] {
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
