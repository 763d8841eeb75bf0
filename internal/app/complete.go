package app

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/reviews"
)

// Completions lists the values the state holds of a kind — "feature",
// "review", "fix", "session" or "branch" — as "value\tdescription" (a
// shell's completions). It reads without the lock and says nothing on an
// error.
func (a *App) Completions(ctx context.Context, c Caller, kind string) []string {
	if a.remote != nil {
		out, _ := forward[[]string](ctx, a, c, "completions", CompletionsInput{Kind: kind})
		return out
	}
	a = a.as(c)
	s, err := a.openStore("")
	if err != nil {
		return nil
	}
	sn, err := a.readSnapshot(ctx, s)
	if err != nil {
		return nil
	}
	return sn.completions(kind)
}

func (sn *snapshot) completions(kind string) []string {
	var out []string
	switch kind {
	case "feature":
		if sn.feat != nil {
			for _, f := range sn.feat.All() {
				out = append(out, f.ID+"\t"+f.Name)
			}
		}
	case "review":
		if sn.rev != nil {
			for _, r := range sn.rev.Reviews() {
				out = append(out, fmt.Sprintf("%d\tR%d %s %s", r.Get("review_id").Int(), r.Get("review_id").Int(), r.Get("verdict").String(), r.Get("feature_id").String()))
			}
		}
	case "fix":
		if sn.rev != nil {
			for _, x := range sn.rev.Fixes() {
				out = append(out, reviews.FixLabel(int(x.Get("fix_id").Int()))+"\tanswers R"+x.Get("review_id").String())
			}
		}
	case "session":
		out = sn.sessionCompletions()
	case "branch":
		out = sn.branches()
	}
	return out
}

func (sn *snapshot) sessionCompletions() []string {
	var out []string
	for _, s := range sn.open.Open {
		out = append(out, fmt.Sprintf("%d\topen %s since %s", s.SessionID, s.AgentType, s.StartedAt))
	}
	if sn.prog != nil {
		sn.prog.Sessions(func(raw []byte) {
			s := gjson.ParseBytes(raw)
			out = append(out, fmt.Sprintf("%d\t%s %s", s.Get("session_id").Int(), s.Get("agent_type").String(), s.Get("outcome").String()))
		})
	}
	return out
}

// branches are the branches the state names: the current one, the sessions',
// the reviews' and the fixes', and main.
func (sn *snapshot) branches() []string {
	seen := map[string]bool{}
	add := func(b string) {
		if b = strings.TrimSpace(b); b != "" {
			seen[b] = true
		}
	}
	add(sn.cfg.MainBranch)
	if sn.prog != nil {
		add(gjson.GetBytes(sn.prog.StatusRaw(), "current_branch").String())
		sn.prog.Sessions(func(raw []byte) { add(gjson.GetBytes(raw, "branch").String()) })
	}
	for _, s := range sn.open.Open {
		if s.Branch != nil {
			add(*s.Branch)
		}
	}
	if sn.rev != nil {
		for _, r := range sn.rev.Reviews() {
			add(r.Get("branch").String())
		}
		for _, x := range sn.rev.Fixes() {
			add(x.Get("branch").String())
		}
	}
	out := make([]string, 0, len(seen))
	for b := range seen {
		out = append(out, b)
	}
	sort.Strings(out)
	return out
}
