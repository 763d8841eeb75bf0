package jsondoc_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/baton-cli/baton/internal/jsondoc"
)

// seedProgress is the progress.json example of the seed schema, verbatim
// (shared by the packages' tests in testdata/seed).
var seedProgress = func() string {
	b, err := os.ReadFile("../../testdata/seed/progress.json")
	if err != nil {
		panic(err)
	}
	return strings.TrimSuffix(string(b), "\n")
}()

// customProgress is a progress.json as another tool might leave it: unknown
// members at the top, in the status and in the records, with values in
// formatting of their own. It is laid out as baton writes (two spaces per
// level), so a round trip must give it back byte for byte.
const customProgress = `{
  "project": {"name": "Demo", "created_at": "2025-01-29T10:00:00Z", "total_features": 3},
  "x_tool": {"version":2,"list":[1, 2 ,3],"pi":3.14159e+0},
  "status": {
    "updated_at": "2025-01-29T14:30:00Z",
    "current_phase": "REVIEW",
    "x_note": "caf\u00e9 \"quoted\"\n"
  },
  "sessions": [
    {
      "session_id": 1,
      "agent_type": "INITIALIZER",
      "agent_model": "opus-4",
      "tokens": 1.2345e4,
      "outcome": "SUCCESS"
    },
    {"session_id":2,"agent_type":"IMPLEMENT","outcome":"READY_FOR_REVIEW","extra":{"deep":[{"k":null}]}}
  ],
  "trailing_unknown": [true, false]
}`

func TestObjectRoundTripKeepsMembersAndOrder(t *testing.T) {
	in := `{"z": 1, "a":[1,  2], "m" : {"x":"y"}, "n": null, "s": "\u00e9\\", "f": -1.50E+3, "b": true}`
	o, err := jsondoc.ParseObject([]byte(in), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ key, raw string }{
		{"z", `1`}, {"a", `[1,  2]`}, {"m", `{"x":"y"}`}, {"n", `null`},
		{"s", `"\u00e9\\"`}, {"f", `-1.50E+3`}, {"b", `true`},
	}
	if len(o.Members) != len(want) {
		t.Fatalf("got %d members, want %d", len(o.Members), len(want))
	}
	for i, w := range want {
		m := o.Members[i]
		if m.Key != w.key || string(m.Raw) != w.raw {
			t.Errorf("member %d = %q: %s, want %q: %s", i, m.Key, m.Raw, w.key, w.raw)
		}
		if got := in[m.Offset : m.Offset+len(m.Raw)]; got != w.raw {
			t.Errorf("member %q: Offset %d points at %q, want its value", m.Key, m.Offset, got)
		}
	}
	wantOut := "{\n" +
		"  \"z\": 1,\n" +
		"  \"a\": [1,  2],\n" +
		"  \"m\": {\"x\":\"y\"},\n" +
		"  \"n\": null,\n" +
		"  \"s\": \"\\u00e9\\\\\",\n" +
		"  \"f\": -1.50E+3,\n" +
		"  \"b\": true\n" +
		"}"
	out := o.Bytes()
	if string(out) != wantOut {
		t.Fatalf("Bytes:\n%s\nwant:\n%s", out, wantOut)
	}
	again, err := jsondoc.ParseObject(out, 0)
	if err != nil {
		t.Fatal(err)
	}
	if string(again.Bytes()) != string(out) {
		t.Errorf("second round trip changed the bytes:\n%s", again.Bytes())
	}
}

func TestObjectBytesIndentsForDepth(t *testing.T) {
	o, err := jsondoc.ParseObject([]byte(`{"a":1,"b":[2]}`), 2)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n      \"a\": 1,\n      \"b\": [2]\n    }"
	if got := string(o.Bytes()); got != want {
		t.Errorf("depth 2 Bytes = %q, want %q", got, want)
	}
	if got := string(jsondoc.NewObject(3).Bytes()); got != "{}" {
		t.Errorf("empty object = %q, want {}", got)
	}
}

func TestObjectKeysWithEscapes(t *testing.T) {
	o, err := jsondoc.ParseObject([]byte(`{"a\"b": 1, "\u00e9": 2, "<&>": 3}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{o.Members[0].Key, o.Members[1].Key, o.Members[2].Key}
	if keys[0] != `a"b` || keys[1] != "é" || keys[2] != "<&>" {
		t.Fatalf("keys = %q", keys)
	}
	out := o.Bytes()
	if !bytes.Contains(out, []byte(`"<&>": 3`)) {
		t.Errorf("key HTML-escaped or changed: %s", out)
	}
	var m map[string]int
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if m[`a"b`] != 1 || m["é"] != 2 || m["<&>"] != 3 {
		t.Errorf("decoded %v", m)
	}
}

func TestParseObjectRejectsNonObjects(t *testing.T) {
	for _, in := range []string{`[1]`, `"s"`, `1`, `true`, `null`, ``} {
		if _, err := jsondoc.ParseObject([]byte(in), 0); err == nil {
			t.Errorf("ParseObject(%q) succeeded, want an error", in)
		}
	}
}

func TestObjectSetReplacesInPlaceOrAppends(t *testing.T) {
	tests := []struct {
		name  string
		depth int
		key   string
		value any
		want  string
	}{
		{"replace keeps position", 0, "b", 5,
			"{\n  \"a\": 1,\n  \"b\": 5,\n  \"c\": 3\n}"},
		{"append at end", 0, "d", "new",
			"{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3,\n  \"d\": \"new\"\n}"},
		{"nested value indented for depth 0", 0, "b", map[string][]int{"x": {1}},
			"{\n  \"a\": 1,\n  \"b\": {\n    \"x\": [\n      1\n    ]\n  },\n  \"c\": 3\n}"},
		{"nested value indented for depth 1", 1, "c", map[string]int{"y": 2},
			"{\n    \"a\": 1,\n    \"b\": 2,\n    \"c\": {\n      \"y\": 2\n    }\n  }"},
		{"no HTML escaping", 0, "a", "<a & b>",
			"{\n  \"a\": \"<a & b>\",\n  \"b\": 2,\n  \"c\": 3\n}"},
		{"nil pointer is null", 0, "c", (*string)(nil),
			"{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": null\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := jsondoc.ParseObject([]byte(`{"a": 1, "b": 2, "c": 3}`), tt.depth)
			if err != nil {
				t.Fatal(err)
			}
			if err := o.Set(tt.key, tt.value); err != nil {
				t.Fatal(err)
			}
			if got := string(o.Bytes()); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestObjectSetUnencodable(t *testing.T) {
	o := jsondoc.NewObject(0)
	if err := o.Set("ch", make(chan int)); err == nil || !strings.Contains(err.Error(), "ch") {
		t.Errorf("Set(chan) error = %v, want one naming the key", err)
	}
	if o.Has("ch") {
		t.Error("a failed Set left the key behind")
	}
}

func TestObjectAccessors(t *testing.T) {
	o, err := jsondoc.ParseObject([]byte(`{"n": 7, "s": "x", "dup": 1, "dup": 2}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Has("n") || o.Has("missing") {
		t.Error("Has is wrong")
	}
	if o.Raw("missing") != nil {
		t.Error("Raw of an absent key is not nil")
	}
	// With a duplicated key the last one wins, as encoding/json decides.
	if got := string(o.Raw("dup")); got != "2" {
		t.Errorf("Raw(dup) = %s, want the last value 2", got)
	}
	n := -1
	if err := o.Get("n", &n); err != nil || n != 7 {
		t.Errorf("Get(n) = %d, %v", n, err)
	}
	keep := "unchanged"
	if err := o.Get("missing", &keep); err != nil || keep != "unchanged" {
		t.Errorf("Get(missing) changed the value: %q, %v", keep, err)
	}
	if err := o.Get("s", &n); err == nil {
		t.Error("Get of a string into an int succeeded")
	}
	var v struct {
		N int    `json:"n"`
		S string `json:"s"`
	}
	if err := o.Decode(&v); err != nil || v.N != 7 || v.S != "x" {
		t.Errorf("Decode = %+v, %v", v, err)
	}
}

func TestSplitJoinArray(t *testing.T) {
	in := `[ 1 , {"a" : [2]},"s" ,null, [] ]`
	elems, offs, err := jsondoc.SplitArray([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`1`, `{"a" : [2]}`, `"s"`, `null`, `[]`}
	if len(elems) != len(want) || len(offs) != len(want) {
		t.Fatalf("got %d elems and %d offsets, want %d", len(elems), len(offs), len(want))
	}
	for i, w := range want {
		if string(elems[i]) != w {
			t.Errorf("elem %d = %s, want %s", i, elems[i], w)
		}
		if got := in[offs[i] : offs[i]+len(w)]; got != w {
			t.Errorf("offset of elem %d points at %q", i, got)
		}
	}
	joined := jsondoc.JoinArray(elems, 1)
	wantJoined := "[\n    1,\n    {\"a\" : [2]},\n    \"s\",\n    null,\n    []\n  ]"
	if string(joined) != wantJoined {
		t.Errorf("JoinArray =\n%s\nwant\n%s", joined, wantJoined)
	}
	again, _, err := jsondoc.SplitArray(joined)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != len(elems) {
		t.Fatalf("round trip gave %d elems", len(again))
	}
	for i := range elems {
		if !bytes.Equal(again[i], elems[i]) {
			t.Errorf("round trip elem %d = %s, want %s", i, again[i], elems[i])
		}
	}
}

func TestSplitJoinEmptyAndErrors(t *testing.T) {
	elems, offs, err := jsondoc.SplitArray([]byte(" [ ] "))
	if err != nil || len(elems) != 0 || len(offs) != 0 {
		t.Errorf("SplitArray(empty) = %q, %v, %v", elems, offs, err)
	}
	if got := string(jsondoc.JoinArray(nil, 3)); got != "[]" {
		t.Errorf("JoinArray(nil) = %q", got)
	}
	for _, in := range []string{`{}`, `"[1]"`, `7`, ``} {
		if _, _, err := jsondoc.SplitArray([]byte(in)); err == nil {
			t.Errorf("SplitArray(%q) succeeded", in)
		}
	}
}

func TestCheckPosition(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		line, col int // 0 for valid input
	}{
		{"object", `{"a": [1, 2.5e3, null, true, "x"]}`, 0, 0},
		{"scalar with space", "  7 \n", 0, 0},
		{"missing value", `{"a":}`, 1, 6},
		{"missing colon", `{"a" 1}`, 1, 6},
		{"trailing comma in object", "{\n  \"a\": 1,\n}", 3, 1},
		{"missing comma on line 3", "[1,\n 2\n 3]", 3, 2},
		{"broken literal", "{\n  \"a\": tru\n}", 2, 11},
		{"trailing garbage", `{} x`, 1, 4},
		{"bad escape", `"\x01"`, 1, 3},
		{"control character in string", "{\n\"a\": \"x\ty\"}", 2, 8},
		{"empty", ``, 1, 1},
		{"truncated", `{"a":1`, 1, 6},
		{"second line after tabs", "{\n\t\t\"a\": [1,,2]}", 2, 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.in)
			err := jsondoc.Check(data)
			if tt.line == 0 {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			var ie *jsondoc.InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("Check = %v (%T), want *InvalidError", err, err)
			}
			if ie.Offset < 0 || ie.Offset > len(data) {
				t.Fatalf("offset %d outside the input", ie.Offset)
			}
			line, col := jsondoc.Position(data, ie.Offset)
			if line != tt.line || col != tt.col {
				t.Errorf("position = line %d, column %d, want line %d, column %d (%s)", line, col, tt.line, tt.col, ie.Msg)
			}
			if ie.Msg == "" {
				t.Error("empty message")
			}
		})
	}
}

func TestPosition(t *testing.T) {
	data := []byte("ab\ncd\n\nef")
	tests := []struct{ off, line, col int }{
		{0, 1, 1}, {1, 1, 2}, {2, 1, 3}, {3, 2, 1}, {4, 2, 2}, {6, 3, 1}, {7, 4, 1}, {8, 4, 2},
		{9, 4, 3}, {100, 4, 3}, {-5, 1, 1},
	}
	for _, tt := range tests {
		line, col := jsondoc.Position(data, tt.off)
		if line != tt.line || col != tt.col {
			t.Errorf("Position(%d) = %d:%d, want %d:%d", tt.off, line, col, tt.line, tt.col)
		}
	}
}

func TestParseTime(t *testing.T) {
	at := func(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	}
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2025-01-29T10:00:00Z", at(2025, 1, 29, 10, 0, 0, 0)},
		{"2025-01-29T10:00:00.5Z", at(2025, 1, 29, 10, 0, 0, 500000000)},
		{"2025-01-29T10:00:00.123456789Z", at(2025, 1, 29, 10, 0, 0, 123456789)},
		{"2025-01-29T10:00:00+02:00", at(2025, 1, 29, 8, 0, 0, 0)},
		{"2025-01-29T10:00:00-05:30", at(2025, 1, 29, 15, 30, 0, 0)},
		// The predecessor's datetime.now(timezone.utc).isoformat() and naive isoformat().
		{"2025-01-29T10:00:00.123456+00:00", at(2025, 1, 29, 10, 0, 0, 123456000)},
		{"2025-01-29T10:00:00.123456", at(2025, 1, 29, 10, 0, 0, 123456000)},
		{"2025-01-29T10:00:00", at(2025, 1, 29, 10, 0, 0, 0)},
		{"2025-01-29", at(2025, 1, 29, 0, 0, 0, 0)},
	}
	for _, tt := range tests {
		got, err := jsondoc.ParseTime(tt.in)
		if err != nil {
			t.Errorf("ParseTime(%q): %v", tt.in, err)
			continue
		}
		if !got.Equal(tt.want) || got.Location() != time.UTC {
			t.Errorf("ParseTime(%q) = %v, want %v in UTC", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{"", "junk", "2025-01-29 10:00:00", "2025-13-01T00:00:00Z", "2025-01-29T25:00:00Z", "29/01/2025", "2025-01-29T10:00:00ZZ", "1738144800"} {
		if got, err := jsondoc.ParseTime(bad); err == nil {
			t.Errorf("ParseTime(%q) = %v, want an error", bad, got)
		} else if !strings.Contains(err.Error(), "ISO 8601") {
			t.Errorf("ParseTime(%q) error %q does not say what is wanted", bad, err)
		}
	}
}

func TestTimestamp(t *testing.T) {
	in := time.Date(2025, 1, 29, 12, 0, 0, 999, time.FixedZone("x", 2*3600))
	if got := jsondoc.Timestamp(in); got != "2025-01-29T10:00:00Z" {
		t.Errorf("Timestamp = %q", got)
	}
	back, err := jsondoc.ParseTime(jsondoc.Timestamp(in))
	if err != nil || !back.Equal(in.Truncate(time.Second)) {
		t.Errorf("ParseTime(Timestamp) = %v, %v", back, err)
	}
}

func TestDocRoundTripSeed(t *testing.T) {
	d, err := jsondoc.ParseDoc([]byte(seedProgress), "sessions")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(d.Array("sessions").Elems()); n != 2 {
		t.Fatalf("%d sessions, want 2", n)
	}
	if got := string(d.Bytes()); got != seedProgress+"\n" {
		t.Errorf("seed round trip changed the file:\n%s", got)
	}
}

func TestDocRoundTripKeepsUnknownFields(t *testing.T) {
	d, err := jsondoc.ParseDoc([]byte(customProgress), "sessions")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(d.Bytes()); got != customProgress+"\n" {
		t.Fatalf("untouched round trip changed the file:\n%s", got)
	}

	// Change one field of the second record and append a third.
	a := d.Array("sessions")
	first := string(a.Elems()[0])
	rec, err := a.Record(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Set("outcome", "NEEDS_FIX"); err != nil {
		t.Fatal(err)
	}
	a.Replace(1, rec)
	raw, err := a.Append(struct {
		ID   int      `json:"session_id"`
		Tags []string `json:"tags"`
	}{3, []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n      \"session_id\": 3,\n      \"tags\": [\n        \"a\"\n      ]\n    }"; string(raw) != want {
		t.Errorf("Append raw =\n%s\nwant\n%s", raw, want)
	}
	out := d.Bytes()
	for _, keep := range []string{
		`"x_tool": {"version":2,"list":[1, 2 ,3],"pi":3.14159e+0}`,
		`"x_note": "caf\u00e9 \"quoted\"\n"`,
		`"trailing_unknown": [true, false]`,
		first,
		`"extra": {"deep":[{"k":null}]}`,
	} {
		if !bytes.Contains(out, []byte(keep)) {
			t.Errorf("lost %s in\n%s", keep, out)
		}
	}
	var got struct {
		Sessions []map[string]any `json:"sessions"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if len(got.Sessions) != 3 || got.Sessions[1]["outcome"] != "NEEDS_FIX" || got.Sessions[2]["session_id"] != 3.0 {
		t.Errorf("sessions = %v", got.Sessions)
	}
	// Member order of the changed record is kept; the new value is in place.
	s1 := string(d.Array("sessions").Elems()[1])
	if strings.Index(s1, `"agent_type"`) > strings.Index(s1, `"outcome"`) || strings.Index(s1, `"outcome"`) > strings.Index(s1, `"extra"`) {
		t.Errorf("record 1 member order changed:\n%s", s1)
	}
	// And the result reads back to the same bytes.
	d2, err := jsondoc.ParseDoc(out, "sessions")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d2.Bytes(), out) {
		t.Errorf("re-encoding is not stable:\n%s\nthen\n%s", out, d2.Bytes())
	}
}

func TestDocMissingAndWrongArrays(t *testing.T) {
	d, err := jsondoc.ParseDoc([]byte(`{"name": "x"}`), "sessions")
	if err != nil {
		t.Fatal(err)
	}
	if a := d.Array("sessions"); a == nil || len(a.Elems()) != 0 {
		t.Fatalf("absent array = %v, want empty", a)
	}
	if d.Array("undeclared") != nil {
		t.Error("an undeclared array is not nil")
	}
	if got := string(d.Bytes()); got != "{\n  \"name\": \"x\",\n  \"sessions\": []\n}\n" {
		t.Errorf("Bytes = %q", got)
	}

	data := []byte("{\n  \"sessions\": {\"a\": 1}\n}")
	_, err = jsondoc.ParseDoc(data, "sessions")
	var ie *jsondoc.InvalidError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want *InvalidError", err)
	}
	if want := bytes.Index(data, []byte(`{"a"`)); ie.Path != "sessions" || ie.Offset != want {
		t.Errorf("Path %q Offset %d, want sessions at offset %d (the value)", ie.Path, ie.Offset, want)
	}
	if !strings.HasPrefix(ie.Error(), "sessions: ") {
		t.Errorf("Error() = %q, want the path first", ie.Error())
	}

	for _, top := range []string{`[]`, `"x"`, `null`} {
		_, err := jsondoc.ParseDoc([]byte(top), "sessions")
		if !errors.As(err, &ie) {
			t.Errorf("ParseDoc(%s) = %v, want *InvalidError", top, err)
		}
	}
}

// Arrays a file lacks are added in the order they were declared, so that
// encoding the same input always gives the same bytes.
func TestDocAddsMissingArraysDeterministically(t *testing.T) {
	want := "{\n  \"schema_version\": \"1.0\",\n  \"reviews\": [],\n  \"fixes\": []\n}\n"
	for i := 0; i < 50; i++ {
		d, err := jsondoc.ParseDoc([]byte(`{"schema_version": "1.0"}`), "reviews", "fixes")
		if err != nil {
			t.Fatal(err)
		}
		if got := string(d.Bytes()); got != want {
			t.Fatalf("run %d: Bytes =\n%s\nwant\n%s", i, got, want)
		}
	}
}

func TestNewDoc(t *testing.T) {
	d := jsondoc.NewDoc("reviews", "fixes")
	if got := string(d.Bytes()); got != "{\n  \"reviews\": [],\n  \"fixes\": []\n}\n" {
		t.Errorf("NewDoc Bytes = %q", got)
	}
	if _, err := d.Array("reviews").Append(map[string]int{"review_id": 1}); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"reviews\": [\n    {\n      \"review_id\": 1\n    }\n  ],\n  \"fixes\": []\n}\n"
	if got := string(d.Bytes()); got != want {
		t.Errorf("after Append:\n%s\nwant\n%s", got, want)
	}
}

func TestArrayInvalid(t *testing.T) {
	data := []byte("{\n  \"sessions\": [\n    {\"session_id\": 1},\n    {\"session_id\": \"x\"}\n  ]\n}")
	d, err := jsondoc.ParseDoc(data, "sessions")
	if err != nil {
		t.Fatal(err)
	}
	a := d.Array("sessions")
	ie := a.Invalid("sessions", 1, "session_id", "bad %s", "id")
	if ie.Path != "sessions[1].session_id" || ie.Msg != "bad id" {
		t.Errorf("Invalid = %+v", ie)
	}
	if !bytes.HasPrefix(data[ie.Offset:], a.Elems()[1]) {
		t.Errorf("offset %d does not point at record 1", ie.Offset)
	}
	if line, col := jsondoc.Position(data, ie.Offset); line != 4 || col != 5 {
		t.Errorf("record 1 at line %d column %d, want 4:5", line, col)
	}
	if got := a.Invalid("sessions", 0, "", "m").Path; got != "sessions[0]" {
		t.Errorf("path without field = %q", got)
	}
	// An appended record has no place in the file.
	if _, err := a.Append(map[string]int{"session_id": 3}); err != nil {
		t.Fatal(err)
	}
	if off := a.Invalid("sessions", 2, "", "m").Offset; off != 0 {
		t.Errorf("appended record offset = %d, want 0", off)
	}
	if (&jsondoc.InvalidError{Msg: "m"}).Error() != "m" {
		t.Error("Error() without a path is not the message")
	}
}

func TestReindentAndPretty(t *testing.T) {
	if got := string(jsondoc.Reindent([]byte(`{"a":[1,{"b":2}]}`))); got != "{\n  \"a\": [\n    1,\n    {\n      \"b\": 2\n    }\n  ]\n}" {
		t.Errorf("Reindent = %q", got)
	}
	if got := string(jsondoc.Reindent([]byte(`{bad`))); got != `{bad` {
		t.Errorf("Reindent(bad) = %q, want the input back", got)
	}
	if got := string(jsondoc.Pretty(map[string]string{"k": "<v>"})); got != "{\n  \"k\": \"<v>\"\n}" {
		t.Errorf("Pretty = %q", got)
	}
	if got := jsondoc.Pretty(make(chan int)); !json.Valid(got) {
		t.Errorf("Pretty of an unencodable value is not JSON: %s", got)
	}
}

// A key holding bytes that are not UTF-8 (which JSON parsers accept) must
// encode the same way every time: the first rewrite gave "\ufffd" as an
// escape, the second the literal U+FFFD, so each rewrite changed the file.
// Found by FuzzParseProgress.
func TestObjectKeyWithInvalidUTF8IsStable(t *testing.T) {
	o, err := jsondoc.ParseObject([]byte("{\"a\x81\": 1, \"b\": 2}"), 0)
	if err != nil {
		t.Fatal(err)
	}
	out := o.Bytes()
	o2, err := jsondoc.ParseObject(out, 0)
	if err != nil {
		t.Fatal(err)
	}
	if out2 := o2.Bytes(); !bytes.Equal(out, out2) {
		t.Errorf("first encoding %q, second %q", out, out2)
	}
}

// Check accepts exactly what encoding/json accepts, since every value it
// lets through is later decoded with encoding/json. gjson has no nesting
// limit; encoding/json refuses more than 10000 levels.
func TestCheckAgreesWithEncodingJSON(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		name string
		in   string
	}{
		{"invalid UTF-8 in a string", "\"\xff\xfe\""},
		{"lone surrogate escape", `"\ud800"`},
		{"DEL in a string", "\"\x7f\""},
		{"huge exponent", `1e999`},
		{"negative zero", `-0.0e-0`},
		{"vertical tab", "\v1"},
		{"byte order mark", "\xef\xbb\xbf{}"},
		{"leading zero", `01`},
		{"trailing comma in an object", `{"a":1,}`},
		{"trailing comma in an array", `[1,]`},
		{"leading comma", `[,1]`},
		{"empty member", `{,}`},
		{"missing colon", `{"a" 1}`},
		{"key not a string", `{a:1}`},
		{"number with a bare point", `1.`},
		{"number starting with a point", `.5`},
		{"a minus alone", `-`},
		{"exponent without digits", `1e+`},
		{"capital exponent", `-1.5E+10`},
		{"short unicode escape", `"\u12"`},
		{"unknown escape", `"\x"`},
		{"escaped slash and unicode", `"\/\u00e9\uD83D\uDE00"`},
		{"tab inside a string", "\"a\tb\""},
		{"DEL and high bytes", "\"\x7f\u00e9\""},
		{"cut literal", `tru`},
		{"literal with a tail", `nulll`},
		{"nothing", ``},
		{"only space", " \n\t\r "},
		{"two values", `{} {}`},
		{"garbage after", `{}x`},
		{"unclosed object", `{"a":[1,2]`},
		{"unclosed string", `"abc`},
		{"nested empties", `[[],{},[{}],{"a":{"b":[]}}]`},
		{"form feed as space", "\f1"},
		{"10000 levels", nest(10000)},
		{"10001 levels", nest(10001)},
		{"10001 levels inside a record", `{"sessions": [{"x": ` + nest(10001) + `}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := jsondoc.Check([]byte(tt.in))
			if want := json.Valid([]byte(tt.in)) && utf8.ValidString(tt.in); (err == nil) != want {
				t.Errorf("Check = %v, but encoding/json.Valid and utf8.Valid = %v", err, want)
			}
		})
	}
}

// Nesting deeper than encoding/json decodes is reported as such, even
// after a duplicate key or an invalid UTF-8 byte: the one pass that finds
// those also measures the depth, to the end.
func TestCheckDepthBeforeStrictness(t *testing.T) {
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	for _, in := range []string{`{"a": 1, "a": 2, "x": ` + deep + `}`, "{\"a\": \"\xff\", \"x\": " + deep + "}"} {
		err := jsondoc.Check([]byte(in))
		if err == nil || strings.Contains(err.Error(), "duplicate key") || strings.Contains(err.Error(), "UTF-8") || !strings.Contains(err.Error(), "depth") {
			t.Errorf("Check(%.30q...) = %v, want the nesting depth refused", in, err)
		}
	}
	if err := jsondoc.Check([]byte(`{"a": 1, "a": 2, "x": ` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`)); err == nil || !strings.Contains(err.Error(), "duplicate key") {
		t.Errorf("a duplicate key within 10000 levels: %v, want the duplicate key", err)
	}
}

// CheckMembers reads the object once: keys are matched literally (dots
// and stars are no paths), the first of a key given twice counts, and
// offsets are those of the values in the file.
func TestCheckMembersOnePass(t *testing.T) {
	wants := []jsondoc.Want{
		{Key: "a.b", Type: jsondoc.TypeString, Required: true},
		{Key: "n", Type: jsondoc.TypeNumber},
		{Key: "*", Type: jsondoc.TypeBool},
	}
	for _, c := range []struct {
		raw     string
		wantErr string
		at      int
	}{
		{`{"a.b": "x", "n": 1, "*": true}`, "", 0},
		{`{"a": {"b": "x"}}`, "a.b: missing", 100},
		{`{"a.b": "x", "n": "one"}`, "must be a number", 100 + 18},
		{`{"n": 2, "a.b": 5}`, "must be a string", 100 + 16},
		{`{"a.b": "x", "*": 1, "n": 3}`, "must be a boolean", 100 + 18},
		{`{"a.b": "x", "n": 1, "n": "dup"}`, "", 0},
	} {
		err := jsondoc.CheckMembers([]byte(c.raw), 100, "", wants)
		var ie *jsondoc.InvalidError
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.raw, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: error %v, want %q", c.raw, err, c.wantErr)
		case c.wantErr != "" && errors.As(err, &ie) && c.at != 100 && ie.Offset != c.at:
			t.Errorf("%s: offset %d, want %d", c.raw, ie.Offset, c.at)
		}
	}
}

// ErrIDsExhausted names MaxID (spelled out in its message).
func TestErrIDsExhaustedNamesMaxID(t *testing.T) {
	if want := fmt.Sprintf("the next id would exceed %d:", int64(jsondoc.MaxID)); !strings.HasPrefix(jsondoc.ErrIDsExhausted.Error(), want) {
		t.Errorf("ErrIDsExhausted is %q, want it to start %q", jsondoc.ErrIDsExhausted, want)
	}
}
