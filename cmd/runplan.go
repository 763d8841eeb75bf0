package cmd

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/baton-cli/baton/ctxpack"
	"github.com/baton-cli/baton/errs"
	"github.com/baton-cli/baton/features"
	"github.com/baton-cli/baton/progress"
	"github.com/baton-cli/baton/prompts"
	"github.com/baton-cli/baton/workflow"
)

// promptBudget is the token budget of the context package a prompt carries.
const promptBudget = ctxpack.DefaultBudget

// planned is the next session, before it is opened: its assignment (with
// the session id it will get) and its rendered prompt.
type planned struct {
	assignment
	Prompt string
}

// planStep names the next session's branch when the workflow left it open
// and renders its prompt, opening nothing. A prompt template that cannot
// be rendered is a usage error naming the file and line.
func (a *App) planStep(ctx context.Context, n nextResult) (planned, error) {
	p := planned{assignment: assignment{Role: n.Phase, Feature: deref(n.Feature), Branch: deref(n.Branch), Reason: n.Reason}}
	err := a.snapshot(ctx, func(sn *snapshot) error {
		p.Session = sn.prog.NextSessionID()
		if sn.open != nil && sn.open.MaxID() >= p.Session {
			p.Session = sn.open.MaxID() + 1
		}
		if p.Branch == "" {
			p.Branch = workBranch(p.Role, p.Feature, p.Session)
		}
		var err error
		p.Prompt, err = a.renderPrompt(sn, p.assignment)
		return err
	})
	return p, err
}

// renderPrompt renders the prompt of w with its context package.
func (a *App) renderPrompt(sn *snapshot, w assignment) (string, error) {
	in := a.contextInput(sn, w)
	pkg := ctxpack.Build(in, promptBudget)
	out, err := prompts.Render(filepath.Join(sn.s.BatonDir(), "prompts"), a.promptData(sn, w, in, pkg))
	var pe *prompts.Error
	if errors.As(err, &pe) {
		return "", errs.New(errs.Usage, "%v — correct the template (or remove it to use the built-in one); no session was opened", pe)
	}
	return out, err
}

var unsafeBranchChars = regexp.MustCompile(`[^a-z0-9_-]+`)

// workBranch names the branch of work the workflow gives no branch: a
// feature or bug branch for IMPLEMENT and BUGFIX (named after the items),
// a refactor branch for GLOBAL_FIX (FIX may only create refactor/
// branches). Other roles work on no branch of their own.
func workBranch(role, feature string, session int) string {
	ids := features.SplitIDs(feature)
	slug := unsafeBranchChars.ReplaceAllString(strings.ToLower(strings.Join(ids, "-")), "-")
	if len(slug) > 60 {
		slug = slug[:60]
	}
	slug = strings.Trim(slug, "-")
	switch role {
	case workflow.PhaseImplement, workflow.PhaseBugfix:
		if slug == "" {
			return ""
		}
		if role == workflow.PhaseBugfix {
			return "bugfix/" + slug
		}
		return "feature/" + slug
	case workflow.PhaseGlobalFix:
		return "refactor/tech-debt-" + strconv.Itoa(session)
	}
	return ""
}

// dryRun prints the prompt the next session would get, opening nothing.
func (a *App) dryRun(ctx context.Context) error {
	n, err := a.nextStep(ctx)
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
	p, err := a.planStep(ctx, n)
	if err != nil {
		return err
	}
	a.notice("[baton run] dry run: the next session would be %d, %s %s on %s", p.Session, p.Role, orDash(p.Feature), orDash(p.Branch))
	if a.g.JSON {
		n.Branch = progress.Nullable(p.Branch)
		return a.writeJSON(a.env.Stdout, map[string]any{"stopped": "dry-run", "next": n, "sessions": []runSession{}, "session_id": p.Session, "prompt": p.Prompt})
	}
	_, err = io.WriteString(a.env.Stdout, p.Prompt)
	return err
}
