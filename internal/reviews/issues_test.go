package reviews_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/reviews"
)

// assign parses input and numbers its issues with prefix, returning the
// stored grouped form.
func assign(t *testing.T, input, prefix string) (json.RawMessage, error) {
	t.Helper()
	issues, err := reviews.ParseIssues("--issues", []byte(input))
	if err != nil {
		t.Fatalf("ParseIssues(%s): %v", input, err)
	}
	return reviews.AssignIDs(issues, prefix)
}

// groupIDs returns the ids in each severity group of a stored issues object.
func groupIDs(t *testing.T, raw json.RawMessage) map[string][]string {
	t.Helper()
	var groups map[string][]map[string]any
	if err := json.Unmarshal(raw, &groups); err != nil {
		t.Fatalf("stored issues are not grouped JSON: %v\n%s", err, raw)
	}
	out := map[string][]string{}
	for _, sev := range reviews.Severities {
		list, ok := groups[sev]
		if !ok || list == nil {
			t.Errorf("group %q missing or null in %s", sev, raw)
		}
		for _, is := range list {
			id, _ := is["id"].(string)
			out[sev] = append(out[sev], id)
		}
	}
	return out
}

func TestParseIssuesForms(t *testing.T) {
	tests := []struct {
		name  string
		input string
		sevs  []string // severity of each pending issue, in order
		ids   []string // id given on each
	}{
		{"seed grouped", `{"critical": [], "major": [{"id": "R1-M1", "description": "Missing error handling", "location": "health.py:15", "suggestion": "try/except"}], "minor": [], "suggestions": []}`,
			[]string{"major"}, []string{"R1-M1"}},
		{"grouped aliases any case", `{"Blocker": [{"description": "a"}], "HIGH": [{"description": "b"}], "low": [{"description": "c"}], "nit": [{"description": "d"}], "suggestion": [{"description": "e"}], "Critical": [{"description": "f"}]}`,
			[]string{"critical", "major", "minor", "suggestions", "suggestions", "critical"}, []string{"", "", "", "", "", ""}},
		{"flat", `[{"severity": "major", "description": "a"}, {"severity": "Critical", "description": "b", "id": "R2-C1"}, {"severity": "nit", "description": "c"}, {"severity": "LOW", "description": "d"}, {"severity": "high", "description": "e"}, {"severity": "blocker", "description": "f"}, {"severity": "suggestions", "description": "g"}]`,
			[]string{"major", "critical", "suggestions", "minor", "major", "critical", "suggestions"}, []string{"", "R2-C1", "", "", "", "", ""}},
		{"empty object", `{}`, nil, nil},
		{"empty list", ` [ ] `, nil, nil},
		{"empty groups", `{"critical": [], "minor": []}`, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := reviews.ParseIssues("--issues", []byte(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.sevs) {
				t.Fatalf("%d issues, want %d", len(got), len(tt.sevs))
			}
			for i, p := range got {
				if p.Severity != tt.sevs[i] || p.ID != tt.ids[i] {
					t.Errorf("issue %d = %s %q, want %s %q", i, p.Severity, p.ID, tt.sevs[i], tt.ids[i])
				}
			}
		})
	}
}

func TestParseIssuesErrors(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"syntax on line 1", `{"major": [}`, "--issues: invalid JSON at line 1, column 12"},
		{"syntax on line 3", "[\n  {\"severity\": \"major\",\n   \"description\": \"x\",}\n]", "invalid JSON at line 3, column 23"},
		{"empty input", ``, "invalid JSON at line 1, column 1"},
		{"a string", `"fix everything"`, "must be a JSON object grouped by severity or a list of issues"},
		{"a number", `3`, "must be a JSON object grouped by severity or a list of issues"},
		{"unknown group", `{"major": [], "urgent": []}`, `unknown group "urgent"`},
		{"group not a list", `{"major": {"description": "x"}}`, "major must be a list of issues"},
		{"grouped item not an object", `{"major": [{"description": "ok"}, "text"]}`, "item major[1] must be an object with a description"},
		{"grouped missing description", `{"minor": [{"location": "a.go:1"}]}`, `item minor[0] needs a non-empty "description"`},
		{"blank description", `{"minor": [{"description": "  "}]}`, `item minor[0] needs a non-empty "description"`},
		{"description not a string", `{"critical": [{"description": 5}]}`, `item critical[0] needs a non-empty "description"`},
		{"flat unknown severity", `[{"severity": "urgent", "description": "x"}]`, `item [0]: severity must be critical, major, minor or suggestion, found "urgent"`},
		{"flat missing severity", `[{"severity": "major", "description": "x"}, {"description": "y"}]`, `item [1]: severity must be`},
		{"flat missing description", `[{"severity": "major", "description": "x"}, {"severity": "minor"}]`, `item [1] needs a non-empty "description"`},
		{"flat item not an object", `[{"severity": "major", "description": "x"}, 7]`, `item [1]`},
		{"id not a string", `{"major": [{"description": "x", "id": 5}]}`, "item major[0]: id must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := reviews.ParseIssues("--issues", []byte(tt.input))
			if err == nil {
				t.Fatalf("ParseIssues = %d issues, want an error", len(got))
			}
			if errs.KindOf(err) != errs.Usage {
				t.Errorf("kind %v, want usage", errs.KindOf(err))
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to contain %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "--issues: ") {
				t.Errorf("error %q does not name the flag", err)
			}
		})
	}
}

func TestAssignIDs(t *testing.T) {
	tests := []struct {
		name, input, prefix string
		want                map[string][]string
	}{
		{"feature review numbering", `{"major": [{"description": "a"}, {"description": "b"}], "minor": [{"description": "c"}]}`, reviews.IssuePrefix("REVIEW", 5),
			map[string][]string{"major": {"R5-M1", "R5-M2"}, "minor": {"R5-m1"}}},
		{"architecture numbering", `{"critical": [{"description": "a"}], "suggestions": [{"description": "s"}]}`, reviews.IssuePrefix("ARCHITECTURE", 7),
			map[string][]string{"critical": {"A7-C1"}, "suggestions": {"A7-S1"}}},
		{"every letter", `[{"severity": "suggestion", "description": "s"}, {"severity": "minor", "description": "m"}, {"severity": "major", "description": "M"}, {"severity": "critical", "description": "C"}, {"severity": "minor", "description": "m2"}]`, "R1-",
			map[string][]string{"critical": {"R1-C1"}, "major": {"R1-M1"}, "minor": {"R1-m1", "R1-m2"}, "suggestions": {"R1-S1"}}},
		{"given ids kept, gaps filled", `{"major": [{"id": "R5-M2", "description": "a"}, {"description": "b"}, {"description": "c"}, {"id": "R5-M5", "description": "d"}]}`, "R5-",
			map[string][]string{"major": {"R5-M2", "R5-M1", "R5-M3", "R5-M5"}}},
		{"given id later in the list is not reused", `{"minor": [{"description": "a"}, {"id": "R5-m1", "description": "b"}]}`, "R5-",
			map[string][]string{"minor": {"R5-m2", "R5-m1"}}},
		{"empty id is no id", `{"major": [{"id": "", "description": "a"}]}`, "R5-",
			map[string][]string{"major": {"R5-M1"}}},
		{"no issues", `[]`, "R3-", map[string][]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := assign(t, tt.input, tt.prefix)
			if err != nil {
				t.Fatal(err)
			}
			got := groupIDs(t, raw)
			for _, sev := range reviews.Severities {
				if strings.Join(got[sev], ",") != strings.Join(tt.want[sev], ",") {
					t.Errorf("%s ids = %v, want %v", sev, got[sev], tt.want[sev])
				}
			}
			// Groups come in the seed's order.
			r := gjson.ParseBytes(raw)
			var keys []string
			r.ForEach(func(k, _ gjson.Result) bool { keys = append(keys, k.Str); return true })
			if strings.Join(keys, ",") != "critical,major,minor,suggestions" {
				t.Errorf("group order %v", keys)
			}
		})
	}
}

func TestAssignIDsRefusesIDsThatDoNotFit(t *testing.T) {
	tests := []struct {
		name, input, prefix, want string
	}{
		{"wrong review number", `{"major": [{"id": "R4-M1", "description": "a"}]}`, "R5-", `id "R4-M1" does not fit this review; a major issue here is R5-MN`},
		{"minor letter on a major", `{"major": [{"id": "R5-m1", "description": "a"}]}`, "R5-", `"R5-m1" does not fit`},
		{"major letter on a minor", `{"minor": [{"id": "R5-M1", "description": "a"}]}`, "R5-", `a minor issue here is R5-mN`},
		{"critical letter on a suggestion", `{"suggestions": [{"id": "R5-C1", "description": "a"}]}`, "R5-", `a suggestion issue here is R5-SN`},
		{"feature prefix on an architecture review", `{"major": [{"id": "R5-M1", "description": "a"}]}`, "A5-", `a major issue here is A5-MN`},
		{"zero", `{"major": [{"id": "R5-M0", "description": "a"}]}`, "R5-", `"R5-M0" does not fit`},
		{"no number", `{"major": [{"id": "R5-M", "description": "a"}]}`, "R5-", `"R5-M" does not fit`},
		{"junk number", `{"major": [{"id": "R5-Mx", "description": "a"}]}`, "R5-", `"R5-Mx" does not fit`},
		{"given twice", `{"major": [{"id": "R5-M1", "description": "a"}, {"id": "R5-M1", "description": "b"}]}`, "R5-", `id "R5-M1" is given twice`},
		{"given twice across forms", `[{"severity": "major", "id": "R5-M3", "description": "a"}, {"severity": "high", "id": "R5-M3", "description": "b"}]`, "R5-", `given twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := assign(t, tt.input, tt.prefix)
			if err == nil {
				t.Fatal("AssignIDs succeeded, want an error")
			}
			if errs.KindOf(err) != errs.Usage || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v (kind %v), want usage containing %q", err, errs.KindOf(err), tt.want)
			}
		})
	}
}

// An id is R{review}-{letter}{n} with n written plainly: "R5-M01" and
// "R5-M+1" would both be issue 1 and can clash with the R5-M1 that
// numbering hands out.
func TestAssignIDsRefusesNonCanonicalNumbers(t *testing.T) {
	for _, id := range []string{"R5-M01", "R5-M+1", "R5-M 1"} {
		raw, err := assign(t, `{"major": [{"id": "`+id+`", "description": "a"}, {"description": "b"}]}`, "R5-")
		if err == nil {
			t.Errorf("id %q accepted; stored ids %v", id, groupIDs(t, raw)["major"])
		}
	}
}

func TestAssignIDsKeepsFields(t *testing.T) {
	raw, err := assign(t, `[{"description": "d", "severity": "major", "location": "x.go:1", "extra": {"k": [1, 2]}, "id": "R5-M4"}]`, "R5-")
	if err != nil {
		t.Fatal(err)
	}
	// id first, severity dropped (the group says it), every other field kept in order.
	want := `{"critical":[],"major":[{"id":"R5-M4","description":"d","location":"x.go:1","extra":{"k":[1,2]}}],"minor":[],"suggestions":[]}`
	if string(raw) != want {
		t.Errorf("stored\n%s\nwant\n%s", raw, want)
	}
	// A grouped item keeps a severity field it carries.
	raw, err = assign(t, `{"minor": [{"severity": "minor", "description": "d"}]}`, "R1-")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `{"id":"R1-m1","severity":"minor","description":"d"}`) {
		t.Errorf("grouped item = %s", raw)
	}
}

// Text in an issue is stored as written: baton never HTML-escapes (the
// seed's readers and people grepping the file see "<", not "\u003c").
func TestAssignIDsDoesNotEscapeHTML(t *testing.T) {
	raw, err := assign(t, `{"major": [{"description": "a < b && c > d", "location": "<template>"}]}`, "R1-")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"a < b && c > d"`) || !strings.Contains(string(raw), `"<template>"`) {
		t.Errorf("text changed on storing: %s", raw)
	}
	// And so in the file AddReview writes.
	issues, err := reviews.ParseIssues("--issues", []byte(`{"major": [{"description": "a < b"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	f := reviews.New()
	if _, err := f.AddReview(reviews.NewReview{AgentType: "REVIEW", Verdict: "REQUEST_CHANGES", Issues: issues}); err != nil {
		t.Fatal(err)
	}
	if out := f.Bytes(); !strings.Contains(string(out), `"description": "a < b"`) {
		t.Errorf("reviews.json holds the description escaped:\n%s", out)
	}
}

func TestReadIssues(t *testing.T) {
	grouped := `{"critical": [{"id": "R1-C1", "description": "c", "location": "l", "suggestion": "s"}],
		"major": [{"id": "R1-M1", "description": "m1"}, {"id": "R1-M2", "description": "m2"}],
		"minor": [], "suggestions": [{"id": "R1-S1", "description": "s1"}], "unknown": [{"id": "X"}]}`
	flat := `[{"id": "R1-m1", "severity": "minor", "description": "a"},
		{"id": "R1-C1", "severity": "CRITICAL", "description": "b"},
		{"id": "R1-x", "severity": "weird", "description": "c"},
		{"id": "R1-S1", "severity": "nit", "description": "d"},
		{"id": "R1-M1", "severity": "high", "description": "e"}]`
	tests := []struct {
		name, in string
		ids      []string
		sevs     []string
	}{
		{"grouped", grouped, []string{"R1-C1", "R1-M1", "R1-M2", "R1-S1"}, []string{"critical", "major", "major", "suggestions"}},
		{"flat, sorted by severity, unknown severity is minor", flat, []string{"R1-C1", "R1-M1", "R1-m1", "R1-x", "R1-S1"}, []string{"critical", "major", "minor", "minor", "suggestions"}},
		{"empty grouped", `{"critical": [], "major": [], "minor": [], "suggestions": []}`, nil, nil},
		{"null", `null`, nil, nil},
		{"absent", ``, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := reviews.ReadIssues(gjson.Parse(tt.in))
			if strings.Join(idsOf(got), ",") != strings.Join(tt.ids, ",") {
				t.Errorf("ids = %v, want %v", idsOf(got), tt.ids)
			}
			for i := range got {
				if i < len(tt.sevs) && got[i].Severity != tt.sevs[i] {
					t.Errorf("issue %s severity %q, want %q", got[i].ID, got[i].Severity, tt.sevs[i])
				}
			}
		})
	}
	c := reviews.ReadIssues(gjson.Parse(grouped))[0]
	if c.Description != "c" || c.Location != "l" || c.Suggestion != "s" {
		t.Errorf("fields = %+v", c)
	}
	if n := reviews.IssueCount(gjson.Parse(`{"issues": ` + flat + `}`)); n != 5 {
		t.Errorf("IssueCount = %d", n)
	}
}

func TestBlocking(t *testing.T) {
	is := func(sevs ...string) []reviews.Issue {
		var out []reviews.Issue
		for _, s := range sevs {
			out = append(out, reviews.Issue{Severity: s})
		}
		return out
	}
	tests := []struct {
		issues []reviews.Issue
		want   bool
	}{
		{nil, false},
		{is("minor", "suggestions"), false},
		{is("minor", "major"), true},
		{is("critical"), true},
		{is("suggestions", "suggestions", "critical"), true},
	}
	for _, tt := range tests {
		if got := reviews.Blocking(tt.issues); got != tt.want {
			t.Errorf("Blocking(%v) = %v, want %v", tt.issues, got, tt.want)
		}
	}
}

// Issues read back from a stored review give the same answer as the input.
func TestAssignThenRead(t *testing.T) {
	raw, err := assign(t, `[{"severity": "minor", "description": "a"}, {"severity": "critical", "description": "b"}]`, "R9-")
	if err != nil {
		t.Fatal(err)
	}
	got := reviews.ReadIssues(gjson.ParseBytes(raw))
	if strings.Join(idsOf(got), ",") != "R9-C1,R9-m1" || !reviews.Blocking(got) {
		t.Errorf("read back %+v", got)
	}
}
