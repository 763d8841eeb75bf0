package schemacheck

import (
	"strconv"
	"strings"
	"testing"
)

// A keyword the validator does not check is refused, never ignored.
func TestCompileRefusesWhatItDoesNotCheck(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`{"type": "object", "oneOf": [{}]}`, `#: keyword "oneOf"`},
		{`{"properties": {"a": {"$ref": "#/x"}}}`, `#/properties/a: keyword "$ref"`},
		{`{"items": {"uniqueItems": true}}`, `#/items: keyword "uniqueItems"`},
		{`{"additionalProperties": {"not": {}}}`, `#/additionalProperties: keyword "not"`},
		{`{"format": "email"}`, `format email is not supported`},
		{`{"type": "text"}`, `unknown type "text"`},
		{`{"pattern": "("}`, `#/pattern:`},
		{`{"minLength": -1}`, `non-negative integer`},
		{`{"minimum": "1"}`, `must be a number`},
		{`{"items": [{}]}`, `single items schema`},
		{`[]`, `object or a boolean`},
		{`{} {}`, `after top-level value`},
	}
	for _, tt := range tests {
		_, err := Compile([]byte(tt.schema))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Compile(%s) = %v, want an error containing %q", tt.schema, err, tt.want)
		}
	}
	if _, err := Compile([]byte(`{"$schema": "x", "$id": "y", "title": "t", "description": "d", "default": 1, "examples": [], "$comment": "c"}`)); err != nil {
		t.Fatalf("annotations must be ignored: %v", err)
	}
}

const testSchema = `{
  "type": "object", "required": ["id", "n"], "additionalProperties": false,
  "properties": {
    "id": {"type": "string", "format": "uuid"},
    "n": {"type": "integer", "minimum": 1, "maximum": 10},
    "s": {"type": ["string", "null"], "minLength": 2, "maxLength": 3, "pattern": "^a"},
    "e": {"enum": ["x", 1]},
    "c": {"const": {"k": [1]}},
    "t": {"type": "string", "format": "date-time"},
    "l": {"type": "array", "items": {"type": "object", "additionalProperties": {"type": "boolean"}}},
    "m": {"type": "number", "maximum": 10},
    "f": false
  }
}`

func TestValidate(t *testing.T) {
	s, err := Compile([]byte(testSchema))
	if err != nil {
		t.Fatal(err)
	}
	const ok = `"id": "550E8400-e29b-41d4-a716-446655440000", "n": 1.0`
	tests := []struct{ doc, want string }{
		{`{` + ok + `}`, ``},
		{`{` + ok + `, "s": null, "e": 1.0, "c": {"k": [1e0]}, "t": "2016-12-31T23:59:60Z", "l": [{"a": true}]}`, ``},
		{`{"x": 1, "y": 2}`, `[] 5 missing properties 'id', 'n' | [] 6 additional properties 'x', 'y' not allowed`},
		{`{"id": "550e8400", "n": 2.5}`, `[id] 4 '550e8400' is not valid uuid | [n] 1 got number, want integer`},
		{`{` + ok + `, "n": 0}`, `[n] 10 minimum: got 0, want 1`},
		{`{` + ok + `, "n": 11}`, `[n] 11 maximum: got 11, want 10`},
		{`{` + ok + `, "s": "bcde"}`, `[s] 8 maxLength: got 4, want 3 | [s] 9 'bcde' does not match pattern '^a'`},
		{`{` + ok + `, "s": "é"}`, `[s] 7 minLength: got 1, want 2 | [s] 9 'é' does not match pattern '^a'`},
		{`{` + ok + `, "s": 1}`, `[s] 1 got number, want null or string`},
		{`{` + ok + `, "e": "y"}`, `[e] 3 value must be one of 'x', 1`},
		{`{` + ok + `, "c": {"k": [2]}}`, `[c] 2 value must be map[k:[1]]`},
		{`{` + ok + `, "t": "2025-02-29T10:00:00Z"}`, `[t] 4 '2025-02-29T10:00:00Z' is not valid date-time`},
		{`{` + ok + `, "t": "2025-01-01T10:00:60Z"}`, `[t] 4 '2025-01-01T10:00:60Z' is not valid date-time`},
		{`{` + ok + `, "l": [{"a": 1}]}`, `[l 0 a] 1 got number, want boolean`},
		{`{` + ok + `, "f": 1}`, `[f] 0 false schema`},
		{`{` + ok + `, "n": 1e999999999}`, `[n] 1 got number, want integer`},
		{`{` + ok + `, "m": 1e999999999}`, `[m] 11 maximum: got +Inf, want 10`},
		{`{` + ok + `, "m": -1e999999999}`, ``},
	}
	for _, tt := range tests {
		doc, err := Decode([]byte(tt.doc))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range s.Validate(doc) {
			got = append(got, strings.TrimSpace(fmtLoc(e))+" "+e.Error())
		}
		if g := strings.Join(got, " | "); g != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.doc, g, tt.want)
		}
	}
}

func fmtLoc(e *Error) string {
	return "[" + strings.Join(e.Location, " ") + "] " + strconv.Itoa(int(e.Kind))
}

func TestFormats(t *testing.T) {
	for s, want := range map[string]bool{
		"2025-11-24T14:22:45Z": true, "2025-11-24t14:22:45z": true, "2025-11-24T14:22:45.123456+00:00": true,
		"2016-12-31T23:59:60Z": true, "2016-12-31T18:59:60-05:00": true, "2016-12-31T23:59:60+01:00": false,
		"2025-11-24 14:22:45Z": false, "2025-11-24T14:22:45": false, "2025-11-24T24:00:00Z": false,
		"2025-11-24T14:22:45.Z": false, "2025-11-24T14:22:45+0100": false, "2025-11-24T+1:22:45Z": false,
		"2024-02-29T00:00:00Z": true, "2025-02-29T00:00:00Z": false, "2025-11-24T14:22:45+24:00": false,
	} {
		if got := isDateTime(s); got != want {
			t.Errorf("isDateTime(%q) = %v", s, got)
		}
	}
	for s, want := range map[string]bool{
		"550e8400-e29b-41d4-a716-446655440000": true, "550E8400-E29B-41D4-A716-446655440000": true,
		"550e8400e29b41d4a716446655440000": false, "550e8400-e29b-41d4-a716-44665544000g": false,
		"550e8400-e29b-41d4-a716-4466554400000": false, "": false,
	} {
		if got := isUUID(s); got != want {
			t.Errorf("isUUID(%q) = %v", s, got)
		}
	}
}
