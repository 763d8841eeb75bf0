package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/errs"
	"github.com/baton-cli/baton/gitops"
	"github.com/baton-cli/baton/workflow"
)

func (a *App) newBranchCmd() *cobra.Command {
	return group("branch", "Create work branches (IMPLEMENT: feature branches; FIX: refactor/ branches)",
		a.newBranchCreateCmd())
}

// ---- branch create

type branchCreateOpts struct {
	Name, From string
}

type branchCreated struct {
	Branch string `json:"branch"`
	At     string `json:"at"`
	From   string `json:"from"`
}

func (a *App) newBranchCreateCmd() *cobra.Command {
	var o branchCreateOpts
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
			return a.runBranchCreate(c.Context(), c.CommandPath(), o)
		},
	}
	c.Flags().StringVar(&o.From, "from", "", "commit, branch or tag to start at (default: the head of main)")
	return c
}

func (a *App) runBranchCreate(ctx context.Context, cmdPath string, o branchCreateOpts) error {
	r, err := a.needRepo("branch create")
	if err != nil {
		return err
	}
	name := strings.TrimSpace(o.Name)
	action := workflow.CreateFeatureBranch
	if strings.HasPrefix(name, "refactor/") {
		action = workflow.CreateRefactorBranch
	}
	var out branchCreated
	err = a.update(ctx, cmdPath, "", func(st *state) error {
		if _, err := st.require(action); err != nil {
			return err
		}
		at, from, err := a.branchStart(r, st, o.From)
		if err != nil {
			return err
		}
		if cur, err := r.Branch(name); err == nil {
			return errs.New(errs.Conflict, "branch %s already exists (at %s): pick another name, or switch to it with 'git switch %s'", name, gitops.Short(cur), name)
		}
		if err := st.intend(gitIntent{Op: "create-branch", Repo: r.Top(), Branch: name, BranchHead: at}); err != nil {
			return err
		}
		if err := r.CreateBranch(name, at); err != nil {
			if errors.Is(err, gitops.ErrUnknownRevision) {
				return gitErr(err, "creating %s", name)
			}
			return errs.New(errs.Usage, "NAME: %v (see 'git check-ref-format --help')", err)
		}
		out = branchCreated{Branch: name, At: gitops.Short(at), From: from}
		st.summary = fmt.Sprintf("created branch %s at %s (from %s)", name, out.At, from)
		st.logAlways()
		return nil
	})
	if err != nil {
		return a.withUndone(err)
	}
	return a.emit(out, func(w io.Writer) {
		printf(w, "SUCCESS: Created branch %s at %s (from %s)", out.Branch, out.At, out.From)
		printf(w, "Switch to it with: git switch %s", out.Branch)
	})
}

// branchStart resolves where a new branch starts: --from, else main.
func (a *App) branchStart(r gitops.Repo, st *state, from string) (at, label string, err error) {
	if strings.TrimSpace(from) == "" {
		name, head, err := mainOf(r, st.cfg)
		if err != nil {
			return "", "", fmt.Errorf("%w; or give --from REV", err)
		}
		return head, name, nil
	}
	at, err = a.resolveRev(r, "--from", strings.TrimSpace(from))
	return at, strings.TrimSpace(from), err
}
