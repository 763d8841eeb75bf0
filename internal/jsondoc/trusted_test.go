package jsondoc_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/jsondoc"
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
		{"trusted, spans swapped", func() (*jsondoc.Doc, error) {
			// each span frames an array, but another member's: not used
			swapped := jsondoc.Facts{"a": facts["a"], "b": facts["b"]}
			a, b := swapped["a"], swapped["b"]
			a.Span, b.Span = b.Span, a.Span
			swapped["a"], swapped["b"] = a, b
			return jsondoc.ParseDocTrusted(written, swapped, "a", "b")
		}},
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

// FromEnd gives the records last first, the same whether it looks back
// through an unsplit array or splits it: records in baton's layout, ones
// read as another writer laid them out (lines that look like a record's
// start inside one), and records appended since the read.
func TestFromEnd(t *testing.T) {
	for _, src := range []string{
		`{"a": [{"id": 1}, {"id": 2, "n": {"x": [{"y": 1}]}}, {"id": 3}]}`,
		"{\"a\": [\n    {\"id\": 1},\n    {\"id\": 2, \"x\": [\n    {\"y\": 1}\n]},\n    {\"id\": 3}\n  ]}",
		"{\"a\": [\n    {\"id\": 1, \"x\": \"\\n    {\"},\n    {\"id\": 2}\n  ]}",
		`{"a": []}`,
		`{"a": [{"id": 1}]}`,
	} {
		full, err := jsondoc.ParseDoc([]byte(src), "a")
		if err != nil {
			t.Fatal(err)
		}
		written := full.Bytes()
		var want []string
		elems := full.Array("a").Elems()
		for i := len(elems) - 1; i >= 0; i-- {
			want = append(want, string(elems[i]))
		}
		for _, appended := range []bool{false, true} {
			for _, trusted := range []bool{false, true} {
				var d *jsondoc.Doc
				if trusted {
					d, err = jsondoc.ParseDocTrusted(written, full.Facts(), "a")
				} else {
					d, err = jsondoc.ParseDoc(written, "a")
				}
				if err != nil {
					t.Fatal(err)
				}
				w := want
				if appended {
					d.Array("a").AppendRaw([]byte(`{"id": 9}`))
					w = append([]string{`{"id": 9}`}, want...)
				}
				var got []string
				d.Array("a").FromEnd(func(raw []byte) bool { got = append(got, string(raw)); return true })
				if strings.Join(got, "|") != strings.Join(w, "|") {
					t.Errorf("%q (trusted %v, appended %v):\n got %q\nwant %q", src, trusted, appended, got, w)
				}
				n := 0
				d.Array("a").FromEnd(func([]byte) bool { n++; return false })
				if len(w) > 0 && n != 1 {
					t.Errorf("FromEnd went on after fn said stop (%d calls)", n)
				}
			}
		}
	}
}

// A gap after an array keeps what follows it in place while records are
// appended to it; used up, it is made anew; a short tail gets none.
func TestGapKeepsTheTailInPlace(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 800; i++ {
		fmt.Fprintf(&b, `{"id": %d, "pad": "%s"},`, i, strings.Repeat("x", 60))
	}
	big := `{"v": "1", "a": [{"id": 1}], "b": [` + strings.TrimSuffix(b.String(), ",") + `]}`
	d, err := jsondoc.ParseDoc([]byte(big), "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	d.Gap("a")
	written := d.Bytes()
	spanB := d.Facts()["b"].Span
	moved := 0
	for i := 2; i < 400; i++ {
		d, err := jsondoc.ParseDocTrusted(written, d.Facts(), "a", "b")
		if err != nil {
			t.Fatal(err)
		}
		d.Gap("a")
		rec := []byte(fmt.Sprintf(`{"id": %d, "pad": "%s"}`, i, strings.Repeat("y", 100)))
		d.Array("a").AppendRaw(rec)
		next := d.Bytes()
		if !json.Valid(next) {
			t.Fatalf("append %d: not JSON", i)
		}
		// the blank lines are left out of the trusted parse, not out of the file
		ref, err := jsondoc.ParseDoc(written, "a", "b")
		if err != nil {
			t.Fatal(err)
		}
		ref.Gap("a")
		ref.Array("a").AppendRaw(rec)
		if !bytes.Equal(ref.Bytes(), next) || ref.Facts()["b"].Span != d.Facts()["b"].Span || ref.Facts()["a"].Span != d.Facts()["a"].Span {
			t.Fatalf("append %d: the trusted parse writes other bytes than the full one", i)
		}
		if d.Facts()["b"].Span != spanB {
			moved++
			spanB = d.Facts()["b"].Span
		} else if !bytes.Equal(next[spanB[0]:], written[spanB[0]:]) {
			t.Fatalf("append %d: b kept its place but not its bytes", i)
		}
		if n := gjson.GetBytes(next, "a.#").Int(); n != int64(i) {
			t.Fatalf("append %d: a has %d records", i, n)
		}
		written = next
	}
	if moved == 0 || moved > 10 {
		t.Errorf("the tail moved %d times in 398 appends: the gap is not used, or too small", moved)
	}
	small, _ := jsondoc.ParseDoc([]byte(`{"a": [], "b": [1]}`), "a", "b")
	small.Gap("a")
	if got := string(small.Bytes()); strings.Contains(got, "\n\n") {
		t.Errorf("a gap before a short tail:\n%s", got)
	}
}

// The facts say where a gap ends, and a trusted parse takes the gap there
// when that frames blank lines as the writer left them; any other end is
// not taken (the gap is found as before): the document written is the
// same either way.
func TestGapFact(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 800; i++ {
		fmt.Fprintf(&b, `{"id": %d, "pad": "%s"},`, i, strings.Repeat("x", 60))
	}
	d, err := jsondoc.ParseDoc([]byte(`{"a": [{"id": 1}], "b": [`+strings.TrimSuffix(b.String(), ",")+`]}`), "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	d.Gap("a")
	written := d.Bytes()
	facts := d.Facts()
	at := facts["a"].Gap
	if at <= facts["a"].Span[1] || written[at-1] != '\n' || !strings.HasPrefix(string(written[at:]), `  "b"`) {
		t.Fatalf("gap fact %d does not end the gap in %q", at, written[facts["a"].Span[1]:min(len(written), facts["a"].Span[1]+40)])
	}
	rec := []byte(`{"id": 2}`)
	ref, err := jsondoc.ParseDoc(written, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	ref.Gap("a")
	ref.Array("a").AppendRaw(rec)
	want := ref.Bytes()
	for name, gap := range map[string]int{"as written": at, "none": 0, "one early": at - 1, "one late": at + 1, "inside the key": at + 3, "past the end": len(written) + 5, "inside the gap": at - 100, "too short": facts["a"].Span[1] + 3} {
		f := jsondoc.Facts{"a": facts["a"], "b": facts["b"]}
		fa := f["a"]
		fa.Gap = gap
		f["a"] = fa
		td, err := jsondoc.ParseDocTrusted(written, f, "a", "b")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		td.Gap("a")
		td.Array("a").AppendRaw(rec)
		if got := td.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("%s: the trusted parse wrote other bytes than the full one", name)
		}
		if td.Facts()["a"].Gap != ref.Facts()["a"].Gap {
			t.Fatalf("%s: gap fact %d, want %d", name, td.Facts()["a"].Gap, ref.Facts()["a"].Gap)
		}
	}
}
