package app

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/workflow"
)

// visits are the ended sessions of item x, oldest first, as the loop rule
// sees them (workflow.Visit): the head each left, and how many verdicts
// on the item were recorded by its end.
func (st *state) visits(p *progress.File, x string) ([]workflow.Visit, error) {
	var stamps []string // the item's reviews' times
	if rev, ok, err := st.reviewsOpt(); err != nil {
		return nil, err
	} else if ok {
		for _, r := range rev.Reviews() {
			if r.Get("feature_id").String() == x || (r.Get("feature_id").Type == gjson.Null && r.Get("branch").String() == x) {
				stamps = append(stamps, r.Get("timestamp").String())
			}
		}
	}
	var out []workflow.Visit
	p.Sessions(func(raw []byte) {
		s := gjson.ParseBytes(raw)
		var ids []string
		for _, f := range s.Get("features_touched").Array() {
			ids = append(ids, f.String())
		}
		if strings.Join(ids, ",") != x {
			return
		}
		head := s.Get("commit_range.to").String()
		if cs := s.Get("commits").Array(); head == "" && len(cs) > 0 {
			head = cs[len(cs)-1].Get("hash").String()
		}
		done, n := s.Get("completed_at").String(), 0
		for _, t := range stamps {
			if t <= done {
				n++
			}
		}
		out = append(out, workflow.Visit{Role: s.Get("agent_type").String(), Head: head, Verdicts: n})
	})
	return out, nil
}

// stopLoop applies the loop rule to decision d on item x (workflow.StopLoop).
func (st *state) stopLoop(p *progress.File, x string, d workflow.Decision) (workflow.Decision, error) {
	if d.Phase == workflow.PhaseStopped || d.Phase == workflow.PhaseDone {
		return d, nil
	}
	v, err := st.visits(p, x)
	if err != nil {
		return d, err
	}
	out := workflow.StopLoop(d, x, v, st.limits().MaxItemReturns)
	if out.Rule == workflow.RuleLoop {
		st.app.warn("%s", out.Reason)
	}
	return out, nil
}
