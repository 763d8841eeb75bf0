package features

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/baton-cli/baton/internal/jsondoc"
)

// lightCases are lists a full read accepts, with items the light read
// takes whole at once (escapes, other types) and duplicate keys.
var lightCases = []string{
	`{"features": []}`,
	`{"features": [{"id": "F001", "name": "A", "passes": true}, {"id": "F002", "name": "B"}]}`,
	`{"x": 1, "features": [{"name": "Crash", "type": "bug", "id": "BUG-001", "passes": false, "steps": ["}\"{"]},
	  {"id": "DEBT-001", "type": "tech_debt", "source_review": {"id": "R3"}, "failure_reason": "late", "passes": null}], "y": [2]}`,
	`{"features": [{"id": "F\u0030\u0030\u0031", "name": "escaped id"}, {"id": "F002", "type": "b\u0075g"}]}`,
	`{"features": [{"id": "F001", "id": "F009", "passes": true, "passes": false, "type": "bug", "type": null}]}`,
	`{"features": [{"id": " F 1", "type": null, "name": "\u00e9"}, {"id": "F2", "inner": {"id": "F1", "passes": true}}]}`,
}

// fullTrusted is the trusted read of data with every item read whole.
func fullTrusted(data []byte, facts jsondoc.Facts) (*File, error) {
	doc, err := jsondoc.ParseDocTrusted(data, facts, "features")
	if err != nil {
		return nil, err
	}
	if err := doc.Top.Check("", "an empty list is {\"features\": []}", topShape); err != nil {
		return nil, err
	}
	return parseItems(doc, true)
}

// TestLightRead: a trusted read (with and without the stamp's facts)
// answers every question as the same read taking every item whole,
// before and after an edit, and reads the generated list's items light.
func TestLightRead(t *testing.T) {
	written := writtenList(t, 60)
	for _, data := range append(lightCases, string(written)) {
		var facts jsondoc.Facts
		if full, err := Parse([]byte(data)); err == nil {
			facts = full.StampFacts()
		}
		for _, fc := range []jsondoc.Facts{nil, facts} {
			want, err := fullTrusted([]byte(data), fc)
			if err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			sameAnswers(t, data, func() *File { return mustTrusted(t, []byte(data), fc) }, want)
		}
	}
	f, err := ParseTrusted(written, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range f.light {
		if !l {
			t.Fatalf("item %d (%s) of a list baton wrote was read whole", i, f.items[i].ID)
		}
	}
}

// writtenList is a list of n items of every kind as baton writes it.
func writtenList(t *testing.T, n int) []byte {
	f := New()
	var entries [][]byte
	for i := range n {
		entries = append(entries, fmt.Appendf(nil, `{"name": "Item \"%d\"", "type": %q, "description": "a\\b", "steps": ["x", "}{"], "passes": %v}`,
			i, []string{"feature", "bug", "tech_debt", ""}[i%4], i%3 == 0))
	}
	if _, err := f.Append(entries, "app_spec.md"); err != nil {
		t.Fatal(err)
	}
	return f.Bytes()
}

func mustTrusted(t *testing.T, data []byte, facts jsondoc.Facts) *File {
	t.Helper()
	f, err := ParseTrusted(data, facts)
	if err != nil {
		t.Fatalf("ParseTrusted(%q): %v", data, err)
	}
	return f
}

// sameAnswers compares what a trusted read (made by read) and the full
// read of data say, then edits a fresh trusted read and the full one alike
// and compares the bytes.
func sameAnswers(t *testing.T, data string, read func() *File, want *File) {
	t.Helper()
	ask := func(f *File) string {
		out := fmt.Sprintf("%+v|%v|%v|%v|%+v|%v", f.PendingIDs(), f.Passing(), f.BadIDs(), f.Stats(), f.Pending("BUG"), f.Has("F001"))
		for _, k := range []string{"FEAT", "BUG", "DEBT"} {
			out += "|" + f.NextID(k)
		}
		for _, it := range f.All() {
			g, err := f.Get(it.ID)
			raw, _ := f.Raw(it.ID)
			b, _ := json.Marshal(g)
			out += fmt.Sprintf("|%s %v %s", b, err, raw)
		}
		return out
	}
	if a, b := ask(read()), ask(want); a != b {
		t.Fatalf("trusted read of %s answers\n%s\nwant\n%s", data, a, b)
	}
	all := want.All()
	if len(all) == 0 {
		return
	}
	id := all[len(all)-1].ID
	got := read()
	for _, f := range []*File{got, want} {
		if _, err := f.SetPasses([]string{id}, !all[len(all)-1].Passes, "2025-01-29T10:00:00Z", "why"); err != nil {
			t.Fatal(err)
		}
	}
	if string(got.Bytes()) != string(want.Bytes()) || !reflect.DeepEqual(got.All(), want.All()) {
		t.Fatalf("after SetPasses(%s) the trusted read of %s encodes\n%s\nwant\n%s", id, data, got.Bytes(), want.Bytes())
	}
}

// FuzzLightRead: a trusted read answers as the same read taking every
// item whole, and refuses what it refuses with the same error.
func FuzzLightRead(f *testing.F) {
	for _, c := range lightCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return // a trusted read is of a file baton wrote or validated
		}
		want, werr := fullTrusted(data, nil)
		_, err := ParseTrusted(data, nil)
		if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
			t.Fatalf("ParseTrusted(%q): %v, want %v", data, err, werr)
		}
		if err == nil {
			sameAnswers(t, string(data), func() *File { return mustTrusted(t, data, nil) }, want)
		}
	})
}

// TestIndexedRead: the index of a list read with the facts that name it
// answers every question as the full read; an index edited, stale, cut or
// missing is never used, and the list is read as it is.
func TestIndexedRead(t *testing.T) {
	written := writtenList(t, 40)
	for _, data := range append(lightCases, string(written)) {
		full, err := Parse([]byte(data))
		if err != nil {
			continue // only a list validated in full or written gets an index
		}
		idx, named, ok := Index([]byte(data), full.StampFacts())
		if !ok {
			t.Fatalf("no index of %s", data)
		}
		indexed := func(idx []byte) func() *File {
			return func() *File {
				f, err := ParseTrustedIndexed([]byte(data), named, func() []byte { return idx })
				if err != nil {
					t.Fatalf("ParseTrustedIndexed(%s): %v", data, err)
				}
				return f
			}
		}
		if f := indexed(idx)(); len(full.items) > 0 && f.recs == nil {
			t.Fatalf("the index of %s was not used", data)
		}
		want := func() *File { f, _ := fullTrusted([]byte(data), nil); return f }
		sameAnswers(t, data, indexed(idx), want())
		for name, bad := range map[string][]byte{
			"passes flipped": bytes.Replace(idx, []byte(" 1 \""), []byte(" 0 \""), 1),
			"an id added":    append(slices.Clone(idx), []byte("\n1 2 0 \"\" \"F999\"")...),
			"cut":            idx[:len(idx)/2],
			"missing":        nil,
			"another list's": func() []byte { i, _, _ := Index(written, nil); return i }(),
		} {
			f := indexed(bad)()
			if f.recs != nil && !bytes.Equal(bad, idx) {
				t.Fatalf("%s index of %s was used", name, data)
			}
			sameAnswers(t, data, indexed(bad), want())
		}
	}
}
