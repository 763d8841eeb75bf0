package jsondoc_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/jsondoc"
)

var splitKeys = []string{"id", "type", "passes"}

// splitKeysWant is what SplitKeys must answer for valid JSON: SplitArray's
// records and offsets, and for each record the raw value of the first of
// each key that a walk of its members meets (nil when absent).
func splitKeysWant(t *testing.T, raw []byte) ([][]byte, []int, [][]byte) {
	t.Helper()
	elems, offs, err := jsondoc.SplitArray(raw)
	if err != nil {
		t.Fatalf("SplitArray(%q): %v", raw, err)
	}
	var vals [][]byte
	for _, e := range elems {
		got := make([][]byte, len(splitKeys))
		gjson.ParseBytes(e).ForEach(func(k, v gjson.Result) bool {
			for i, want := range splitKeys {
				if got[i] == nil && k.Str == want {
					got[i] = []byte(v.Raw)
				}
			}
			return true
		})
		vals = append(vals, got...)
	}
	return elems, offs, vals
}

func TestSplitKeys(t *testing.T) {
	for _, tc := range []struct {
		raw string
		ok  bool
	}{
		{`[]`, true},
		{" [ ] ", true},
		{`[{}]`, true},
		{`[{"id":"F001","passes":true}]`, true},
		{"[\n    {\n      \"id\": \"F001\",\n      \"steps\": [\"a]\", \"}b\"],\n      \"passes\": false\n    },\n    {\"type\": \"bug\", \"id\": \"B\\\"1\"}\n  ]", true},
		{`[{"id":"a","id":"b","type":null,"passes":null}]`, true},                              // the first counts
		{`[{"x":{"id":"inner"},"id":"outer"}]`, true},                                          // only the record's own members
		{`[{"note":"a \\\" \"id\": 1 \\\\","id":7}]`, true},                                    // quotes inside a string
		{`[{"id":"F1","passes":true,"n":-1.5e3,"t":[[],{}],"u":"\u00e9"}, {"id":"F2"}]`, true}, // escapes in values are fine
		{`[{"\u0069d":"F001"}]`, false},                                                        // an escaped key could be "id"
		{`[{"id":"F001"}, 1]`, false},                                                          // not an object
		{`["F001"]`, false},
		{`{"id":"F001"}`, false},
		{`[{"id":"F001"}`, false}, // cut short
	} {
		elems, offs, vals, ok := jsondoc.SplitKeys([]byte(tc.raw), splitKeys, 3)
		if ok != tc.ok {
			t.Errorf("SplitKeys(%s): ok %v, want %v", tc.raw, ok, tc.ok)
			continue
		}
		if ok {
			sameSplit(t, []byte(tc.raw), elems, offs, vals)
		}
	}
}

func sameSplit(t *testing.T, raw []byte, elems [][]byte, offs []int, vals [][]byte) {
	t.Helper()
	we, wo, wv := splitKeysWant(t, raw)
	if len(elems) != len(we) || len(offs) != len(wo) || len(vals) != len(wv) {
		t.Fatalf("SplitKeys(%s): %d records %d offsets %d values, want %d %d %d", raw, len(elems), len(offs), len(vals), len(we), len(wo), len(wv))
	}
	for i := range we {
		if !bytes.Equal(elems[i], we[i]) || offs[i] != wo[i] {
			t.Fatalf("SplitKeys(%s): record %d %q at %d, want %q at %d", raw, i, elems[i], offs[i], we[i], wo[i])
		}
	}
	for i := range wv {
		if (vals[i] == nil) != (wv[i] == nil) || !bytes.Equal(vals[i], wv[i]) {
			t.Fatalf("SplitKeys(%s): value %d (record %d, %s) %q, want %q", raw, i, i/len(splitKeys), splitKeys[i%len(splitKeys)], vals[i], wv[i])
		}
	}
}

// FuzzSplitKeys: on any valid JSON array, SplitKeys either declines or
// gives SplitArray's records with the values a walk of each record finds;
// it declines only for an element that is not an object or a key with an
// escape.
func FuzzSplitKeys(f *testing.F) {
	for _, s := range []string{`[]`, `[{"id":"F001","type":"bug","passes":true}]`, `[{"a":[{"id":1}],"id":"x\"y"},{}]`,
		`[{"\u0069d":1}]`, `[1,{"id":2}]`, "[\n {\"id\" : \"a\\\\\" , \"passes\":null}\n]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) || !gjson.ParseBytes(raw).IsArray() {
			return
		}
		elems, offs, vals, ok := jsondoc.SplitKeys(raw, splitKeys, 0)
		if ok {
			sameSplit(t, raw, elems, offs, vals)
			return
		}
		simple := true
		gjson.ParseBytes(raw).ForEach(func(_, e gjson.Result) bool {
			simple = simple && e.IsObject()
			e.ForEach(func(k, _ gjson.Result) bool {
				simple = simple && !bytes.ContainsRune([]byte(k.Raw), '\\')
				return true
			})
			return simple
		})
		if simple {
			t.Fatalf("SplitKeys declined %q, an array of objects with no escaped key", raw)
		}
	})
}
