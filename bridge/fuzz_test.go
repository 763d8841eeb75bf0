package bridge

import (
	"encoding/json"
	"testing"
	"time"
)

// FuzzOutputRoundTrip: whatever bytes an agent prints, the envelope baton
// writes is valid and gives the orchestrator those bytes back exactly.
func FuzzOutputRoundTrip(f *testing.F) {
	for _, seed := range []string{"", "plain", "caf\xc3\xa9", "\xff\xfe\x00", "<&>\"\\\n\t", "\xef\xbb\xbf{}", "\xed\xa0\x80 surrogate"} {
		f.Add([]byte(seed))
	}
	req := &Request{RequestID: "32ecfadc-2b66-4daa-a7c0-a03c449fcea5", AgentName: "coder"}
	f.Fuzz(func(t *testing.T, out []byte) {
		resp, err := NewResponse(req, Answer{Output: string(out)}, time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		data, err := encodeJSON(resp)
		if err != nil {
			t.Fatal(err)
		}
		if ps := Diagnose(KindResponse, data); len(ps) > 0 {
			t.Fatalf("invalid envelope for %q: %v", out, ps)
		}
		var back Response
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		if back.Text() != string(out) {
			t.Fatalf("got %q, want %q", back.Text(), out)
		}
	})
}
