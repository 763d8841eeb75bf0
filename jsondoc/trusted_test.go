package jsondoc_test

import (
	"bytes"
	"testing"

	"github.com/baton-cli/baton/jsondoc"
)

// A document read back with the facts of its own writing must behave
// exactly like one parsed in full: same members, same last records, and
// the same bytes after the same append.
func TestTrustedParseMatchesFullParse(t *testing.T) {
	src := []byte(`{"project": {"name": "p"}, "a": [{"id": 1}, {"id": 2, "x": [1, {"y": "]"}]}], "mid": "m", "b": [], "tail": {"k": "[{"}}`)
	full, err := jsondoc.ParseDoc(src, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	written := full.Bytes()
	facts := full.Facts()
	for _, tc := range []struct {
		name  string
		parse func() (*jsondoc.Doc, error)
	}{
		{"full", func() (*jsondoc.Doc, error) { return jsondoc.ParseDoc(written, "a", "b") }},
		{"trusted", func() (*jsondoc.Doc, error) { return jsondoc.ParseDocTrusted(written, facts, "a", "b") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := tc.parse()
			if err != nil {
				t.Fatal(err)
			}
			if got := string(d.Top.Raw("tail")); got != `{"k": "[{"}` {
				t.Errorf("tail = %s", got)
			}
			if got := string(d.Array("a").Last()); got != `{"id": 2, "x": [1, {"y": "]"}]}` {
				t.Errorf("last of a = %s", got)
			}
			if d.Array("b").Last() != nil || d.Array("b").Len() != 0 || d.Array("a").Len() != 2 {
				t.Errorf("lengths a=%d b=%d", d.Array("a").Len(), d.Array("b").Len())
			}
			if !bytes.Equal(d.Bytes(), written) {
				t.Errorf("rewrite differs:\n%s\nwant\n%s", d.Bytes(), written)
			}
			if _, err := d.Array("a").Append(map[string]int{"id": 3}); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Array("b").Append(map[string]int{"id": 9}); err != nil {
				t.Fatal(err)
			}
			out := d.Bytes()
			if err := jsondoc.Check(out); err != nil {
				t.Fatalf("invalid after append: %v\n%s", err, out)
			}
			ref, _ := jsondoc.ParseDoc(written, "a", "b")
			ref.Array("a").Append(map[string]int{"id": 3})
			ref.Array("b").Append(map[string]int{"id": 9})
			if want := ref.Bytes(); !bytes.Equal(out, want) {
				t.Errorf("after append:\n%s\nwant\n%s", out, want)
			}
			f := d.Facts()["a"]
			if last := out[f.Last[0]:f.Last[1]]; !bytes.Contains(last, []byte(`"id": 3`)) || f.Count != 3 {
				t.Errorf("facts after append: count %d last %q", f.Count, last)
			}
			if sp := d.Facts()["b"].Span; out[sp[0]] != '[' || out[sp[1]-1] != ']' {
				t.Errorf("span of b %v does not frame the array", sp)
			}
		})
	}
}

// The facts a reader takes from a full parse are those the writer of the
// same bytes recorded (but for MaxID, the domain package's), for files in
// baton's layout and in others'.
func TestReadFactsMatchWrittenFacts(t *testing.T) {
	for _, src := range []string{
		`{"project": {"name": "p"}, "a": [{"id": 1}, {"id": 2, "x": [1, {"y": "]"}]}], "mid": "m", "b": [], "tail": {"k": "[{"}}`,
		`{"a":[{"id":1},{"id":2}],"b":[{"z":"}"}]}`,
		"{\n  \"b\": [\n    {\"q\": 1}\n  ],\n  \"a\": [ ]\n}\n",
	} {
		full, err := jsondoc.ParseDoc([]byte(src), "a", "b")
		if err != nil {
			t.Fatal(err)
		}
		written := full.Bytes()
		want := full.Facts()
		read, err := jsondoc.ParseDoc(written, "a", "b")
		if err != nil {
			t.Fatal(err)
		}
		got := read.ReadFacts()
		for _, name := range []string{"a", "b"} {
			w := want[name]
			w.MaxID = 0
			if got[name] != w {
				t.Errorf("%s: array %s: read facts %+v, written %+v", src, name, got[name], w)
			}
			if w.Count > 0 && (written[w.Last[0]] != '{' || written[w.Last[1]-1] != '}') {
				t.Errorf("%s: array %s: the last record's range %v is not a record", src, name, w.Last)
			}
		}
		// an array with a record appended since the parse has no facts
		read.Array("a").AppendRaw([]byte(`{"id":3}`))
		if _, ok := read.ReadFacts()["a"]; ok {
			t.Errorf("%s: facts for an array appended to since the parse", src)
		}
	}
}

// A split array is written as JoinArray would encode its records, whether
// runs of them are passed through as read or written out: after replacing
// and appending records, in baton's layout and in others'.
func TestSplitArrayWritesThrough(t *testing.T) {
	srcs := []string{
		`{"a": [{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}], "b": []}`,
		"{\n  \"a\": [\n    {\"id\": 1},\n    {\"id\": 2},\n    {\"id\": 3},\n    {\"id\": 4}\n  ],\n  \"b\": []\n}\n",
		"{\"a\":[\n{\"id\":1},  {\"id\":2},\n    {\"id\":3}\n,{\"id\":4}],\"b\":[]}",
	}
	edits := []func(a *jsondoc.Array){
		func(*jsondoc.Array) {},
		func(a *jsondoc.Array) { a.Elems()[1] = []byte(`{"id": 20}`) },
		func(a *jsondoc.Array) { a.Elems()[0] = []byte(`{"id": 10}`); a.Elems()[3] = []byte(`{"id": 40}`) },
		func(a *jsondoc.Array) { a.AppendRaw([]byte(`{"id": 5}`)) },
		func(a *jsondoc.Array) { a.Elems()[2] = []byte(`{"id": 30}`); a.AppendRaw([]byte(`{"id": 5}`)) },
	}
	for _, src := range srcs {
		// baton's layout: the source as baton writes it, read back
		first, err := jsondoc.ParseDoc([]byte(src), "a", "b")
		if err != nil {
			t.Fatal(err)
		}
		for _, data := range [][]byte{[]byte(src), first.Bytes()} {
			for ei, edit := range edits {
				d, err := jsondoc.ParseDoc(data, "a", "b")
				if err != nil {
					t.Fatal(err)
				}
				a := d.Array("a")
				edit(a)
				out := d.Bytes()
				f := d.Facts()["a"]
				if got, want := string(out[f.Span[0]:f.Span[1]]), string(jsondoc.JoinArray(a.Elems(), 1)); got != want {
					t.Fatalf("%q, edit %d: the array was written as\n%s\nwant\n%s", data, ei, got, want)
				}
				elems := a.Elems()
				if got := string(out[f.Last[0]:f.Last[1]]); got != string(elems[len(elems)-1]) {
					t.Fatalf("%q, edit %d: the facts' last record is %q", data, ei, got)
				}
				if _, err := jsondoc.ParseDoc(out, "a", "b"); err != nil {
					t.Fatalf("%q, edit %d: the output does not parse: %v", data, ei, err)
				}
			}
		}
	}
}
