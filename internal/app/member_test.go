package app

import (
	"bytes"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/jsondoc"
)

// TestMappedMember: a top-level member read around the recorded arrays is
// the member gjson finds in the whole file — before, between and after the
// arrays, absent, and with facts that do not fit the file (read whole).
func TestMappedMember(t *testing.T) {
	doc := []byte(`{"project": {"name": "p"}, "sessions": [{"status": "inner"}, {"id": 2}], "mid": 1, "fixes": [[1], {"status": 3}], "status": {"current_branch": "b", "phase": "REVIEW"}}`)
	span := func(key string) [2]int {
		s := bytes.Index(doc, []byte(`"`+key+`": [`)) + len(key) + 4
		e := s + len(gjson.GetBytes(doc, key).Raw)
		return [2]int{s, e}
	}
	good := jsondoc.Facts{"sessions": {Span: span("sessions")}, "fixes": {Span: span("fixes")}}
	for name, facts := range map[string]jsondoc.Facts{
		"spans":         good,
		"none":          nil,
		"span off":      {"sessions": {Span: [2]int{5, 20}}},
		"span too long": {"sessions": {Span: [2]int{span("sessions")[0], len(doc) + 5}}},
		"overlapping":   {"sessions": {Span: span("sessions")}, "again": {Span: span("sessions")}},
	} {
		m := &mapped{data: doc, facts: facts}
		for _, key := range []string{"status", "project", "mid", "sessions", "fixes", "missing", "status.phase"} {
			got, err := m.member(key)
			if err != nil {
				t.Fatalf("%s: member(%q): %v", name, key, err)
			}
			if want := gjson.GetBytes(doc, key).Raw; got.Raw != want && !(key == "sessions" || key == "fixes") {
				t.Errorf("%s: member(%q) = %q, want %q", name, key, got.Raw, want)
			}
		}
	}
	if got, err := (&mapped{data: doc, facts: good}).member("status.current_branch"); err != nil || got.String() != "b" {
		t.Errorf("status.current_branch = %q, %v", got.String(), err)
	}
}
