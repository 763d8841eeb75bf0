package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

// Batches of the landing queue ("gate": {"batch": N}): the first N queued
// items are merged onto main one after another, moving no ref, and the
// gate runs once on the last merged tree. When it passes they land one by
// one, each merge by compare-and-swap in a transaction of its own, and
// main ends on exactly the tree the gate passed. When it fails, the
// bisection (workflow.Bisection) gates halves on main until it has found
// the items that broke it; those go back as FIX work, the others land.
// Every gate run is a log entry: a failing one at once, a passing one
// with each landing it covers.

// plannedMerge is one item of a batch, merged onto the one before it.
type plannedMerge struct {
	q    progress.Landing
	tree string // the tree its merge makes
}

// planBatch merges qs onto main at onto one after another, moving no ref,
// as the landing will (fast-forward when ff allows it). It stops before the
// first item that does not merge cleanly.
func planBatch(r gitops.Repo, ff bool, onto string, qs []progress.Landing) ([]plannedMerge, error) {
	var plan []plannedMerge
	at := onto
	for _, q := range qs {
		c, tree, err := r.PlanMerge(at, q.Head, ff)
		var ce *gitops.ConflictError
		if errors.As(err, &ce) {
			break
		}
		if err != nil {
			return nil, gitErr(err, "merging %s onto main", q.Branch)
		}
		plan = append(plan, plannedMerge{q: q, tree: tree})
		at = c
	}
	return plan, nil
}

// landBatch takes the first items of the queue, qs, through one gate run
// on their merge, bisecting it when it fails, and tells settled of each
// item that lands or goes back. Anything unexpected on the way (main
// moved, a landing refused) ends the batch: the queue takes up what is
// left.
func (a *App) landBatch(ctx context.Context, r gitops.Repo, qs []progress.Landing, in LandInput, settled func(Landed)) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	_, onto, err := mainOf(r, cfg)
	if err != nil {
		return err
	}
	plan, err := planBatch(r, !cfg.MergeNoFF, onto, qs)
	if err != nil {
		return err
	}
	if len(plan) <= 1 { // the first item conflicts, or the second does: one at a time
		one, err := a.landOne(ctx, r, qs[0], in)
		if err == nil {
			settled(one)
		}
		return err
	}
	qs = qs[:len(plan)]
	b := workflow.NewBisection(len(qs))
	var runs []GateRun
	for {
		step, ok := b.Next()
		if !ok {
			return nil
		}
		span := qs[step.Span.From:step.Span.To]
		switch step.Act {
		case workflow.ActGate:
			run, p, err := a.gateSpan(ctx, r, cfg, span, in)
			if err != nil || p == nil {
				return err
			}
			runs, plan = append(runs, run), p
			b.Gated(run.Passed())
		case workflow.ActLand:
			if done, err := a.landSpan(ctx, r, plan, runs[step.Proof], settled); err != nil || !done {
				return err
			}
		case workflow.ActSendBack:
			got, err := a.sendBackBroken(ctx, r, cfg, span[0], runs[step.Proof])
			if err != nil || got.Outcome == "" {
				return err
			}
			settled(got)
		}
	}
}

// gateSpan plans span's merges onto main as it is now and runs the gate on
// the last merged tree; a nil plan when span no longer merges cleanly (the
// queue takes it up item by item). A failing run is logged at once.
func (a *App) gateSpan(ctx context.Context, r gitops.Repo, cfg store.Config, span []progress.Landing, in LandInput) (GateRun, []plannedMerge, error) {
	into, onto, err := mainOf(r, cfg)
	if err != nil {
		return GateRun{}, nil, err
	}
	plan, err := planBatch(r, !cfg.MergeNoFF, onto, span)
	if err != nil || len(plan) < len(span) {
		return GateRun{}, nil, err
	}
	last := plan[len(plan)-1]
	run, err := a.gateOn(ctx, r, cfg, in, itemsOf(span), into, onto, last.tree)
	if err != nil {
		return run, nil, err
	}
	run.Head = last.q.Head
	if len(span) > 1 {
		for _, q := range span {
			run.Batch = append(run.Batch, q.ReviewID)
		}
	}
	if !run.Passed() {
		if err := a.logGate(ctx, span, run); err != nil {
			return run, nil, err
		}
	}
	return run, plan, nil
}

// itemsOf names the items of span, in queue order.
func itemsOf(span []progress.Landing) string {
	names := make([]string, len(span))
	for i, q := range span {
		names[i] = q.Item
	}
	return strings.Join(names, ", ")
}

// logGate records a gate run that lands nothing by itself: a failing run
// of a batch, evidence for the bisection that follows.
func (a *App) logGate(ctx context.Context, span []progress.Landing, run GateRun) error {
	return a.update(ctx, "baton land", reviews.FileName, func(st *state) error {
		if err := st.actAsGate(); err != nil {
			return err
		}
		ids := make([]string, len(span))
		for i, q := range span {
			ids[i] = q.Item
		}
		task := strings.Join(ids, ",")
		st.taskID = &task
		st.logAnyway = true
		what := fmt.Sprintf("exited %d", run.ExitCode)
		if run.TimedOut {
			what = "timed out"
		}
		st.summary = fmt.Sprintf("gate %q %s on %s merged onto main at %s, in queue order: bisecting", run.Command, what, itemsOf(span), gitops.Short(run.Onto))
		st.record = map[string]any{"gate": run, "gated": ids}
		return nil
	})
}

// landSpan lands plan's items one after another, each onto the merge
// before it, all covered by gate run run (which passed on the last one's
// tree). done is false when one of them did not land: the rest wait.
func (a *App) landSpan(ctx context.Context, r gitops.Repo, plan []plannedMerge, run GateRun, settled func(Landed)) (done bool, err error) {
	cfg, err := a.config()
	if err != nil {
		return false, err
	}
	into, onto, err := mainOf(r, cfg)
	if err != nil {
		return false, err
	}
	for _, pm := range plan {
		got, again, err := a.settle(ctx, r, pm.q, onto, pm.tree, workflow.SendBack{Branch: pm.q.Branch, Into: into}, &run)
		if err != nil || again {
			return false, err
		}
		settled(got)
		if got.Outcome != "landed" {
			return false, nil
		}
		onto = got.MergeCommit
	}
	return true, nil
}

// sendBackBroken sends q back as FIX work: the bisection found that it
// breaks the gate, run being the failing run that shows it.
func (a *App) sendBackBroken(ctx context.Context, r gitops.Repo, cfg store.Config, q progress.Landing, run GateRun) (Landed, error) {
	into, _, err := mainOf(r, cfg)
	if err != nil {
		return Landed{}, err
	}
	back := workflow.SendBack{Branch: q.Branch, Into: into, Command: run.Command, ExitCode: run.ExitCode, TimedOut: run.TimedOut, Tail: run.Tail, Batched: len(run.Batch) > 1}
	got, _, err := a.settle(ctx, r, q, "", "", back, &run)
	return got, err
}
