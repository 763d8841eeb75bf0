package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/internal/app"
)

func (a *App) newBranchCmd() *cobra.Command {
	return group("branch", "Create work branches (IMPLEMENT: feature branches; FIX: refactor/ branches)",
		a.newBranchCreateCmd())
}

func (a *App) newBranchCreateCmd() *cobra.Command {
	var o app.BranchCreateInput
	c := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a work branch at main (or --from REV); IMPLEMENT creates feature branches, FIX only refactor/ branches",
		Long: `Create a branch for the work, at the head of main unless --from names a commit, branch or tag
(optionally with ~N or ^N). The branch is created, not checked out: switch to it with
'git switch NAME' (or 'git worktree add DIR NAME'). Who may: IMPLEMENT any branch, FIX only a
refactor/... branch, a person anything.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.Name = args[0]
			out, err := a.app.BranchCreate(c.Context(), a.caller(), o)
			if err != nil {
				return err
			}
			return a.emit(out, func(w io.Writer) {
				printf(w, "SUCCESS: Created branch %s at %s (from %s)", out.Branch, out.At, out.From)
				printf(w, "Switch to it with: git switch %s", out.Branch)
			})
		},
	}
	c.Flags().StringVar(&o.From, "from", "", "commit, branch or tag to start at (default: the head of main)")
	return c
}
