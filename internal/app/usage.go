package app

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/progress"
)

// RecordUsage records u as session id's usage in progress.json: the
// launcher's write after the session's agent exited.
func (a *App) RecordUsage(ctx context.Context, c Caller, id int, u progress.Usage) error {
	return a.as(c).update(ctx, "baton run", progress.FileName, func(st *state) error {
		p, err := st.progress()
		if err != nil {
			return err
		}
		if err := p.SetSessionUsage(id, u); err != nil {
			return err
		}
		st.touch(progress.FileName)
		st.summary = fmt.Sprintf("recorded session %d's usage (%s): %s", id, u.Source, UsageText(u))
		return nil
	})
}

// UsageText is a usage in one line: cost, then tokens.
func UsageText(u progress.Usage) string {
	s := fmt.Sprintf("$%.4f, %d tokens in, %d out", u.CostUSD, u.InputTokens, u.OutputTokens)
	if u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 {
		s += fmt.Sprintf(", cache %d read, %d written", u.CacheReadTokens, u.CacheWriteTokens)
	}
	return s
}

// Cost is what a group of sessions spent.
type Cost struct {
	Key          string  `json:"key"`
	Sessions     int     `json:"sessions"`
	CostUSD      float64 `json:"cost_usd"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
}

// Costs are the recorded usage added up: in all, and by session, role,
// feature and run (the sessions that recorded none are left out).
type Costs struct {
	Total     Cost   `json:"total"`
	BySession []Cost `json:"by_session"`
	ByRole    []Cost `json:"by_role"`
	ByFeature []Cost `json:"by_feature"`
	ByRun     []Cost `json:"by_run"`
}

// costsOf adds up the usage of p's sessions (of run only, unless run is
// "").
func costsOf(p *progress.File, run string) Costs {
	var c Costs
	roles, feats, runs := map[string]*Cost{}, map[string]*Cost{}, map[string]*Cost{}
	add := func(m map[string]*Cost, key string, u gjson.Result) {
		if m[key] == nil {
			m[key] = &Cost{Key: key}
		}
		addUsage(m[key], u)
	}
	p.Sessions(func(raw []byte) {
		r := gjson.ParseBytes(raw)
		u := r.Get("usage")
		if !u.IsObject() || (run != "" && u.Get("run").String() != run) {
			return
		}
		s := Cost{Key: r.Get("session_id").String()}
		addUsage(&s, u)
		addUsage(&c.Total, u)
		c.BySession = append(c.BySession, s)
		add(roles, r.Get("agent_type").String(), u)
		for _, f := range r.Get("features_touched").Array() {
			add(feats, f.String(), u)
		}
		if run := u.Get("run").String(); run != "" {
			add(runs, run, u)
		}
	})
	c.Total.Key = "total"
	c.ByRole, c.ByFeature, c.ByRun = sortedCosts(roles), sortedCosts(feats), sortedCosts(runs)
	return c
}

func addUsage(c *Cost, u gjson.Result) {
	c.Sessions++
	c.CostUSD += u.Get("cost_usd").Float()
	c.InputTokens += u.Get("input_tokens").Int()
	c.OutputTokens += u.Get("output_tokens").Int()
}

func sortedCosts(m map[string]*Cost) []Cost {
	out := make([]Cost, 0, len(m))
	for _, c := range m {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// CostsNow are the costs recorded in the project's progress.json: of
// every session, or of run's only.
func (a *App) CostsNow(ctx context.Context, run string) (Costs, error) {
	var c Costs
	err := a.snapshot(ctx, func(sn *snapshot) error {
		if sn.prog != nil {
			c = costsOf(sn.prog, run)
		}
		return nil
	})
	return c, err
}

// CostLine is the costs in one line, by role: "$1.6000 in 4 sessions
// (IMPLEMENT $1.2000, REVIEW $0.4000)"; "" when nothing was recorded.
func (c Costs) CostLine() string {
	if c.Total.Sessions == 0 {
		return ""
	}
	parts := make([]string, 0, len(c.ByRole))
	for _, r := range c.ByRole {
		parts = append(parts, fmt.Sprintf("%s $%.4f", r.Key, r.CostUSD))
	}
	return fmt.Sprintf("$%.4f in %d session(s), %d tokens in, %d out (%s)", c.Total.CostUSD, c.Total.Sessions, c.Total.InputTokens, c.Total.OutputTokens, strings.Join(parts, ", "))
}

// FeatureLine is the costs by feature: "F001 $1.2000, F002 $0.4000".
func (c Costs) FeatureLine() string {
	parts := make([]string, 0, len(c.ByFeature))
	for _, f := range c.ByFeature {
		parts = append(parts, fmt.Sprintf("%s $%.4f", f.Key, f.CostUSD))
	}
	return strings.Join(parts, ", ")
}
