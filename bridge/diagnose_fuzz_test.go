package bridge

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"sort"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// judged fails t unless Diagnose judges data as a document of kind k: every
// problem it names has a code and a message, and a document it passes
// decodes into the type baton reads it as.
func judged(t *testing.T, k Kind, data []byte) {
	t.Helper()
	ps := Diagnose(k, data)
	for _, p := range ps {
		if p.Code == "" || p.Message == "" {
			t.Fatalf("%s %s: a problem without a code or message: %+v", k, data, p)
		}
	}
	if len(ps) > 0 {
		return
	}
	var into any
	switch k {
	case KindRequest:
		into = new(Request)
	case KindCheckpoint:
		into = new(Checkpoint)
	default:
		into = new(Response)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatalf("%s %s: valid, yet it does not decode: %v", k, data, err)
	}
}

// corpus is every JSON document the tests know: the seeds' examples, the
// documents in the bridge scenarios, and what baton writes.
func corpus(t testing.TB) [][]byte {
	docs := [][]byte{[]byte(seed000Request), []byte(seed001Request), []byte(seed000Success), []byte(seed000Error),
		[]byte(seed001Success), []byte(seed001Error), []byte(seed004Success), []byte(seed004Error), []byte(validResponse),
		[]byte(`{"version": "1.0", "run_id": "r", "phase": 1, "phase_name": "p", "checkpoint_name": "started",
			"created_at": "2025-11-24T14:22:45Z", "output_path": "/s", "agent_requests": [{"request_id": "x",
			"agent_name": "a", "phase": 1, "phase_name": "p", "status": "pending"}], "agent_request_pending": null,
			"completed_phases": [{"phase": 1, "phase_name": "p"}], "config": {"a": 1}}`)}
	scripts, _ := filepath.Glob("../testdata/script/*.txtar")
	for _, f := range scripts {
		a, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range a.Files {
			if json.Valid(file.Data) && bytes.HasPrefix(bytes.TrimSpace(file.Data), []byte("{")) {
				docs = append(docs, file.Data)
			}
		}
	}
	return docs
}

// values are what a mutation puts in a member's place.
var values = []string{`null`, `""`, `"x"`, `"1.0"`, `"1.0.0"`, `"v1"`, `0`, `-1`, `1`, `1.0`, `1.5`, `86400`, `86401`, `1e2`, `1e999999999`,
	`-0.5`, `2`, `true`, `{}`, `[]`, `[{}]`, `{"x": 1}`, `"success"`, `"cancelled"`, `"pending"`, `"2025-11-24T14:22:45Z"`,
	`"2025-02-30T10:00:00Z"`, `"2025-11-24 14:22:45Z"`, `"2016-12-31T23:59:60Z"`, `"2025-11-24T14:22:45.5+01:00"`,
	`"550e8400-e29b-41d4-a716-446655440000"`, `"550e8400-e29b-41d4-a716-44665544000g"`, `"é"`, `"2025-11-24T+1:22:45Z"`, `"2025-11-24T14:22:45+-1:00"`, `"2025-11-24T14:22:45.Z"`, `"2025-11-24t14:22:45z"`, `"+025-11-24T14:22:45Z"`, `"2025-11-24T14:22:45++1:00"`, `"2025-11-24T14:+2:45Z"`}

// mutations: data with each member removed, set to each value, and one
// unknown member added; nested objects, and the first object of an array,
// likewise.
func mutations(data []byte) [][]byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	out := [][]byte{mustJSON(with2(m, "extra_member", `1`))}
	for _, n := range names {
		out = append(out, mustJSON(without(m, n)))
		for _, v := range values {
			out = append(out, mustJSON(with2(m, n, v)))
		}
		inner := m[n]
		if bytes.HasPrefix(inner, []byte("{")) {
			for _, sub := range mutations(inner) {
				out = append(out, mustJSON(with2(m, n, string(sub))))
			}
		}
		var items []json.RawMessage
		if json.Unmarshal(inner, &items) == nil && len(items) > 0 {
			for _, sub := range mutations(items[0]) {
				items[0] = sub
				out = append(out, mustJSON(with2(m, n, string(mustJSON(items)))))
			}
		}
	}
	return out
}

func with2(m map[string]json.RawMessage, k, raw string) map[string]json.RawMessage {
	c := make(map[string]json.RawMessage, len(m)+1)
	for n, v := range m {
		c[n] = v
	}
	c[k] = json.RawMessage(raw)
	return c
}

func without(m map[string]json.RawMessage, k string) map[string]json.RawMessage {
	c := with2(m, k, "0")
	delete(c, k)
	return c
}

// TestDiagnoseJudgesEveryMutation: for every document the tests know,
// against every shipped schema, and for thousands of mutations of each
// against the schemas it is valid for, Diagnose names each problem or
// passes a document baton can read.
func TestDiagnoseJudgesEveryMutation(t *testing.T) {
	docs := corpus(t)
	n := 0
	for _, d := range docs {
		for k := range schemaFiles {
			judged(t, k, d)
			if len(Diagnose(k, d)) > 0 {
				continue // its mutations are judged as the kinds it is
			}
			for _, doc := range mutations(d) {
				judged(t, k, doc)
				n++
			}
		}
	}
	if n < 1000 {
		t.Fatalf("only %d mutations checked: the corpus is missing", n)
	}
	t.Logf("%d mutations checked", n)
	for _, raw := range []string{`{} x`, `{}}`, `{"a":1,}`, ``, `{"request_id": "\ud800"}`, `{"duration_seconds": 1e999999999}`, `{"phase": -1e999999999}`} {
		for k := range schemaFiles {
			judged(t, k, []byte(raw))
		}
	}
}

// FuzzDiagnose: whatever bytes a host writes, Diagnose names each problem
// or passes a document baton can read, and never fails itself.
func FuzzDiagnose(f *testing.F) {
	for _, d := range corpus(f) {
		f.Add(d)
	}
	f.Add([]byte(`{"duration_seconds": 1e999999999}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return // keeps each run quick
		}
		for k := range schemaFiles {
			judged(t, k, data)
		}
	})
}
