package jsondoc_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"unicode/utf8"

	"github.com/baton-cli/baton/internal/jsondoc"
)

func addSeeds(f *testing.F) {
	for _, s := range []string{
		seedProgress, customProgress, `{}`, `[]`, `{"a":1}`, `{"a":[1,{"b":null}],"a":2}`,
		`{"\u00e9\"":"x"}`, `{"a":}`, "{\n  \"a\": tru\n}", `"\ud800"`, "\"\xff\"", ` 1e5 `, `-0.0E-0`,
		`{"sessions":[{"session_id":1},{"session_id":2}]}`,
		`{"sessions":[],"sessions":[]}`, `{"a":{"b":1,"b":2}}`, `[{"a":1},{"a":1}]`, `{"a":1,"\u0061":2}`,
		`{"reviews":[{"verdict":"PASS","verdict":"REJECT"}]}`, "{\"a\":\"\xc3\x28\"}", "{\"\xed\xa0\x80\":1}",
	} {
		f.Add([]byte(s))
	}
}

// FuzzCheck: Check, the one validation every state file passes, accepts
// exactly what encoding/json accepts that is also valid UTF-8 and holds no
// duplicate key (found by an independent decoder), and a rejection carries
// an offset inside the input.
func FuzzCheck(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		err := jsondoc.Check(data)
		if valid := strictValid(data); (err == nil) != valid {
			t.Fatalf("Check(%q) = %v but the reference says valid = %v", data, err, valid)
		}
		if err == nil {
			return
		}
		var ie *jsondoc.InvalidError
		if !errors.As(err, &ie) {
			t.Fatalf("Check error %T, want *InvalidError", err)
		}
		if ie.Offset < 0 || ie.Offset > len(data) {
			t.Fatalf("offset %d outside input of %d bytes", ie.Offset, len(data))
		}
		line, col := jsondoc.Position(data, ie.Offset)
		if line < 1 || col < 1 {
			t.Fatalf("Position = %d:%d", line, col)
		}
	})
}

// FuzzParseObject: a valid object survives ParseObject/Bytes with every
// value byte for byte, and re-encoding is stable. The same holds for a Doc
// with a declared array.
func FuzzParseObject(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := jsondoc.ParseObject(data, 0) // must not panic, even on bad input
		if jsondoc.Check(data) != nil {
			return
		}
		if err != nil {
			return // not an object
		}
		out := o.Bytes()
		if !json.Valid(out) {
			t.Fatalf("Bytes is not JSON:\n%s\nfrom %q", out, data)
		}
		o2, err := jsondoc.ParseObject(out, 0)
		if err != nil {
			t.Fatalf("Bytes does not parse again: %v\n%s", err, out)
		}
		if len(o2.Members) != len(o.Members) {
			t.Fatalf("%d members became %d", len(o.Members), len(o2.Members))
		}
		for i := range o.Members {
			if !bytes.Equal(o.Members[i].Raw, o2.Members[i].Raw) {
				t.Fatalf("member %d value %s became %s", i, o.Members[i].Raw, o2.Members[i].Raw)
			}
		}
		if out2 := o2.Bytes(); !bytes.Equal(out, out2) {
			t.Fatalf("re-encoding is not stable:\n%s\nthen\n%s", out, out2)
		}

		d, err := jsondoc.ParseDoc(data, "sessions")
		if err != nil {
			return // sessions is not an array
		}
		dout := d.Bytes()
		if !json.Valid(dout) {
			t.Fatalf("Doc.Bytes is not JSON:\n%s\nfrom %q", dout, data)
		}
		d2, err := jsondoc.ParseDoc(dout, "sessions")
		if err != nil {
			t.Fatalf("Doc.Bytes does not parse again: %v\n%s", err, dout)
		}
		if dout2 := d2.Bytes(); !bytes.Equal(dout, dout2) {
			t.Fatalf("Doc re-encoding is not stable:\n%s\nthen\n%s", dout, dout2)
		}
	})
}

// strictValid is the reference for Check: encoding/json's grammar, valid
// UTF-8, and no object with a key twice (keys compared decoded, found with
// encoding/json's token stream).
func strictValid(data []byte) bool {
	if !json.Valid(data) || !utf8.Valid(data) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // 1e700 is valid JSON, though no float64
	type level struct {
		object bool
		keys   map[string]bool
		key    bool // the next string token is a key
	}
	var stack []*level
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				if top != nil && top.object {
					top.key = true
				}
				stack = append(stack, &level{object: v == '{', keys: map[string]bool{}, key: true})
			} else {
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.object && top.key {
				if top.keys[v] {
					return false
				}
				top.keys[v] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.object {
			top.key = true
		}
	}
}
