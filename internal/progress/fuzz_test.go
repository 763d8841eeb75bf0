package progress_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/baton-cli/baton/internal/progress"
)

// FuzzParseProgress: Parse never panics; what it accepts encodes to valid
// JSON that parses again to the same bytes, and a session added to it gets
// the next id and leaves a file that still parses.
func FuzzParseProgress(f *testing.F) {
	for _, s := range []string{
		seedProgress, `{}`, `{"sessions": []}`, `{"sessions": [{"session_id": 1}, {"session_id": 1}]}`,
		`{"sessions": [{"session_id": 2.0}], "status": {"a": [1]}, "project": {}}`,
		`{"sessions": {"session_id": 1}}`, `[]`, `{"status": "x"}`, `{"sessions": [{"session_id": "1"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := progress.Parse(data)
		if err != nil {
			return
		}
		out := p.Bytes()
		if !json.Valid(out) {
			t.Fatalf("Bytes is not JSON:\n%s\nfrom %q", out, data)
		}
		q, err := progress.Parse(out)
		if err != nil {
			t.Fatalf("Bytes does not parse again: %v\n%s\nfrom %q", err, out, data)
		}
		if q.Len() != p.Len() || q.NextSessionID() != p.NextSessionID() {
			t.Fatalf("re-read: len %d next %d, was len %d next %d", q.Len(), q.NextSessionID(), p.Len(), p.NextSessionID())
		}
		if out2 := q.Bytes(); !bytes.Equal(out, out2) {
			t.Fatalf("re-encoding is not stable:\n%s\nthen\n%s", out, out2)
		}
		next := q.NextSessionID()
		s, err := q.AddSession(progress.Session{AgentType: "IMPLEMENT", Outcome: "SUCCESS"})
		if err != nil {
			return
		}
		if s.SessionID != next {
			t.Fatalf("AddSession gave id %d, NextSessionID said %d", s.SessionID, next)
		}
		r, err := progress.Parse(q.Bytes())
		if err != nil {
			t.Fatalf("after AddSession the file does not parse: %v\nfrom %q", err, data)
		}
		if r.NextSessionID() != next+1 || r.Len() != p.Len()+1 {
			t.Fatalf("after AddSession: next %d len %d", r.NextSessionID(), r.Len())
		}
	})
}
