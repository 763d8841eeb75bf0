package app

import (
	"reflect"
	"testing"

	"github.com/baton-cli/baton/internal/progress"
)

func TestCostsOf(t *testing.T) {
	p := progress.New("demo", 2, "2025-01-29T10:00:00Z", nil)
	add := func(role string, feats []string, u *progress.Usage) {
		s, err := p.AddSession(progress.Session{AgentType: role, StartedAt: "2025-01-29T10:00:00Z", CompletedAt: "2025-01-29T10:01:00Z", Outcome: "SUCCESS", FeaturesTouched: feats})
		if err != nil {
			t.Fatal(err)
		}
		if u != nil {
			if err := p.SetSessionUsage(s.SessionID, *u); err != nil {
				t.Fatal(err)
			}
		}
	}
	add("IMPLEMENT", []string{"F001"}, &progress.Usage{InputTokens: 100, OutputTokens: 10, CostUSD: 1.5, Run: "r1"})
	add("REVIEW", []string{"F001"}, &progress.Usage{InputTokens: 50, OutputTokens: 5, CostUSD: 0.5, Run: "r1"})
	add("IMPLEMENT", []string{"F001", "F002"}, &progress.Usage{InputTokens: 10, OutputTokens: 1, CostUSD: 0.25, Run: "r2"})
	add("REVIEW", nil, nil) // no usage reported: left out
	if err := p.SetSessionUsage(99, progress.Usage{}); err == nil {
		t.Error("the usage of a session that does not exist was recorded")
	}

	c := costsOf(p, "")
	want := Costs{
		Total:     Cost{Key: "total", Sessions: 3, CostUSD: 2.25, InputTokens: 160, OutputTokens: 16},
		BySession: []Cost{{"1", 1, 1.5, 100, 10}, {"2", 1, 0.5, 50, 5}, {"3", 1, 0.25, 10, 1}},
		ByRole:    []Cost{{"IMPLEMENT", 2, 1.75, 110, 11}, {"REVIEW", 1, 0.5, 50, 5}},
		ByFeature: []Cost{{"F001", 3, 2.25, 160, 16}, {"F002", 1, 0.25, 10, 1}},
		ByRun:     []Cost{{"r1", 2, 2, 150, 15}, {"r2", 1, 0.25, 10, 1}},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("costsOf =\n%+v\nwant\n%+v", c, want)
	}
	if got := c.CostLine(); got != "$2.2500 in 3 session(s), 160 tokens in, 16 out (IMPLEMENT $1.7500, REVIEW $0.5000)" {
		t.Errorf("CostLine = %q", got)
	}
	if got := costsOf(p, "r2"); got.Total.CostUSD != 0.25 || len(got.BySession) != 1 || got.FeatureLine() != "F001 $0.2500, F002 $0.2500" {
		t.Errorf("one run's costs: %+v", got)
	}
	if got := (Costs{}).CostLine(); got != "" {
		t.Errorf("nothing recorded: %q", got)
	}
	// the record keeps its other fields and takes the usage as an extension
	raw, _ := p.SessionRaw(1)
	q, err := progress.Parse(p.Bytes())
	if err != nil {
		t.Fatalf("progress.json with usage does not parse: %v", err)
	}
	if again, _ := q.SessionRaw(1); string(again) != string(raw) {
		t.Errorf("the record changed through a rewrite:\n%s\n%s", raw, again)
	}
}
