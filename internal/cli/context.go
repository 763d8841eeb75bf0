package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/ctxpack"
)

func (a *App) newContextCmd() *cobra.Command {
	var o app.ContextInput
	c := &cobra.Command{
		Use:   "context",
		Short: "Print what the bound session's role needs now: task, history, git facts, rules, pointers",
		Long: `Print the context package of the bound session: the task (the items with their description and
test steps; for FIX the review's issues with ids, locations and suggestions; for GLOBAL_FIX the debt
items; for ARCHITECTURE the interval and what was merged since the last one), the history that
matters (earlier sessions' summaries, reviews and fixes, fix cycles left), the git facts (branch,
base, commit range, diff stat), the rules of the role and pointers (spec file, AGENTS.md/CLAUDE.md,
the test command). Items are ranked and cut to --budget tokens, whole: what is left out is named.

A person asks for a role's view of some work with --role ROLE [--feature IDS] [--branch B].
It reads only; it suits an agent host's session-start hook (see docs/agents.md).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			pkg, err := a.app.Context(c.Context(), a.caller(), o)
			if err != nil {
				return err
			}
			return a.emit(pkg, func(w io.Writer) { _, _ = io.WriteString(w, pkg.Text()) })
		},
	}
	f := c.Flags()
	f.StringVar(&o.Role, "role", "", "the role to assemble for, instead of the bound session's")
	f.StringVar(&o.Feature, "feature", "", "with --role: the feature id or batch")
	f.StringVar(&o.Branch, "branch", "", "with --role: the branch of the work")
	f.IntVar(&o.Budget, "budget", ctxpack.DefaultBudget, "largest package, in tokens (about 4 bytes each)")
	return c
}
