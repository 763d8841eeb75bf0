package gojq

import (
	"encoding/json"
	"os"
	"testing"
)

// builtAtInit says whether the builtin tables were there before any test
// ran: after every package initialisation, before any query.
var builtAtInit bool

func TestMain(m *testing.M) {
	builtAtInit = builtinFuncDefs != nil || internalFuncs != nil
	os.Exit(m.Run())
}

// The builtin tables are not built at package initialisation: a process
// that links gojq and runs no query pays nothing for them.
func TestBuiltinTablesAreLazy(t *testing.T) {
	if builtAtInit {
		t.Fatal("the builtin tables were built before any query was compiled")
	}
	q, err := Parse(".a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(q); err != nil {
		t.Fatal(err)
	}
	if len(builtinFuncs()) == 0 || len(internalFuncTable()) == 0 {
		t.Fatal("the builtin tables are empty after a compile")
	}
}

// Queries that use builtins of both kinds — defined in jq (map, select,
// to_entries, add, any) and in Go (length, keys, tostring, @base64,
// sort_by, ltrimstr) — give jq's answers.
func TestBuiltins(t *testing.T) {
	in := map[string]any{"a": []any{3.0, 1.0, 2.0}, "b": map[string]any{"x": "y"}, "s": "baton-v1"}
	for _, c := range []struct{ query, want string }{
		{`.a | map(. * 2)`, `[6,2,4]`},
		{`.a | map(select(. > 1))`, `[3,2]`},
		{`.b | to_entries`, `[{"key":"x","value":"y"}]`},
		{`.a | add`, `6`},
		{`.a | any(. == 2)`, `true`},
		{`.a | length`, `3`},
		{`keys`, `["a","b","s"]`},
		{`.a | sort_by(-.)`, `[3,2,1]`},
		{`.s | ltrimstr("baton-")`, `"v1"`},
		{`.s | @base64`, `"YmF0b24tdjE="`},
		{`[.a[] | tostring] | join(",")`, `"3,1,2"`},
		{`builtins | length > 100`, `true`},
	} {
		q, err := Parse(c.query)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		code, err := Compile(q)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		v, ok := code.Run(in).Next()
		if !ok {
			t.Fatalf("%s: no result", c.query)
		}
		if err, ok := v.(error); ok {
			t.Fatalf("%s: %v", c.query, err)
		}
		got, _ := json.Marshal(v)
		if string(got) != c.want {
			t.Errorf("%s = %s, want %s", c.query, got, c.want)
		}
	}
}
