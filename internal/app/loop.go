package app

import (
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

// visits are the ended sessions of item x (but those ended in ERROR),
// oldest first, as the loop rule
// sees them (workflow.Visit): the head each left, and how many verdicts
// on the item the log records before its end. The log gives the order;
// cur is the session ending now, not in the log yet.
func (st *state) visits(x string, cur progress.Session) ([]workflow.Visit, error) {
	events, err := st.tx.Store().ReadEvents()
	if err != nil {
		return nil, err
	}
	verdicts := 0
	var out []workflow.Visit
	at := map[int]int{} // session id -> its visit in out
	add := func(s gjson.Result) {
		var ids []string
		for _, f := range s.Get("features_touched").Array() {
			ids = append(ids, f.String())
		}
		if strings.Join(ids, ",") != x || s.Get("outcome").String() == "ERROR" {
			return // an ERROR is retried up to max_error_retries, its own limit
		}
		head := s.Get("commit_range.to").String()
		if cs := s.Get("commits").Array(); head == "" && len(cs) > 0 {
			head = cs[len(cs)-1].Get("hash").String()
		}
		v := workflow.Visit{Role: s.Get("agent_type").String(), Head: head, Verdicts: verdicts}
		if i, ok := at[int(s.Get("session_id").Int())]; ok { // a record, then the close
			out[i] = v
			return
		}
		at[int(s.Get("session_id").Int())] = len(out)
		out = append(out, v)
	}
	eachRecord(events, func(rec gjson.Result) {
		if rec.Get("feature_id").String() == x || (rec.Get("feature_id").Type == gjson.Null && rec.Get("branch").String() == x) {
			verdicts++
		}
	}, add)
	raw, err := json.Marshal(cur)
	if err != nil {
		return nil, err
	}
	add(gjson.ParseBytes(raw))
	return out, nil
}

// stopLoop applies the loop rule to decision d on item x (workflow.StopLoop).
func (st *state) stopLoop(x string, cur progress.Session, d workflow.Decision) (workflow.Decision, error) {
	if d.Phase == workflow.PhaseStopped || d.Phase == workflow.PhaseDone {
		return d, nil
	}
	v, err := st.visits(x, cur)
	if err != nil {
		return d, err
	}
	out := workflow.StopLoop(d, x, v, st.limits().MaxItemReturns)
	if out.Rule == workflow.RuleLoop {
		st.app.warn("%s", out.Reason)
	}
	return out, nil
}

// eachRecord calls review with every review and session with every
// session the log's entries record, in the log's order (refused entries
// aside).
func eachRecord(events []store.Event, review, session func(rec gjson.Result)) {
	for _, e := range events {
		var pl eventPayload
		if json.Unmarshal(e.Payload, &pl) != nil || pl.Refused != "" || len(pl.Record) == 0 {
			continue
		}
		rec := gjson.ParseBytes(pl.Record)
		switch {
		case rec.Get("review_id").Exists() && rec.Get("verdict").Exists():
			review(rec)
		case rec.Get("session_id").Exists() && rec.Get("outcome").Exists():
			session(rec)
		}
	}
}
