package app

import (
	"slices"
	"strings"

	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/workflow"
)

// widenBatch lets the bound IMPLEMENT session record the batch of features
// ids when it was opened for some of them (workflow.Widen): its open
// session, its lane and its item's pipeline then name the batch.
func (st *state) widenBatch(ids []string) error {
	who, _ := st.resolveActor()
	if who == nil || who.Session == nil || who.Source != "session" || len(ids) == 0 {
		return nil
	}
	open, err := st.openSessions()
	if err != nil || open == nil {
		return err
	}
	i := slices.IndexFunc(open.Open, func(o progress.OpenSession) bool { return o.SessionID == *who.Session })
	if i < 0 {
		return nil
	}
	sess := open.Open[i]
	p, _, err := st.progressOpt()
	if err != nil {
		return err
	}
	feat, _, err := st.featuresOpt()
	if err != nil || feat == nil {
		return err
	}
	var cands []workflow.BatchCandidate
	for _, id := range ids {
		if !slices.Contains(sess.Features, id) {
			cands = append(cands, st.batchCandidate(p, feat, id, *who.Session))
		}
	}
	ok, err := workflow.Widen(sess.SessionID, sess.AgentType, sess.Features, ids, cands)
	if err != nil || !ok {
		return st.decide(err)
	}
	old, item := strings.Join(sess.Features, ","), strings.Join(ids, ",")
	open.Open[i].Features = slices.Clone(ids)
	st.touch(progress.OpenFileName)
	if p != nil {
		if l, ok := p.LaneOf(*who.Session); ok && l.Item == old {
			p.RemoveLane(l.Session)
			l.Item = item
			p.AddLane(l)
		}
		if pl, ok := p.Pipelines()[old]; ok {
			p.RemovePipeline(old)
			if err := p.SetPipeline(item, pl); err != nil {
				return err
			}
		}
		st.touch(progress.FileName)
	}
	st.app.notice("%s", workflow.BatchNote(*who.Session, sess.Features, ids))
	return nil
}

// batchCandidate is what the files say of feature id, which session would
// add to its batch.
func (st *state) batchCandidate(p *progress.File, feat *features.File, id string, session int) workflow.BatchCandidate {
	c := workflow.BatchCandidate{ID: id}
	f, err := feat.Get(id)
	if err != nil {
		return c
	}
	c.Known, c.Feature, c.Passes = true, f.Kind() == "FEAT", f.Passes
	for _, d := range f.DependsOn {
		if dep, err := feat.Get(d); err != nil || !dep.Passes {
			c.Waiting = append(c.Waiting, d)
		}
	}
	if p != nil {
		for _, l := range p.Lanes() {
			c.Held = c.Held || (l.Session != session && slices.Contains(features.SplitIDs(l.Item), id))
		}
		for item := range p.Pipelines() {
			c.Held = c.Held || slices.Contains(features.SplitIDs(item), id)
		}
	}
	return c
}
