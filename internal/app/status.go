package app

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/workflow"
)

// LanesView is what status shows of the work running at once: the lanes, the
// landing queue and the gate (nil: none configured).
type LanesView struct {
	Agents  int                `json:"agents"`
	Lanes   []LaneLine         `json:"lanes"`
	Landing []progress.Landing `json:"landing"`
	Gate    *workflow.Gate     `json:"gate"`
}

// LaneLine is a lane with how long its session has run.
type LaneLine struct {
	progress.Lane
	ElapsedSeconds int64 `json:"elapsed_seconds"`
	// Runner is the runner the lane's session runs on ("" for this
	// machine), as the run says.
	Runner string `json:"runner,omitempty"`
}

// lanes fills what status shows of the lanes, the queue and the gate.
func (sn *snapshot) lanes(res *StatusResult) {
	res.Agents, res.Lanes, res.Landing = sn.cfg.Agents, []LaneLine{}, sn.prog.LandingQueue()
	for _, l := range sn.project().Lanes {
		res.Lanes = append(res.Lanes, LaneLine{Lane: l})
	}
	if res.Landing == nil {
		res.Landing = []progress.Landing{}
	}
	if sn.cfg.Gate.Configured() {
		g := sn.cfg.Gate
		res.Gate = &g
	}
}

// laneView completes status for the caller: how long each lane has run,
// and for a call bound to a lane's session that lane's step, fix cycles
// and history in place of the project's.
func (a *App) laneView(ctx context.Context, sn *snapshot, res *StatusResult) {
	now := a.env.Now()
	mark, _ := a.ReadRunMark()
	for i, l := range res.Lanes {
		if t, err := jsondoc.ParseTime(l.Since); err == nil {
			res.Lanes[i].ElapsedSeconds = int64(now.Sub(t) / time.Second)
		}
		if mark != nil {
			res.Lanes[i].Runner = mark.Runners[strconv.Itoa(l.Session)]
		}
	}
	l, ok := a.boundLane(ctx, sn.prog)
	if !ok {
		return
	}
	var pl *progress.Pipeline
	if got, ok := sn.prog.Pipelines()[l.Item]; ok {
		pl = &got
	}
	st, ok := workflow.LaneView(l, pl)
	if !ok {
		return
	}
	res.Next = NextResult{Phase: st.Role, Feature: st.Feature, Features: IDList(st.Feature), Branch: st.Branch, Rule: st.Rule, Reason: st.Reason}
	res.LastSession, res.LastReview, res.FixCycles = nil, nil, nil
	ids := features.SplitIDs(l.Item)
	sn.prog.Sessions(func(raw []byte) {
		r := gjson.ParseBytes(raw)
		for _, v := range r.Get("features_touched").Array() {
			if slices.Contains(ids, v.String()) {
				res.LastSession = r.Value()
			}
		}
	})
	if sn.rev == nil {
		return
	}
	w := Assignment{Role: l.Role, Feature: Deref(workflow.ItemFeature(l.Item, l.Branch)), Branch: Deref(l.Branch)}
	for _, r := range sn.rev.Reviews() {
		if concernsWork(r, w) {
			res.LastReview = r.Value()
		}
	}
	if w.Feature != "" {
		fc := fixCountOf(sn.rev, w.Feature, sn.cfg)
		res.FixCycles = &fc
	}
}

// withSchedule is n with the schedule's steps, lanes running and waits.
func (n NextResult) withSchedule(s workflow.Schedule) NextResult {
	n.Steps, n.Running, n.Waiting = s.Steps, s.Running, s.Waiting
	return n
}
