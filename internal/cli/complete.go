package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
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
	return a.app.Completions(ctx, a.caller(), kind)
}
