package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

// The landing queue (DESIGN.md, "Many agents at once"): when several
// agents run or a gate is configured, a passing review's merge waits in
// the queue, and the launcher lands it. Land takes the queue's first item,
// makes the merged tree with git's merge engine, runs the gate on it in a
// clean working copy, and moves main only when the gate passes, in the
// transaction that marks the features passing: main moved ⇔ landing
// recorded. A conflict or a failing gate sends the item back as FIX work
// through a review recorded by the queue's own actor, GATE.

// enqueue puts review t's merge in the landing queue: main does not move
// until the launcher lands it.
func (st *state) enqueue(t mergeTarget, out *MergeResult) error {
	p, err := st.progress()
	if err != nil {
		return err
	}
	x := itemOfReview(t.review)
	p.Enqueue(progress.Landing{Item: x, ReviewID: t.id, Branch: t.branch, Head: t.head, QueuedAt: st.stamp(), Attempt: len(gateReviews(st, t.featureID)) + 1})
	br := t.branch
	if err := p.SetPipeline(x, progress.Pipeline{Phase: progress.PhaseLanding, Branch: &br, Rule: "landing-queue",
		Reason: workflow.QueuedReason(t.id, t.branch, st.cfg.Gate), DecidedAt: st.stamp()}); err != nil {
		return err
	}
	p.DecideLanes(x)
	st.touch(progress.FileName)
	var d workflow.Decision
	if raw := t.review.Get("decision"); raw.IsObject() {
		if err := json.Unmarshal([]byte(raw.Raw), &d); err != nil {
			return err
		}
	}
	if d.Phase == "" {
		sit, err := st.situation()
		if err != nil {
			return err
		}
		d = workflow.NextWork(sit)
	}
	if err := st.show(p, d); err != nil {
		return err
	}
	*out = MergeResult{ReviewID: t.id, Branch: t.branch, Into: t.into, BranchHead: gitops.Short(t.head), Queued: true,
		Passed: []string{}, FixesMerged: []string{}, Switched: []string{}, Detached: []string{}}
	st.summary = fmt.Sprintf("queued %s for landing on %s (review R%d)", t.branch, t.into, t.id)
	st.record = map[string]any{"review_id": t.id, "branch": t.branch, "head": t.head, "queued": true}
	return nil
}

// gateReviews are the ids of the reviews the landing queue recorded on
// the features of feature.
func gateReviews(st *state, feature *string) []int {
	rv, err := st.reviews()
	if err != nil || feature == nil {
		return nil
	}
	var ids []int
	for _, r := range rv.Reviews() {
		if r.Get("agent_type").String() == workflow.GateActor && r.Get("feature_id").String() == *feature {
			ids = append(ids, int(r.Get("review_id").Int()))
		}
	}
	return ids
}

// LandInput is what Land takes.
type LandInput struct {
	// Max is how many items to land at most (0: the whole queue).
	Max int `json:"max,omitempty"`
	// Gate runs the gate's command; nil runs it unconfined (RunGate).
	Gate GateRunner `json:"-"`
	// Started, when set, is told when the gate starts on an item, and
	// Settled when an item has landed or gone back.
	Started func(item, tree string) `json:"-"`
	Settled func(Landed)            `json:"-"`
}

// LandResult is what Land did, item by item, in queue order.
type LandResult struct {
	Items []Landed `json:"items"`
}

// Landed is one item the queue took: landed or sent back.
type Landed struct {
	Item        string   `json:"item"`
	ReviewID    int      `json:"review_id"`
	Branch      string   `json:"branch"`
	Outcome     string   `json:"outcome"` // landed, sent_back, rejected
	MergeCommit string   `json:"merge_commit,omitempty"`
	Passed      []string `json:"passed,omitempty"`
	Review      int      `json:"gate_review,omitempty"` // the review that sent it back
	Phase       string   `json:"phase,omitempty"`       // the item's next step when sent back
	Reason      string   `json:"reason"`
	Gate        *GateRun `json:"gate,omitempty"`
}

// Land lands the landing queue, first item first, until it is empty (or
// in.Max items were taken). With "gate": {"batch": N} up to N items go
// through one gate run (landBatch). Only the launcher, or a person, lands.
func (a *App) Land(ctx context.Context, c Caller, in LandInput) (LandResult, error) {
	a = a.as(c)
	res := LandResult{Items: []Landed{}}
	for in.Max == 0 || len(res.Items) < in.Max {
		cfg, err := a.config()
		if err != nil {
			return res, err
		}
		n := max(cfg.Gate.Batch, 1)
		if in.Max > 0 {
			n = min(n, in.Max-len(res.Items))
		}
		qs, err := a.queueHeads(ctx, n)
		if err != nil || len(qs) == 0 {
			return res, err
		}
		r, err := a.needRepo("land")
		if err != nil {
			return res, err
		}
		settled := func(it Landed) {
			res.Items = append(res.Items, it)
			if in.Settled != nil {
				in.Settled(it)
			}
		}
		if len(qs) > 1 && cfg.Gate.Configured() {
			err = a.landBatch(ctx, r, qs, in, settled)
		} else {
			var one Landed
			if one, err = a.landOne(ctx, r, qs[0], in); err == nil {
				settled(one)
			}
		}
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// queueHeads are the queue's first n items, read in a transaction that
// checks that the caller may land (an agent is refused before any gate
// runs).
func (a *App) queueHeads(ctx context.Context, n int) ([]progress.Landing, error) {
	var qs []progress.Landing
	err := a.update(ctx, "baton land", progress.FileName, func(st *state) error {
		if _, err := st.require(workflow.Land); err != nil {
			return err
		}
		p, ok, err := st.progressOpt()
		if err != nil || !ok {
			return err
		}
		queue := p.LandingQueue()
		qs = append(qs, queue[:min(n, len(queue))]...)
		return nil
	})
	return qs, err
}

// landOne takes queued item q: merged tree, gate, then one transaction
// that lands it or sends it back. Main having moved since the gate ran
// (a person's merge) runs the gate again on the new merged tree.
func (a *App) landOne(ctx context.Context, r gitops.Repo, q progress.Landing, in LandInput) (Landed, error) {
	for {
		cfg, err := a.config()
		if err != nil {
			return Landed{}, err
		}
		into, onto, err := mainOf(r, cfg)
		if err != nil {
			return Landed{}, err
		}
		back := workflow.SendBack{Branch: q.Branch, Into: into}
		var run *GateRun
		tree, err := r.CleanMergeTree(onto, q.Head)
		var ce *gitops.ConflictError
		switch {
		case errors.As(err, &ce):
			back.Conflicts = ce.Paths
		case err != nil:
			return Landed{}, gitErr(err, "merging %s into %s", q.Branch, into)
		case cfg.Gate.Configured():
			got, err := a.gateOn(ctx, r, cfg, in, q.Item, into, onto, tree)
			if err != nil {
				return Landed{}, err
			}
			got.Head = q.Head
			run = &got
			if !got.Passed() {
				back.Command, back.ExitCode, back.TimedOut, back.Tail = got.Command, got.ExitCode, got.TimedOut, got.Tail
			}
		}
		out, again, err := a.settle(ctx, r, q, onto, tree, back, run)
		if err != nil || !again {
			return out, err
		}
	}
}

// gateOn runs the gate on tree, main at onto merged with what label
// names, telling in.Started first.
func (a *App) gateOn(ctx context.Context, r gitops.Repo, cfg store.Config, in LandInput, label, into, onto, tree string) (GateRun, error) {
	if in.Started != nil {
		in.Started(label, tree)
	}
	g := in.Gate
	if g == nil {
		g = RunGate
	}
	return a.gateRun(ctx, r, g, cfg.Gate, into, onto, tree)
}

// errMainMoved says main moved after the gate ran: the landing is tried
// again on the new main.
var errMainMoved = errors.New("main moved since the gate ran")

// actAsGate checks that the caller may land and makes the transaction's
// actor the landing queue's own, gate, which no agent role can hold.
func (st *state) actAsGate() error {
	who, err := st.require(workflow.Land)
	if err != nil {
		return err
	}
	gate := *who
	gate.Role = workflow.GateActor
	st.who = &gate
	return nil
}

// settle records the outcome of taking q in one transaction: landed when
// the merge was clean and the gate (if any) passed, else sent back. again
// says main moved meanwhile and the item is to be taken again.
func (a *App) settle(ctx context.Context, r gitops.Repo, q progress.Landing, onto, tree string, back workflow.SendBack, run *GateRun) (Landed, bool, error) {
	out := Landed{Item: q.Item, ReviewID: q.ReviewID, Branch: q.Branch, Gate: run}
	clean := len(back.Conflicts) == 0 && (run == nil || run.Passed())
	err := a.update(ctx, "baton land", reviews.FileName, func(st *state) error {
		if err := st.actAsGate(); err != nil {
			return err
		}
		p, err := st.progress()
		if err != nil {
			return err
		}
		if queue := p.LandingQueue(); len(queue) == 0 || queue[0] != q {
			return errs.New(errs.Conflict, "the landing queue changed while %s was being landed: nothing was landed; run it again", q.Item)
		}
		if !clean {
			return st.sendBack(r, p, q, back, run, &out)
		}
		err = st.landQueued(r, p, q, onto, tree, run, &out)
		var refusal *landRefusal
		if errors.As(err, &refusal) {
			back.Refused = refusal.msg
			return st.sendBack(r, p, q, back, run, &out)
		}
		if errors.Is(err, errMainMoved) {
			if run != nil { // the gate ran: its entry stays
				st.logAnyway = true
				st.summary = fmt.Sprintf("gate %q ran on %s merged into main at %s, which moved since: landing it again", run.Command, q.Branch, gitops.Short(onto))
				st.record = map[string]any{"gate": run, "review_id": q.ReviewID}
			}
			return nil
		}
		return err
	})
	if err != nil {
		return out, false, a.withUndone(err)
	}
	return out, out.Outcome == "", nil
}

// landRefusal is a check of the merge that refuses queued work (the
// branch moved since its review, the review is no longer its latest...):
// the item goes back with the reason rather than blocking the queue.
type landRefusal struct{ msg string }

func (e *landRefusal) Error() string { return e.msg }

// landQueued moves main to the merge of q, checked to be exactly the tree
// the gate passed, and records it as 'reviews merge' does.
func (st *state) landQueued(r gitops.Repo, p *progress.File, q progress.Landing, onto, tree string, run *GateRun, out *Landed) error {
	t, err := st.mergeTarget(r, q.ReviewID)
	if errs.Is(err, errs.Policy) || errs.Is(err, errs.Conflict) || errs.Is(err, errs.NotFound) {
		return &landRefusal{msg: err.Error()}
	}
	if err != nil {
		return err
	}
	if t.head != q.Head {
		return &landRefusal{msg: fmt.Sprintf("%s moved to %s after it was queued at %s: its new commits are unreviewed", t.branch, gitops.Short(t.head), gitops.Short(q.Head))}
	}
	if t.intoHead != onto {
		return errMainMoved
	}
	st.taskID = t.featureID
	intend := func(commit string) error {
		if got, err := r.TreeOf(commit); err != nil || got != tree {
			return errMainMoved
		}
		return st.intend(gitIntent{Op: "merge", Repo: r.Top(), Into: t.into, Previous: t.intoHead, Commit: commit, Branch: t.branch, BranchHead: t.head})
	}
	author, committer := st.app.signature(r)
	res, err := r.Merge(gitops.MergeOptions{Branch: t.branch, Into: t.into, Message: landMessage(t), Signature: author, Committer: committer, FastForward: !st.cfg.MergeNoFF, BeforeMove: intend, Sign: st.app.mergeSigner()})
	if err != nil {
		if errors.Is(err, errMainMoved) {
			return err
		}
		return gitErr(err, "landing %s on %s", t.branch, t.into)
	}
	if err := r.DeleteBranch(t.branch, res.BranchHead); err != nil {
		return gitErr(err, "%s was merged, but deleting %s failed", t.into, t.branch)
	}
	st.tx.Adopt(mainRef)
	p.Dequeue(q.Item)
	st.touch(progress.FileName)
	var mr MergeResult
	if err := st.recordMerge(t, res, &mr); err != nil {
		return err
	}
	rec := st.record.(map[string]any)
	rec["gate"] = run
	rec["tree"] = tree
	*out = Landed{Item: q.Item, ReviewID: q.ReviewID, Branch: q.Branch, Outcome: "landed", MergeCommit: res.Commit, Passed: mr.Passed, Reason: st.summary, Gate: run}
	st.tx.AfterCommit(func() error { st.app.leaveMerged(r, t, res); return nil })
	st.attestAfterCommit(r)
	return nil
}

// landMessage is the merge commit's message of a landing.
func landMessage(t mergeTarget) string {
	return strings.Replace(mergeMessage(t), "Merged by 'baton reviews merge'.", "Landed by baton's landing queue.", 1)
}

// sendBack records the gate's review of queued work that did not land:
// one critical issue saying why, the item back to FIX (or, at the
// fix-cycle limit, REJECT: its branch deleted, its features requeued).
func (st *state) sendBack(r gitops.Repo, p *progress.File, q progress.Landing, back workflow.SendBack, run *GateRun, out *Landed) error {
	rv, err := st.reviews()
	if err != nil {
		return err
	}
	reviewed, err := rv.Review(q.ReviewID)
	if err != nil {
		return err
	}
	issue, _ := json.Marshal([]map[string]string{{"severity": "critical", "title": back.Summary(), "description": back.Issue()}})
	in := reviews.NewReview{AgentType: workflow.GateActor, Verdict: "REQUEST_CHANGES", Summary: back.Summary(), Timestamp: st.stamp(), Branch: &q.Branch}
	if f := reviewed.Get("feature_id").String(); f != "" {
		in.FeatureID = &f
		in.FeatureName = featureNames(st, features.SplitIDs(f))
	}
	if in.Issues, err = reviews.ParseIssues("gate", issue); err != nil {
		return err
	}
	if r := reviewed.Get("commit_range"); r.IsObject() {
		in.CommitRange = &progress.Range{From: progress.Nullable(r.Get("from").String()), To: progress.Nullable(r.Get("to").String()), Description: r.Get("description").String()}
	}
	st.taskID = in.FeatureID
	id := rv.NextReviewID()
	d, ids, err := st.afterReview(rv, in, id)
	if err != nil {
		return err
	}
	if in.Decision, err = json.Marshal(d); err != nil {
		return err
	}
	added, err := rv.AddReview(in)
	if err != nil {
		return err
	}
	st.touch(reviews.FileName)
	p.Dequeue(q.Item)
	p.RemovePipeline(q.Item)
	st.touch(progress.FileName)
	if err := st.applyReview(p, in, id, d, ids); err != nil {
		return err
	}
	*out = Landed{Item: q.Item, ReviewID: q.ReviewID, Branch: q.Branch, Outcome: "sent_back", Review: id, Phase: d.Phase, Reason: d.Reason, Gate: run}
	if d.Reject {
		out.Outcome = "rejected"
		if err := st.deleteQueued(r, q); err != nil {
			return err
		}
	}
	st.summary = fmt.Sprintf("%s; gate review R%d: %s", back.Summary(), id, d.Reason)
	st.record = map[string]any{"gate": run, "review": added, "review_id": q.ReviewID, "sent_back": q.Item}
	return nil
}

// deleteQueued deletes the branch of queued work rejected at the
// fix-cycle limit, if it is where it was queued.
func (st *state) deleteQueued(r gitops.Repo, q progress.Landing) error {
	head, err := r.Branch(q.Branch)
	if err != nil || head != q.Head {
		return nil // gone, or moved: left for a person to see
	}
	if err := st.intend(gitIntent{Op: "delete-branch", Repo: r.Top(), Branch: q.Branch, BranchHead: head}); err != nil {
		return err
	}
	if err := r.DeleteBranch(q.Branch, head); err != nil {
		return gitErr(err, "deleting %s", q.Branch)
	}
	st.tx.AfterCommit(func() error { st.app.detach(r, q.Branch, head); return nil })
	return nil
}

// config is the project's .baton/config.
func (a *App) config() (store.Config, error) {
	s, err := a.openStore(progress.FileName)
	if err != nil {
		return store.Config{}, err
	}
	return a.loadConfig(s)
}

// Config is the project's .baton/config, as this run applies it.
func (a *App) Config() (store.Config, error) { return a.config() }

// loadConfig reads s's config, with the run's number of agents in place
// of the file's when one was given.
func (a *App) loadConfig(s *store.Store) (store.Config, error) {
	cfg, err := s.LoadConfig()
	if err == nil && a.g.Agents > 0 {
		cfg.Agents = a.g.Agents
	}
	return cfg, err
}
