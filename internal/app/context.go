package app

import (
	"context"
	"strings"

	"github.com/baton-cli/baton/internal/ctxpack"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/workflow"
)

// ContextInput is what baton context takes.
type ContextInput struct {
	Role    string `json:"role,omitempty"`    // a person's view: the role to assemble for
	Feature string `json:"feature,omitempty"` // with Role: the feature id or batch
	Branch  string `json:"branch,omitempty"`  // with Role: the branch of the work
	Budget  int    `json:"budget"`            // largest package, in tokens
}

// contextAssignment is the work baton context describes: the person's
// --role view, else the bound session (or the one open session).
func (a *App) contextAssignment(ctx context.Context, o ContextInput) (Assignment, error) {
	if o.Role != "" {
		role, err := progress.Choose("--role", o.Role, workflow.Roles, nil)
		if err != nil {
			return Assignment{}, err
		}
		return Assignment{Role: role, Feature: strings.Join(features.SplitIDs(o.Feature), ","), Branch: o.Branch}, nil
	}
	cur, err := a.SessionCurrent(ctx, a.caller)
	if err != nil {
		return Assignment{}, err
	}
	if n := len(cur.Sessions); n != 1 {
		return Assignment{}, errs.New(errs.Usage, "baton context describes the session it runs in, and %d sessions are open with none bound to this call; a person names the view with --role ROLE [--feature IDS]", n)
	}
	s := cur.Sessions[0]
	return Assignment{Role: s.AgentType, Feature: strings.Join(s.Features, ","), Branch: Deref(s.Branch), Session: s.SessionID}, nil
}

// fillAssignment completes w from the workflow's decision when that
// decision is about w's role: a session started without --feature or
// --branch works on what the workflow chose, for the reason it gives. A
// lane's session works on its lane's item, for its item's reason.
func (sn *snapshot) fillAssignment(w Assignment) Assignment {
	if l, ok := sn.prog.LaneOf(w.Session); ok && w.Session != 0 {
		return sn.laneAssignment(w, l)
	}
	n := sn.next()
	if canonicalRole(n.Phase) != canonicalRole(w.Role) {
		return w
	}
	if w.Feature == "" && w.Branch == "" {
		w.Feature, w.Branch = Deref(n.Feature), Deref(n.Branch)
	}
	if w.Feature == Deref(n.Feature) {
		if w.Branch == "" {
			w.Branch = Deref(n.Branch)
		}
		if w.Reason == "" {
			w.Reason = n.Reason
		}
	}
	if w.Branch == "" && (w.Role == workflow.PhaseImplement || w.Role == workflow.PhaseBugfix) {
		w.Branch = workflow.WorkBranchName(w.Role, w.Feature, w.Session)
	}
	return w
}

// laneAssignment completes w from its lane (workflow.LaneView).
func (sn *snapshot) laneAssignment(w Assignment, l progress.Lane) Assignment {
	var pl *progress.Pipeline
	if got, ok := sn.prog.Pipelines()[l.Item]; ok {
		pl = &got
	}
	if v, ok := workflow.LaneView(l, pl); ok {
		if w.Feature == "" {
			w.Feature = Deref(v.Feature)
		}
		if w.Branch == "" {
			w.Branch = Deref(v.Branch)
		}
		w.Reason = v.Reason
		if n := sn.next(); pl == nil && workflow.ItemOf(n.Feature, n.Branch, n.Phase) == l.Item {
			w.Reason = n.Reason // the step it was opened for, as the status gives it
		}
	}
	if w.Branch == "" && (w.Role == workflow.PhaseImplement || w.Role == workflow.PhaseBugfix) {
		w.Branch = workflow.WorkBranchName(w.Role, w.Feature, w.Session)
	}
	return w
}

// Context is the context package of the caller's session (or, for a person, in.Role's view of some work): the task, the history that matters, git facts, rules and pointers, cut to in.Budget tokens.
func (a *App) Context(ctx context.Context, c Caller, in ContextInput) (ctxpack.Package, error) {
	if a.remote != nil {
		return forward[ctxpack.Package](ctx, a, c, "context", in)
	}
	var out ctxpack.Package
	err := a.as(c).runContext(ctx, in, &out)
	return out, err
}

func (a *App) runContext(ctx context.Context, o ContextInput, dst *ctxpack.Package) error {
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
	*dst = pkg
	return nil
}
