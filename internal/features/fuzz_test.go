package features_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/jsondoc"
)

// FuzzParseFeatures: Parse never panics; what it accepts encodes to valid
// JSON that parses again to the same bytes. Appending a well-formed entry
// (the CLI checks the JSON first) and passing everything either is refused
// or leaves a file that still parses.
func FuzzParseFeatures(f *testing.F) {
	for _, s := range []struct{ data, entry string }{
		{sample, `{"name": "new"}`},
		{`{}`, `{"id": "F001", "type": "bug"}`},
		{`{"features": []}`, `{"name": "x", "type": "tech_debt", "passes": true}`},
		{`{"features": [{"id": "F001", "passes": null}], "total_features": 1}`, `{"id": null}`},
		{`{"features": [{"id": "F001"}, {"id": "F001"}]}`, `[]`},
		{`{"features": {"id": "F001"}}`, `{"passes": false}`},
		{`{"features": [{"id": "BUG-009", "type": "bug"}]}`, `{"type": "bug", "source_appspec": 1}`},
	} {
		f.Add([]byte(s.data), []byte(s.entry))
	}
	f.Fuzz(func(t *testing.T, data, entry []byte) {
		p, err := features.Parse(data)
		if err != nil {
			return
		}
		out := p.Bytes()
		if !json.Valid(out) {
			t.Fatalf("Bytes is not JSON:\n%s\nfrom %q", out, data)
		}
		q, err := features.Parse(out)
		if err != nil {
			t.Fatalf("Bytes does not parse again: %v\n%s\nfrom %q", err, out, data)
		}
		if len(q.All()) != len(p.All()) || q.Stats() != p.Stats() {
			t.Fatalf("re-read: %+v, was %+v", q.Stats(), p.Stats())
		}
		if out2 := q.Bytes(); !bytes.Equal(out, out2) {
			t.Fatalf("re-encoding is not stable:\n%s\nthen\n%s", out, out2)
		}
		for _, kind := range []string{"FEAT", "BUG", "DEBT"} {
			if id := q.NextID(kind); q.Has(id) {
				t.Fatalf("NextID(%s) = %s, which exists", kind, id)
			}
		}

		if jsondoc.Check(entry) != nil {
			return
		}
		before := q.Bytes()
		added, err := q.Append([][]byte{entry}, "spec.md")
		if err != nil {
			if !bytes.Equal(q.Bytes(), before) {
				t.Fatalf("a refused Append changed the file")
			}
			return
		}
		if _, err := features.Parse(q.Bytes()); err != nil {
			t.Fatalf("after Append(%s) the file does not parse: %v\nfrom %q", entry, err, data)
		}
		var all []string
		for _, it := range q.All() {
			all = append(all, it.ID)
		}
		if _, err := q.SetPasses(all, true, "2025-01-29T10:00:00Z", ""); err != nil {
			t.Fatalf("SetPasses of every id: %v", err)
		}
		r, err := features.Parse(q.Bytes())
		if err != nil {
			t.Fatalf("after Append(%s) and SetPasses the file does not parse: %v\nfrom %q", entry, err, data)
		}
		if !r.Has(added[0]) || len(r.Pending("")) != 0 {
			t.Fatalf("after Append and SetPasses: has %v, pending %d", r.Has(added[0]), len(r.Pending("")))
		}
	})
}
