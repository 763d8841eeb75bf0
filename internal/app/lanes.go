package app

import (
	"context"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

// This file connects the scheduler (workflow.Runnable) to the files: it
// gathers the project it decides from, moves an item's pipeline when a
// decision is made on it, and shows a session its own lane.

// projectOf gathers the scheduler's view of the files there are (nil:
// absent); open, when known, keeps only the lanes of open sessions.
func projectOf(cfg store.Config, p *progress.File, feat *features.File, rev *reviews.File, open *progress.OpenSessions) workflow.Project {
	pr := workflow.Project{Agents: cfg.Agents, Limits: cfg.Limits()}
	if feat != nil {
		for _, f := range feat.All() {
			pr.Items = append(pr.Items, workflow.WorkItem{ID: f.ID, Kind: f.Kind(), Passes: f.Passes, DependsOn: f.DependsOn})
		}
	}
	if rev != nil {
		pr.PassedSinceArchitecture = passedSinceArchitecture(rev, feat)
	}
	if p == nil {
		return pr
	}
	pr.Pipelines, pr.Landing = p.Pipelines(), p.LandingQueue()
	for _, l := range p.Lanes() {
		if open == nil || isOpen(open, l.Session) {
			pr.Lanes = append(pr.Lanes, l)
		}
	}
	pr.NeedsInitializer = p.Len() == 0 && len(pr.Items) == 0
	raw := gjson.ParseBytes(p.StatusRaw())
	if raw.Get("current_phase").String() == workflow.PhaseStopped && raw.Get("decision.rule").String() == "human-override" {
		pr.Stopped, pr.StopReason = true, raw.Get("decision.reason").String()
	}
	return pr
}

func isOpen(open *progress.OpenSessions, id int) bool {
	_, err := open.Get(id)
	return err == nil
}

// project is the scheduler's view of the transaction's files.
func (st *state) project(p *progress.File) (workflow.Project, error) {
	feat, _, err := st.featuresOpt()
	if err != nil {
		return workflow.Project{}, err
	}
	rev, _, err := st.reviewsOpt()
	if err != nil {
		return workflow.Project{}, err
	}
	open, err := st.openSessions()
	if err != nil {
		return workflow.Project{}, err
	}
	return projectOf(st.cfg, p, feat, rev, open), nil
}

// project is the scheduler's view of the snapshot.
func (sn *snapshot) project() workflow.Project {
	return projectOf(sn.cfg, sn.prog, sn.feat, sn.rev, sn.open)
}

// advance moves the pipelines for decision d made on item x ("" for
// none): workflow.Advance.
func (st *state) advance(p *progress.File, x string, d workflow.Decision) error {
	c := workflow.Advance(x, d)
	if c.Drop != "" {
		p.RemovePipeline(c.Drop)
		p.DecideLanes(c.Drop)
	}
	if !c.Set {
		return nil
	}
	c.Pipeline.DecidedAt = st.stamp()
	return p.SetPipeline(c.Item, c.Pipeline)
}

// adopt writes the decision an adoption of the predecessor's state made:
// its item's pipeline, and the status as it was.
func (st *state) adopt(p *progress.File, d workflow.Decision) error {
	if err := st.advance(p, "", d); err != nil {
		return err
	}
	return st.writeStatus(p, d)
}

// landed drops the pipelines of landing items whose features all pass
// now, and shows the project's step again (their dependents may run): it
// says whether it dropped any.
func (st *state) landed(p *progress.File, feat *features.File) (bool, error) {
	dropped := false
	for item, pl := range p.Pipelines() {
		if pl.Phase != progress.PhaseLanding {
			continue
		}
		ids := features.SplitIDs(item)
		passing := len(ids) > 0
		for _, id := range ids {
			f, err := feat.Get(id)
			passing = passing && err == nil && f.Passes
		}
		if passing {
			p.RemovePipeline(item)
			dropped = true
		}
	}
	if !dropped {
		return false, nil
	}
	st.touch(progress.FileName)
	cur, err := p.Status()
	if err != nil {
		return true, err
	}
	raw := gjson.ParseBytes(p.StatusRaw())
	d := workflow.Decision{Phase: cur.CurrentPhase, Feature: cur.CurrentFeature, Branch: cur.CurrentBranch, Rule: raw.Get("decision.rule").String(), Reason: raw.Get("decision.reason").String()}
	v, err := st.viewOf(p, d)
	if err != nil || (v.Phase == d.Phase && v.Rule == d.Rule && Deref(v.Feature) == Deref(d.Feature) && Deref(v.Branch) == Deref(d.Branch)) {
		return true, err
	}
	return true, st.writeStatus(p, v)
}

// itemOfReview is the item a stored review is about.
func itemOfReview(r gjson.Result) string {
	phase := workflow.PhaseReview
	if r.Get("agent_type").String() == workflow.Architecture {
		phase = workflow.ItemArchitecture
	}
	return workflow.ItemOf(progress.Nullable(r.Get("feature_id").String()), progress.Nullable(r.Get("branch").String()), phase)
}

// Runnable is what can run now: every runnable step in order, the lanes
// running and what waits and why (workflow.Runnable).
func (a *App) Runnable(ctx context.Context, c Caller) (workflow.Schedule, error) {
	if a.remote != nil {
		return forward[workflow.Schedule](ctx, a, c, "runnable", nil)
	}
	a = a.as(c)
	var s workflow.Schedule
	err := a.snapshot(ctx, func(sn *snapshot) error {
		if sn.prog == nil {
			return firstProblemOr(sn, missing(sn.s, progress.FileName, progressHint))
		}
		s = workflow.Runnable(sn.project())
		return nil
	})
	return s, err
}

// LaneOfSession is the lane session id works in (false for none).
func (a *App) LaneOfSession(ctx context.Context, c Caller, id int) (progress.Lane, bool, error) {
	p, err := a.Progress(ctx, c)
	if err != nil {
		return progress.Lane{}, false, err
	}
	l, ok := p.LaneOf(id)
	return l, ok, nil
}

// boundSessionID is the open session a call is bound to (0 for none).
func (a *App) boundSessionID(ctx context.Context) int {
	if !a.insideSession() {
		return 0
	}
	open, err := readFile(ctx, a, progress.OpenFileName, "baton init", progress.ParseOpen)
	if err != nil {
		return 0
	}
	s, err := boundSession(open, a.caller.Session)
	if err != nil {
		return 0
	}
	return s.SessionID
}

// boundLane is the lane of the session a call is bound to (false for a
// call bound to none, or a session without a lane).
func (a *App) boundLane(ctx context.Context, p *progress.File) (progress.Lane, bool) {
	id := a.boundSessionID(ctx)
	if id == 0 || p == nil {
		return progress.Lane{}, false
	}
	return p.LaneOf(id)
}

// laneStatus is a status object as a lane's session reads it
// (workflow.LaneView): its item's step as the current phase, feature and
// branch, while that is the session's to read.
func laneStatus(status gjson.Result, l progress.Lane, pl *progress.Pipeline) (gjson.Result, error) {
	st, ok := workflow.LaneView(l, pl)
	if !ok {
		return status, nil
	}
	o, err := jsondoc.ParseObject([]byte(status.Raw), 1)
	if err != nil {
		return status, err
	}
	for _, kv := range []struct {
		k string
		v any
	}{{"current_phase", st.Role}, {"current_feature", st.Feature}, {"current_branch", st.Branch}} {
		if err := o.Set(kv.k, kv.v); err != nil {
			return status, err
		}
	}
	return gjson.ParseBytes(o.Bytes()), nil
}

// laneView is the bound session's lane as it reads it (workflow.LaneView;
// false for no lane).
func (st *state) laneView(p *progress.File) (workflow.Step, bool) {
	who, _ := st.resolveActor()
	if who == nil || who.Session == nil || who.Source != "session" {
		return workflow.Step{}, false
	}
	l, ok := p.LaneOf(*who.Session)
	if !ok {
		return workflow.Step{}, false
	}
	var pl *progress.Pipeline
	if got, ok := p.Pipelines()[l.Item]; ok {
		pl = &got
	}
	return workflow.LaneView(l, pl)
}

// pointAt sets the feature or branch worked on (update-status): a lane's
// session sets its lane's branch, and the status's fields only while the
// status names its lane's item, the project's step being that lane's; any
// other call sets the status's.
func (st *state) pointAt(p *progress.File, cur progress.Status, key string, v *string) error {
	who, _ := st.resolveActor()
	if who != nil && who.Session != nil && who.Source == "session" {
		if l, ok := p.LaneOf(*who.Session); ok {
			if key == "current_branch" {
				if err := st.moveLane(p, l.Session, v); err != nil {
					return err
				}
			}
			if workflow.ItemOf(cur.CurrentFeature, cur.CurrentBranch, cur.CurrentPhase) != l.Item {
				return nil
			}
		}
	}
	return p.SetStatus(key, v)
}

// moveLane sets the branch session's lane and open session work on.
func (st *state) moveLane(p *progress.File, session int, branch *string) error {
	p.SetLaneBranch(session, branch)
	open, err := st.openSessions()
	if err != nil {
		return err
	}
	for i := range open.Open {
		if open.Open[i].SessionID == session {
			open.Open[i].Branch = branch
			st.touch(progress.OpenFileName)
		}
	}
	return nil
}

// ownItem refuses a session's act on work outside its lane: a session in
// a lane records, reviews, fixes and passes only its lane's item.
func (st *state) ownItem(ids []string, branch string) error {
	who, _ := st.resolveActor()
	if who == nil || who.Session == nil || who.Source != "session" {
		return nil
	}
	p, ok, err := st.progressOpt()
	if err != nil || !ok {
		return err
	}
	l, ok := p.LaneOf(*who.Session)
	if !ok {
		return nil
	}
	return st.decide(workflow.WithinLane(ruleActor(who), l.Item, l.Branch, ids, branch))
}

// Board is what the live view of a lanes run shows besides the lanes: the
// landing queue's items, and how many items have landed and are to do.
type Board struct {
	Queue  []string `json:"queue"`
	Landed int      `json:"landed"`
	ToDo   int      `json:"to_do"`
}

// Board reads the board from the files, with no check of the log.
func (a *App) Board(ctx context.Context, c Caller) (Board, error) {
	a = a.as(c)
	b := Board{Queue: []string{}}
	err := a.snapshot(ctx, func(sn *snapshot) error {
		pr := sn.project()
		for _, q := range pr.Landing {
			b.Queue = append(b.Queue, q.Item)
		}
		for _, it := range pr.Items {
			if it.Passes {
				b.Landed++
			} else {
				b.ToDo++
			}
		}
		return nil
	})
	return b, err
}
