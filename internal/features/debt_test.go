package features

import (
	"testing"

	"github.com/tidwall/gjson"
)

func TestReviewRef(t *testing.T) {
	for in, want := range map[string]string{`"R3"`: "R3", `"r3"`: "R3", `"3"`: "R3", `3`: "R3", `"A2"`: "A2", `""`: "", `"code_review"`: "code_review"} {
		if got := ReviewRef(gjson.Parse(in)); got != want {
			t.Errorf("ReviewRef(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestSameDebt(t *testing.T) {
	auto := `{"id":"DEBT-001","type":"tech_debt","source_review":"R2","source_issue":"R2-m1","location":"app.py:10","description":"Magic number in retry loop"}`
	cases := []struct {
		name, entry string
		want        bool
	}{
		{"same issue id", `{"type":"tech_debt","source_review":"R2","source_issue":"R2-m1"}`, true},
		{"same location, review as a number", `{"type":"tech_debt","source_review":2,"location":"app.py:10","description":"other words"}`, true},
		{"same description, spacing and case", `{"type":"tech_debt","source_review":"R2","description":"magic  number in retry loop"}`, true},
		{"another review", `{"type":"tech_debt","source_review":"R3","source_issue":"R2-m1","description":"Magic number in retry loop"}`, false},
		{"no source review", `{"type":"tech_debt","description":"Magic number in retry loop"}`, false},
		{"another issue of the review", `{"type":"tech_debt","source_review":"R2","location":"app.py:99","description":"Long function"}`, false},
		{"not tech debt", `{"type":"feature","source_review":"R2","source_issue":"R2-m1"}`, false},
	}
	for _, c := range cases {
		if got := SameDebt([]byte(auto), []byte(c.entry)); got != c.want {
			t.Errorf("%s: SameDebt = %v, want %v", c.name, got, c.want)
		}
	}
	f := New()
	if _, err := f.Append([][]byte{[]byte(`{"id":"F001","name":"x","passes":false}`), []byte(auto)}, "test"); err != nil {
		t.Fatal(err)
	}
	if got := f.DuplicateDebt([]byte(cases[0].entry)); got != "DEBT-001" {
		t.Errorf("DuplicateDebt = %q, want DEBT-001", got)
	}
	if got := f.DuplicateDebt([]byte(cases[5].entry)); got != "" {
		t.Errorf("DuplicateDebt of another issue = %q, want none", got)
	}
}
