package jsondoc_test

import (
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/bench/gen"
	"github.com/baton-cli/baton/internal/jsondoc"
)

// large is the generated 10,000-session state, made once per test binary.
var large = sync.OnceValues(func() (*gen.State, error) { return gen.Generate(gen.Large, 1) })

func largeProgress(b *testing.B) []byte {
	st, err := large()
	if err != nil {
		b.Fatal(err)
	}
	return st.Progress
}

// BenchmarkCheck validates a 10,000-session file (every full parse does).
func BenchmarkCheck(b *testing.B) {
	data := largeProgress(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := jsondoc.Check(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseDoc splits the file into members and raw session records.
func BenchmarkParseDoc(b *testing.B) {
	data := largeProgress(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		d, err := jsondoc.ParseDoc(data, "sessions")
		if err != nil {
			b.Fatal(err)
		}
		if len(d.Array("sessions").Elems()) == 0 {
			b.Fatal("no sessions")
		}
	}
}

// BenchmarkDocBytes joins the raw records back into the file.
func BenchmarkDocBytes(b *testing.B) {
	data := largeProgress(b)
	d, err := jsondoc.ParseDoc(data, "sessions")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if out := d.Bytes(); len(out) != len(data) {
			b.Fatalf("encoded %d bytes from %d", len(out), len(data))
		}
	}
}

// BenchmarkLastRecord is what a --field read of the last session costs
// when it goes through the whole array with gjson (Get, then Array).
func BenchmarkLastRecord(b *testing.B) {
	data := largeProgress(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		all := gjson.GetBytes(data, "sessions").Array()
		if all[len(all)-1].Get("agent_type").String() == "" {
			b.Fatal("no agent_type")
		}
	}
}

// BenchmarkAppendRecord encodes one session-sized record at record depth.
func BenchmarkAppendRecord(b *testing.B) {
	rec := map[string]any{"session_id": 10001, "agent_type": "IMPLEMENT", "summary": "Implemented F743: handler, validation and tests",
		"features_touched": []string{"F743"}, "commits": []map[string]string{{"hash": "d4e5f6a", "message": "Implement the handler"}}}
	b.ReportAllocs()
	for b.Loop() {
		var a jsondoc.Array
		if _, err := a.Append(rec); err != nil {
			b.Fatal(err)
		}
	}
}
