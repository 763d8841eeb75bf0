package cli

import (
	"context"
	"io"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/workflow"
)

// dryRun prints the prompt the next session would get, opening nothing.
func (a *App) dryRun(ctx context.Context, o runOpts) error {
	n, err := a.app.RunNext(ctx, a.caller())
	if err != nil {
		return err
	}
	switch n.Phase {
	case workflow.PhaseDone:
		a.notice("[baton run] DONE: %s", n.Reason)
		return nil
	case workflow.PhaseStopped:
		return errs.New(errs.Policy, "the run is STOPPED for a person: %s (see 'baton status')", n.Reason)
	}
	p, err := a.app.PlanStep(ctx, a.caller(), n)
	if err != nil {
		return err
	}
	a.notice("[baton run] dry run: the next session would be %d, %s %s on %s", p.Session, p.Role, app.OrDash(p.Feature), app.OrDash(p.Branch))
	agent := a.planAgent(o, p.Role)
	a.notePlan(agent)
	if a.g.JSON {
		n.Branch = progress.Nullable(p.Branch)
		return a.writeJSON(a.env.Stdout, map[string]any{"stopped": "dry-run", "next": n, "sessions": []runSession{}, "session_id": p.Session, "prompt": p.Prompt, "agent": agent})
	}
	_, err = io.WriteString(a.env.Stdout, p.Prompt)
	return err
}
