package features_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/jsondoc"
)

// sample is a feature list with the predecessor's totals, legacy and new
// ids, every kind, and fields baton does not know.
const sample = `{
  "project": "Demo",
  "total_features": 3,
  "total_bugs": 1,
  "features": [
    {"id": "F001", "name": "Health", "category": "api", "steps": ["a", "b"], "passes": true, "x_custom": {"k": 1}},
    {"id": "F002", "name": "Login", "passes": false},
    {"id": "BUG-001", "name": "Crash", "type": "bug", "passes": false},
    {"id": "DEBT-001", "name": "Refactor", "type": "tech_debt", "source_review": "R3-m1", "passes": false},
    {"id": "FEAT-004", "name": "Export", "type": "feature", "passes": null}
  ],
  "x_trailer": [1,2]
}`

func mustParse(t *testing.T, data string) *features.File {
	t.Helper()
	f, err := features.Parse([]byte(data))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return f
}

// list builds a feature list from records.
func list(records ...string) string {
	return `{"features": [` + strings.Join(records, ",") + `]}`
}

func ids(fs []features.Feature) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID)
	}
	return strings.Join(out, ",")
}

func TestParseSample(t *testing.T) {
	f := mustParse(t, sample)
	if got := ids(f.All()); got != "F001,F002,BUG-001,DEBT-001,FEAT-004" {
		t.Errorf("All = %s", got)
	}
	if got := string(f.Bytes()); got != sample+"\n" {
		t.Errorf("untouched list changed on encoding:\n%s", got)
	}
	d, err := f.Get("DEBT-001")
	if err != nil || d.Kind() != "DEBT" || d.SourceReview != "R3-m1" || d.Name != "Refactor" || d.Passes {
		t.Errorf("Get(DEBT-001) = %+v, %v", d, err)
	}
	if g, _ := f.Get("F001"); !g.Passes || g.Kind() != "FEAT" {
		t.Errorf("Get(F001) = %+v", g)
	}
	if b, _ := f.Get("BUG-001"); b.Kind() != "BUG" {
		t.Errorf("BUG-001 kind %s", b.Kind())
	}
	if _, err := f.Get("F404"); errs.KindOf(err) != errs.NotFound || !strings.Contains(err.Error(), "F404") {
		t.Errorf("Get(F404) = %v, want NotFound", err)
	}
	raw, ok := f.Raw("F001")
	if !ok || gjson.GetBytes(raw, "x_custom.k").Int() != 1 {
		t.Errorf("Raw(F001) = %s, %v", raw, ok)
	}
	if _, ok := f.Raw("nope"); ok || f.Has("nope") || !f.Has("F002") {
		t.Error("Raw/Has of an unknown id")
	}
	if got := strings.Join(f.Passing(), ","); got != "F001" {
		t.Errorf("Passing = %s", got)
	}
}

func TestParseRejects(t *testing.T) {
	const bad = `{"name": "second"`
	tests := []struct {
		name, in, path, msg string
		atBad               bool
	}{
		{"not JSON", `{"features": [}`, "", "invalid character", false},
		{"top array", `[{"id": "F001"}]`, "", "one JSON object", false},
		{"features not array", `{"features": {"id": "F001"}}`, "features", "array", false},
		{"record not object", list(`{"id": "F001"}`, `"F002"`), "features[1]", "object", false},
		{"duplicate id", list(`{"id": "F001"}`, bad+`, "id": "F001"}`), "features[1].id", `duplicate feature id "F001"`, true},
		{"missing id", list(`{"id": "F001"}`, bad+`}`), "features[1].id", "non-empty string id", true},
		{"numeric id", list(`{"id": "F001"}`, bad+`, "id": 2}`), "features[1].id", "non-empty string id", true},
		{"blank id", list(`{"id": "F001"}`, bad+`, "id": " "}`), "features[1].id", "non-empty string id", true},
		{"null id", list(`{"id": "F001"}`, bad+`, "id": null}`), "features[1].id", "non-empty string id", true},
		{"passes a string", list(`{"id": "F001"}`, bad+`, "id": "F002", "passes": "true"}`), "features[1].passes", "true or false", true},
		{"passes a number", list(`{"id": "F001"}`, bad+`, "id": "F002", "passes": 1}`), "features[1].passes", "true or false", true},
		{"passes an object", list(bad + `, "id": "F002", "passes": {}}`), "features[0].passes", "true or false", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := features.Parse([]byte(tt.in))
			var ie *jsondoc.InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("Parse = %v (%T), want *jsondoc.InvalidError", err, err)
			}
			if ie.Path != tt.path || !strings.Contains(ie.Msg, tt.msg) {
				t.Errorf("Path %q Msg %q, want %q mentioning %q", ie.Path, ie.Msg, tt.path, tt.msg)
			}
			if want := strings.Index(tt.in, bad); tt.atBad && ie.Offset != want {
				t.Errorf("Offset %d, want %d (the offending record)", ie.Offset, want)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	for _, in := range []string{`{"features": []}`, list(`{"id": "x", "passes": null}`), list(`{"id": "x"}`)} {
		f := mustParse(t, in)
		for _, it := range f.All() {
			if it.Passes {
				t.Errorf("%s: %s passes", in, it.ID)
			}
		}
		out := f.Bytes()
		if !json.Valid(out) || !bytes.Equal(mustParse(t, string(out)).Bytes(), out) {
			t.Errorf("%s: encoding not valid or not stable:\n%s", in, out)
		}
	}
}

func TestPending(t *testing.T) {
	f := mustParse(t, sample)
	tests := []struct{ kind, want string }{
		{"", "F002,BUG-001,DEBT-001,FEAT-004"},
		{"FEAT", "F002,FEAT-004"},
		{"BUG", "BUG-001"},
		{"DEBT", "DEBT-001"},
		{"OTHER", ""},
	}
	for _, tt := range tests {
		if got := ids(f.Pending(tt.kind)); got != tt.want {
			t.Errorf("Pending(%q) = %s, want %s", tt.kind, got, tt.want)
		}
	}
}

func TestNormalizeKind(t *testing.T) {
	good := map[string]string{"BUG": "BUG", "bugs": "BUG", " debt ": "DEBT", "tech_debt": "DEBT", "feat": "FEAT", "Feature": "FEAT", "FEATURES": "FEAT"}
	for in, want := range good {
		if got, err := features.NormalizeKind(in); err != nil || got != want {
			t.Errorf("NormalizeKind(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "task", "tech-debt"} {
		if _, err := features.NormalizeKind(bad); errs.KindOf(err) != errs.Usage {
			t.Errorf("NormalizeKind(%q) = %v, want usage error", bad, err)
		}
	}
}

func TestSetPasses(t *testing.T) {
	f := mustParse(t, sample)
	already, err := f.SetPasses([]string{"F002", "F001", "BUG-001"}, true, "2025-01-30T00:00:00Z", "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(already, ",") != "F001" {
		t.Errorf("already = %v, want [F001]", already)
	}
	if got := ids(f.Pending("")); got != "DEBT-001,FEAT-004" {
		t.Errorf("Pending after pass = %s", got)
	}
	out := f.Bytes()
	g := mustParse(t, string(out))
	for _, id := range []string{"F001", "F002", "BUG-001"} {
		raw, _ := g.Raw(id)
		if r := gjson.ParseBytes(raw); r.Get("passes").Type != gjson.True || r.Get("passed_at").String() != "2025-01-30T00:00:00Z" {
			t.Errorf("%s = %s", id, raw)
		}
	}
	raw, _ := g.Raw("F001")
	if gjson.GetBytes(raw, "x_custom.k").Int() != 1 || gjson.GetBytes(raw, "steps.#").Int() != 2 {
		t.Errorf("unknown fields of F001 lost: %s", raw)
	}
	if !bytes.Contains(out, []byte(`{"id": "DEBT-001", "name": "Refactor", "type": "tech_debt", "source_review": "R3-m1", "passes": false}`)) {
		t.Error("an untouched record changed")
	}

	if _, err := f.SetPasses([]string{"F001"}, false, "2025-01-31T00:00:00Z", "regressed"); err != nil {
		t.Fatal(err)
	}
	it, _ := f.Get("F001")
	raw, _ = f.Raw("F001")
	r := gjson.ParseBytes(raw)
	if it.Passes || it.FailureReason != "regressed" || r.Get("passes").Type != gjson.False || r.Get("failed_at").String() != "2025-01-31T00:00:00Z" || r.Get("failure_reason").String() != "regressed" {
		t.Errorf("after fail: %+v %s", it, raw)
	}
}

// An id named twice in one batch was not "already" passing.
func TestSetPassesRepeatedID(t *testing.T) {
	f := mustParse(t, sample)
	already, err := f.SetPasses([]string{"F002", "F002"}, true, "2025-01-30T00:00:00Z", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(already) != 0 {
		t.Errorf("already = %v, want none: F002 was failing", already)
	}
}

func TestSetPassesAllOrNothing(t *testing.T) {
	tests := []struct {
		name string
		ids  []string
		kind errs.Kind
		msg  string
	}{
		{"one unknown id", []string{"F002", "NOPE", "BUG-001"}, errs.NotFound, "NOPE"},
		{"all unknown", []string{"X1", "X2"}, errs.NotFound, "X1, X2"},
		{"no ids", nil, errs.Usage, "no feature ids"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustParse(t, sample)
			before := string(f.Bytes())
			_, err := f.SetPasses(tt.ids, true, "2025-01-30T00:00:00Z", "")
			if errs.KindOf(err) != tt.kind || !strings.Contains(fmt.Sprint(err), tt.msg) {
				t.Errorf("SetPasses = %v, want %v mentioning %q", err, tt.kind, tt.msg)
			}
			if after := string(f.Bytes()); after != before {
				t.Errorf("a refused SetPasses changed the file:\n%s", after)
			}
			if got := ids(f.Pending("")); got != "F002,BUG-001,DEBT-001,FEAT-004" {
				t.Errorf("a refused SetPasses changed Pending: %s", got)
			}
		})
	}
}

func TestNextID(t *testing.T) {
	tests := []struct {
		ids             []string
		feat, bug, debt string
	}{
		{nil, "FEAT-001", "BUG-001", "DEBT-001"},
		{[]string{"F001", "F007"}, "FEAT-008", "BUG-001", "DEBT-001"},
		{[]string{"FEAT-003", "F010"}, "FEAT-011", "BUG-001", "DEBT-001"},
		{[]string{"F010", "FEAT-012"}, "FEAT-013", "BUG-001", "DEBT-001"},
		{[]string{"BUG-009", "BUG-010", "DEBT-002"}, "FEAT-001", "BUG-011", "DEBT-003"},
		{[]string{"FIX-1", "F1a", "FEAT-x", "BUG-", "FEATURE-9"}, "FEAT-001", "BUG-001", "DEBT-001"},
		{[]string{"FEAT-999"}, "FEAT-1000", "BUG-001", "DEBT-001"},
		{[]string{"BUG-7", "DEBT-0042"}, "FEAT-001", "BUG-008", "DEBT-043"},
	}
	for _, tt := range tests {
		var recs []string
		for _, id := range tt.ids {
			recs = append(recs, fmt.Sprintf(`{"id": %q}`, id))
		}
		f := mustParse(t, list(recs...))
		for kind, want := range map[string]string{"FEAT": tt.feat, "BUG": tt.bug, "DEBT": tt.debt} {
			if got := f.NextID(kind); got != want {
				t.Errorf("ids %v: NextID(%s) = %s, want %s", tt.ids, kind, got, want)
			}
		}
	}
}

func TestAppendAssignsIDsPerType(t *testing.T) {
	f := mustParse(t, sample)
	added, err := f.Append([][]byte{
		[]byte(`{"name": "a", "category": "ui"}`),
		[]byte(`{"name": "b", "type": "bug"}`),
		[]byte(`{"name": "c", "type": "tech_debt", "passes": true}`),
		[]byte(`{"name": "d", "source_appspec": "old.md", "x": [1]}`),
	}, "spec.md")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(added, ","); got != "FEAT-005,BUG-002,DEBT-002,FEAT-006" {
		t.Errorf("added %s", got)
	}
	out := f.Bytes()
	g := mustParse(t, string(out))
	for _, id := range added {
		raw, ok := g.Raw(id)
		if !ok {
			t.Fatalf("%s not in the re-read file", id)
		}
		r := gjson.ParseBytes(raw)
		if r.Get("source_appspec").String() != "spec.md" {
			t.Errorf("%s source_appspec = %s", id, r.Get("source_appspec").Raw)
		}
		var first string
		r.ForEach(func(k, _ gjson.Result) bool { first = k.Str; return false })
		if first != "id" {
			t.Errorf("%s: id is not the first field: %s", id, raw)
		}
	}
	if c, _ := g.Get("DEBT-002"); !c.Passes {
		t.Error("a given passes: true was overwritten")
	}
	if a, _ := g.Raw("FEAT-005"); gjson.GetBytes(a, "passes").Type != gjson.False || gjson.GetBytes(a, "category").String() != "ui" {
		t.Errorf("FEAT-005 = %s", a)
	}
	d, _ := g.Raw("FEAT-006")
	if n := strings.Count(string(d), `"source_appspec"`); n != 1 || gjson.GetBytes(d, "x.0").Int() != 1 {
		t.Errorf("FEAT-006 = %s", d)
	}
	if gjson.GetBytes(out, "total_features").Int() != 5 || gjson.GetBytes(out, "total_bugs").Int() != 2 {
		t.Errorf("totals not refreshed: features %s bugs %s", gjson.GetBytes(out, "total_features").Raw, gjson.GetBytes(out, "total_bugs").Raw)
	}
	if !bytes.Contains(out, []byte(`"x_trailer": [1,2]`)) {
		t.Error("unknown top-level member lost")
	}
	if !bytes.Equal(g.Bytes(), out) {
		t.Error("re-encoding is not stable")
	}
}

func TestAppendGivenAndAssignedIDs(t *testing.T) {
	f := features.New()
	added, err := f.Append([][]byte{
		[]byte(`{"name": "x"}`),
		[]byte(`{"id": "FEAT-010", "name": "y"}`),
		[]byte(`{"id": "BUG-003", "name": "z", "type": "bug"}`),
		[]byte(`{"name": "w", "type": "bug"}`),
	}, "s.md")
	if err != nil {
		t.Fatal(err)
	}
	// Given ids are settled first, so numbering continues after them.
	if got := strings.Join(added, ","); got != "FEAT-011,FEAT-010,BUG-003,BUG-004" {
		t.Errorf("added %s", got)
	}
	out := f.Bytes()
	if gjson.GetBytes(out, "total_features").Exists() {
		t.Error("total_features added to a file that did not have it")
	}
	if got := ids(mustParse(t, string(out)).All()); got != "FEAT-011,FEAT-010,BUG-003,BUG-004" {
		t.Errorf("file order %s", got)
	}
}

// An entry whose id is null gets an id, and the stored record has that one
// id — not a second, null "id" member that encoding/json and Python would
// read as the record's id.
func TestAppendNullID(t *testing.T) {
	f := features.New()
	added, err := f.Append([][]byte{[]byte(`{"id": null, "name": "x"}`)}, "s.md")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := f.Raw(added[0])
	if n := strings.Count(string(raw), `"id"`); n != 1 {
		t.Errorf("record has %d id members: %s", n, raw)
	}
	var doc struct {
		Features []struct {
			ID *string `json:"id"`
		} `json:"features"`
	}
	if err := json.Unmarshal(f.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Features[0].ID == nil || *doc.Features[0].ID != added[0] {
		t.Errorf("encoding/json reads the id as %v, want %s", doc.Features[0].ID, added[0])
	}
}

func TestAppendRefusals(t *testing.T) {
	tests := []struct {
		name    string
		entries []string
		msg     string
	}{
		{"existing id", []string{`{"name": "ok"}`, `{"id": "F001", "name": "dup"}`}, `entry 1: feature id "F001" already exists`},
		{"id given twice", []string{`{"id": "FEAT-100"}`, `{"name": "ok"}`, `{"id": "FEAT-100"}`}, `entry 2: feature id "FEAT-100" already exists`},
		{"not an object", []string{`{"name": "ok"}`, `["F009"]`}, "entry 1"},
		{"passes not a bool", []string{`{"name": "x", "passes": "yes"}`}, "entry 0: passes must be true or false"},
		{"numeric id", []string{`{"id": 7}`}, "entry 0: every feature needs a non-empty string id"},
		{"empty id", []string{`{"id": ""}`}, "entry 0: every feature needs a non-empty string id"},
		{"invalid JSON", []string{`{"name": "ok"}`, `{"id": "F050", "name": }`}, "entry 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustParse(t, sample)
			before := string(f.Bytes())
			var entries [][]byte
			for _, e := range tt.entries {
				entries = append(entries, []byte(e))
			}
			added, err := f.Append(entries, "s.md")
			if err == nil {
				t.Fatalf("Append = %v, want an error; file now\n%s", added, f.Bytes())
			}
			if errs.KindOf(err) != errs.Usage || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Append = %v (kind %v), want usage error containing %q", err, errs.KindOf(err), tt.msg)
			}
			if after := string(f.Bytes()); after != before {
				t.Errorf("a refused Append changed the file:\n%s", after)
			}
			if len(f.All()) != 5 || f.Has("FEAT-005") {
				t.Errorf("a refused Append changed the list: %s", ids(f.All()))
			}
		})
	}
}

func TestStats(t *testing.T) {
	rec := func(id, typ string, passes bool) string {
		return fmt.Sprintf(`{"id": %q, "type": %q, "passes": %v}`, id, typ, passes)
	}
	debt := func(n, passing int) []string {
		var out []string
		for i := 1; i <= n; i++ {
			out = append(out, rec(fmt.Sprintf("DEBT-%03d", i), "tech_debt", i <= passing))
		}
		return out
	}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name    string
		records []string
		next    string
		percent int
	}{
		{"empty", nil, "All done!", 0},
		{"all done", []string{rec("F001", "", true), rec("BUG-001", "bug", true)}, "All done!", 100},
		{"bug first", cat([]string{rec("F001", "", false), rec("BUG-001", "bug", true), rec("BUG-002", "bug", false)}, debt(6, 0)), "BUG-002 (bug - priority)", 11},
		{"five debts before features", cat([]string{rec("F001", "", false)}, debt(5, 0)), "GLOBAL_FIX (5 tech debt items accumulated)", 0},
		{"four debts: feature first", cat(debt(4, 0), []string{rec("F002", "feature", false), rec("F001", "", false)}), "F002", 0},
		{"passing debt does not count", cat([]string{rec("F001", "", false)}, debt(6, 2)), "F001", 28},
		{"only debt left", cat([]string{rec("F001", "", true)}, debt(2, 0)), "DEBT-001 (tech debt)", 33},
		{"only debt, enough for global fix", debt(7, 1), "GLOBAL_FIX (6 tech debt items accumulated)", 14},
		{"unknown type is a feature", []string{rec("X-1", "chore", false)}, "X-1", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustParse(t, list(tt.records...)).Stats()
			if s.Next != tt.next || s.Percent != tt.percent {
				t.Errorf("Next %q Percent %d, want %q %d", s.Next, s.Percent, tt.next, tt.percent)
			}
			if s.All.Total != len(tt.records) || s.Features.Total+s.Bugs.Total+s.TechDebt.Total != s.All.Total ||
				s.Features.Passing+s.Bugs.Passing+s.TechDebt.Passing != s.All.Passing {
				t.Errorf("counts do not add up: %+v", s)
			}
		})
	}
	s := mustParse(t, sample).Stats()
	want := features.Stats{
		Features: features.Count{Passing: 1, Total: 3}, Bugs: features.Count{Total: 1}, TechDebt: features.Count{Total: 1},
		All: features.Count{Passing: 1, Total: 5}, Percent: 20, Next: "BUG-001 (bug - priority)",
	}
	if s != want {
		t.Errorf("Stats(sample) = %+v, want %+v", s, want)
	}
}

func TestSplitAndCheckIDs(t *testing.T) {
	tests := []struct{ in, want string }{
		{"F001", "F001"},
		{"F001,F002", "F001|F002"},
		{" F001 , ,F002, ", "F001|F002"},
		{"", ""},
		{",,", ""},
	}
	for _, tt := range tests {
		if got := strings.Join(features.SplitIDs(tt.in), "|"); got != tt.want {
			t.Errorf("SplitIDs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	f := mustParse(t, sample)
	if err := f.CheckIDs([]string{"F001", "BUG-001"}); err != nil {
		t.Errorf("CheckIDs(known) = %v", err)
	}
	err := f.CheckIDs([]string{"F001", "Z1", "Z2"})
	if errs.KindOf(err) != errs.NotFound || !strings.Contains(err.Error(), "Z1, Z2") || strings.Contains(err.Error(), "F001") {
		t.Errorf("CheckIDs = %v", err)
	}
}
