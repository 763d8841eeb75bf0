package cmd

import (
	"context"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/ctxpack"
	"github.com/baton-cli/baton/errs"
	"github.com/baton-cli/baton/features"
	"github.com/baton-cli/baton/progress"
	"github.com/baton-cli/baton/workflow"
)

// contextOpts are `baton context`'s options.
type contextOpts struct {
	Role, Feature, Branch string
	Budget                int
}

func (a *App) newContextCmd() *cobra.Command {
	var o contextOpts
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
It reads only; it suits an agent host's session-start hook (see the README).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.runContext(c.Context(), o) },
	}
	f := c.Flags()
	f.StringVar(&o.Role, "role", "", "the role to assemble for, instead of the bound session's")
	f.StringVar(&o.Feature, "feature", "", "with --role: the feature id or batch")
	f.StringVar(&o.Branch, "branch", "", "with --role: the branch of the work")
	f.IntVar(&o.Budget, "budget", ctxpack.DefaultBudget, "largest package, in tokens (about 4 bytes each)")
	return c
}

func (a *App) runContext(ctx context.Context, o contextOpts) error {
	if o.Budget < 1 {
		return errs.New(errs.Usage, "--budget: must be at least 1 token, got %d", o.Budget)
	}
	if o.Role == "" && (o.Feature != "" || o.Branch != "") {
		return errs.New(errs.Usage, "--feature and --branch go with --role; without --role baton context describes the bound session")
	}
	w, err := a.contextAssignment(ctx, o)
	if err != nil {
		return err
	}
	var pkg ctxpack.Package
	err = a.snapshot(ctx, func(sn *snapshot) error {
		if sn.prog == nil {
			return firstProblemOr(sn, missing(sn.s, progress.FileName, "baton init"))
		}
		w = sn.fillAssignment(w)
		pkg = ctxpack.Build(a.contextInput(sn, w), o.Budget)
		return nil
	})
	if err != nil {
		return err
	}
	return a.emit(pkg, func(w io.Writer) { _, _ = io.WriteString(w, pkg.Text()) })
}

// contextAssignment is the work baton context describes: the person's
// --role view, else the bound session (or the one open session).
func (a *App) contextAssignment(ctx context.Context, o contextOpts) (assignment, error) {
	if o.Role != "" {
		role, err := progress.Choose("--role", o.Role, workflow.Roles, nil)
		if err != nil {
			return assignment{}, err
		}
		return assignment{Role: role, Feature: strings.Join(features.SplitIDs(o.Feature), ","), Branch: o.Branch}, nil
	}
	out, err := a.sub(ctx, nil, "--json", "session", "current")
	if err != nil {
		return assignment{}, err
	}
	list := gjson.GetBytes(out, "sessions")
	if !list.Exists() {
		list = gjson.ParseBytes(out)
	}
	if n := len(list.Array()); n != 1 {
		return assignment{}, errs.New(errs.Usage, "baton context describes the session it runs in, and %d sessions are open with none bound to this call; a person names the view with --role ROLE [--feature IDS]", n)
	}
	s := list.Array()[0]
	var ids []string
	s.Get("features").ForEach(func(_, v gjson.Result) bool { ids = append(ids, v.String()); return true })
	return assignment{Role: s.Get("agent_type").String(), Feature: strings.Join(ids, ","), Branch: s.Get("branch").String(),
		Session: int(s.Get("session_id").Int())}, nil
}

// fillAssignment completes w from the workflow's decision when that
// decision is about w's role: a session started without --feature or
// --branch works on what the workflow chose, for the reason it gives.
func (sn *snapshot) fillAssignment(w assignment) assignment {
	n := sn.next()
	if canonicalRole(n.Phase) != canonicalRole(w.Role) {
		return w
	}
	if w.Feature == "" && w.Branch == "" {
		w.Feature, w.Branch = deref(n.Feature), deref(n.Branch)
	}
	if w.Feature == deref(n.Feature) {
		if w.Branch == "" {
			w.Branch = deref(n.Branch)
		}
		if w.Reason == "" {
			w.Reason = n.Reason
		}
	}
	if w.Branch == "" && (w.Role == workflow.PhaseImplement || w.Role == workflow.PhaseBugfix) {
		w.Branch = workBranch(w.Role, w.Feature, w.Session)
	}
	return w
}
