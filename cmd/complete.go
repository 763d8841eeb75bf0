package cmd

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/progress"
	"github.com/baton-cli/baton/reviews"
)

// Shell completion: `baton completion SHELL` prints the script; the script
// asks `baton __complete ...`, which answers from the state files (read
// without the lock: a completion never waits for a writer).

// completion kinds, each answered from the state or a fixed list.
const (
	compFeature = "feature"
	compReview  = "review"
	compFix     = "fix"
	compSession = "session"
	compRole    = "role"
	compVerdict = "verdict"
	compOutcome = "outcome"
	compPhase   = "phase"
	compBranch  = "branch"
	compType    = "type"
	compSchema  = "schema"
)

// flagCompletions: which flag names complete what, in every command.
var flagCompletions = map[string]string{
	"feature": compFeature, "feature-id": compFeature, "features": compFeature, "current-feature": compFeature,
	"review": compReview, "review-id": compReview,
	"session":    compSession,
	"agent":      compRole,
	"agent-type": compRole,
	"role":       compRole,
	"verdict":    compVerdict,
	"outcome":    compOutcome,
	"phase":      compPhase, "next-phase": compPhase,
	"branch": compBranch, "current-branch": compBranch, "from": compBranch,
	"type": compType,
}

// argCompletions: what a command's positional arguments complete.
var argCompletions = map[string]string{
	"features get": compFeature, "features pass": compFeature, "features pass-batch": compFeature,
	"features fail": compFeature, "reviews get-fix-count": compFeature, "show": compFeature,
	"reviews get-review":   compReview,
	"reviews mark-merged":  compFix,
	"progress get-session": compSession,
	"schema":               compSchema,
}

// addCompletions registers the completion functions across the tree.
func (a *App) addCompletions(c *cobra.Command) {
	if kind, ok := argCompletions[commandKey(c)]; ok && c.ValidArgsFunction == nil {
		c.ValidArgsFunction = a.completer(kind)
	}
	c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		kind, ok := flagCompletions[f.Name]
		if !ok || (kind == compPhase && f.Value.Type() != "string") {
			return
		}
		_ = c.RegisterFlagCompletionFunc(f.Name, a.completer(kind))
	})
	for _, sub := range c.Commands() {
		a.addCompletions(sub)
	}
}

func (a *App) completer(kind string) cobra.CompletionFunc {
	return func(c *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, v := range a.completions(c.Context(), kind) {
			if strings.HasPrefix(strings.ToUpper(v), strings.ToUpper(toComplete)) || strings.HasPrefix(v, toComplete) {
				out = append(out, v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completions lists the values of a kind, "value\tdescription" where a
// description helps.
func (a *App) completions(ctx context.Context, kind string) []string {
	switch kind {
	case compRole:
		return progress.AgentTypes
	case compVerdict:
		return reviews.Verdicts
	case compOutcome:
		return progress.Outcomes
	case compPhase:
		return progress.Phases
	case compType:
		return []string{"FEAT", "BUG", "DEBT"}
	case compSchema:
		return schemaNames()
	}
	if ctx == nil {
		ctx = context.Background()
	}
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
	case compFeature:
		if sn.feat != nil {
			for _, f := range sn.feat.All() {
				out = append(out, f.ID+"\t"+f.Name)
			}
		}
	case compReview:
		if sn.rev != nil {
			for _, r := range sn.rev.Reviews() {
				out = append(out, fmt.Sprintf("%d\tR%d %s %s", r.Get("review_id").Int(), r.Get("review_id").Int(), r.Get("verdict").String(), r.Get("feature_id").String()))
			}
		}
	case compFix:
		if sn.rev != nil {
			for _, x := range sn.rev.Fixes() {
				out = append(out, reviews.FixLabel(int(x.Get("fix_id").Int()))+"\tanswers R"+x.Get("review_id").String())
			}
		}
	case compSession:
		out = sn.sessionCompletions()
	case compBranch:
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
