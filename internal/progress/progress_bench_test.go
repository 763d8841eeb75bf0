package progress_test

import (
	"sync"
	"testing"

	"github.com/baton-cli/baton/bench/gen"
	"github.com/baton-cli/baton/internal/progress"
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

func benchSession() progress.Session {
	from, to := "a1b2c3d", "b7c8d9e"
	return progress.Session{AgentType: "IMPLEMENT", StartedAt: "2026-01-30T10:00:00Z", CompletedAt: "2026-01-30T10:40:00Z",
		Summary: "Implemented F743: handler, validation and tests", FeaturesTouched: []string{"F743"}, Outcome: "READY_FOR_REVIEW",
		Commits:     []progress.Commit{{Hash: "d4e5f6a", Message: "Implement the handler"}, {Hash: to, Message: "Add tests"}},
		CommitRange: &progress.Range{From: &from, To: &to}}
}

// BenchmarkParse validates and splits a 10,000-session progress.json, as
// every command that changes it does first.
func BenchmarkParse(b *testing.B) {
	data := largeProgress(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := progress.Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAddSession is the whole domain side of `progress add-session`
// on 10,000 sessions: parse, append one session, set the status, encode.
func BenchmarkAddSession(b *testing.B) {
	data := largeProgress(b)
	s := benchSession()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := progress.Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.AddSession(s); err != nil {
			b.Fatal(err)
		}
		if err := f.SetStatus("current_phase", "REVIEW"); err != nil {
			b.Fatal(err)
		}
		if out := f.Bytes(); len(out) <= len(data) {
			b.Fatalf("encoded %d bytes from %d", len(out), len(data))
		}
	}
}

// BenchmarkBytes encodes a parsed 10,000-session file.
func BenchmarkBytes(b *testing.B) {
	data := largeProgress(b)
	f, err := progress.Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if out := f.Bytes(); len(out) != len(data) {
			b.Fatalf("encoded %d bytes from %d", len(out), len(data))
		}
	}
}
