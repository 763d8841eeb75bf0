package bridge

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// reference compiles the shipped schemas with a general JSON Schema
// validator (draft-07, formats asserted). baton does not link it; the tests
// hold baton's own validator to its verdicts.
var reference = sync.OnceValues(func() (map[Kind]*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	out := map[Kind]*jsonschema.Schema{}
	for k, name := range schemaFiles.Get() {
		raw, err := Schema(k)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, err
		}
		if err := c.AddResource("https://baton.invalid/bridge/"+name, doc); err != nil {
			return nil, err
		}
		if out[k], err = c.Compile("https://baton.invalid/bridge/" + name); err != nil {
			return nil, err
		}
	}
	return out, nil
})

// sameVerdict fails t when baton's validator and the reference disagree on
// whether data is a valid document of kind k.
func sameVerdict(t *testing.T, k Kind, data []byte) {
	t.Helper()
	schemas, err := reference()
	if err != nil {
		t.Fatal(err)
	}
	ps := Diagnose(k, data)
	refErr, judged := referenceVerdict(schemas[k], data)
	if judged && refErr == nil && len(ps) > 0 && len(Diagnose(k, signedTimeField.ReplaceAll(data, []byte("${1}0$2")))) == 0 {
		return // the reference's known leniency, below
	}
	if judged && (refErr == nil) != (len(ps) == 0) {
		t.Fatalf("%s %s:\nbaton: %v\nreference: %v", k, data, ps, refErr)
	}
}

// signedTimeField finds a '+' where a date-time's two-digit hour, minute,
// second or offset field starts ("T+1:22:45Z", "++1:00"): the
// reference reads those fields with strconv.Atoi, which takes a sign, and
// so accepts times RFC 3339 does not; baton's validator refuses them.
var signedTimeField = regexp.MustCompile(`([Tt:+-])\+(\d)`)

// referenceVerdict validates data with the reference; judged is false when
// the reference cannot (it panics comparing a number whose exponent is too
// large to hold with a minimum, which baton's validator handles).
func referenceVerdict(s *jsonschema.Schema, data []byte) (err error, judged bool) {
	defer func() {
		if recover() != nil {
			judged = false
		}
	}()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err == nil {
		err = s.Validate(doc)
	}
	return err, true
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
var values = []string{`null`, `""`, `"x"`, `"1.0"`, `"1.0.0"`, `"v1"`, `0`, `-1`, `1`, `1.0`, `1.5`, `86400`, `86401`, `1e2`,
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

// TestSchemaValidatorAgreesWithReference: for every document the tests
// know and thousands of mutations of them, against every shipped schema,
// baton's validator and a general one agree on valid or not.
func TestSchemaValidatorAgreesWithReference(t *testing.T) {
	docs := corpus(t)
	n := 0
	for _, d := range docs {
		for _, doc := range append([][]byte{d}, mutations(d)...) {
			for k := range schemaFiles.Get() {
				sameVerdict(t, k, doc)
				n++
			}
		}
	}
	if n < 1000 {
		t.Fatalf("only %d checks: the corpus is missing", n)
	}
	for _, raw := range []string{`{} x`, `{}}`, `{"a":1,}`, ``, `{"request_id": "\ud800"}`, `{"duration_seconds": 1e999999999}`} {
		for k := range schemaFiles.Get() {
			sameVerdict(t, k, []byte(raw))
		}
	}
}

// FuzzSchemaValidatorAgreesWithReference: whatever bytes a host writes,
// baton's validator and a general one agree on whether they are a valid
// document of each kind.
func FuzzSchemaValidatorAgreesWithReference(f *testing.F) {
	for _, d := range corpus(f) {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return // keeps each run quick
		}
		for k := range schemaFiles.Get() {
			sameVerdict(t, k, data)
		}
	})
}
