package workflow

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/progress"
)

// The rules around the scheduler: how a decision moves the items'
// pipelines, what the status shows of the project, which step a session
// opens for, and how many run at once.

// DefaultAgents is how many sessions run at once when .baton/config says
// nothing: one, the sequential workflow.
const DefaultAgents = 1

// Gate is the project's landing gate: a command the merged tree must pass
// before main moves.
type Gate struct {
	Command string `json:"command"`
	Timeout string `json:"timeout,omitempty"`
	Batch   int    `json:"batch,omitempty"`
}

// The gate's defaults.
const (
	DefaultGateTimeout = "20m"
	DefaultGateBatch   = 1
)

// Configured says whether a gate is configured.
func (g Gate) Configured() bool { return g != Gate{} }

// WithDefaults is g with its timeout and batch filled in.
func (g Gate) WithDefaults() Gate {
	if !g.Configured() {
		return g
	}
	if g.Timeout == "" {
		g.Timeout = DefaultGateTimeout
	}
	if g.Batch == 0 {
		g.Batch = DefaultGateBatch
	}
	return g
}

// ValidateLanes names what is wrong with the agents and gate settings.
func ValidateLanes(agents int, g Gate) error {
	if agents < 1 {
		return fmt.Errorf("agents must be at least 1, found %d", agents)
	}
	if !g.Configured() {
		return nil
	}
	if strings.TrimSpace(g.Command) == "" {
		return fmt.Errorf("gate.command must name the command the merged tree must pass (e.g. \"make test\")")
	}
	if d, err := time.ParseDuration(g.Timeout); g.Timeout != "" && (err != nil || d <= 0) {
		return fmt.Errorf("gate.timeout must be a duration such as \"20m\", found %q", g.Timeout)
	}
	if g.Batch < 0 {
		return fmt.Errorf("gate.batch must be at least 1, found %d", g.Batch)
	}
	return nil
}

// PipelineChange is how a decision changes the items' pipelines: Drop
// leaves its pipeline, and when Set, Item gets Pipeline.
type PipelineChange struct {
	Drop     string
	Set      bool
	Item     string
	Pipeline progress.Pipeline
}

// Advance is how a decision made on item x ("" for none) moves the
// pipelines: x leaves its own, and the item the decision continues gets
// one — a review or fix to come, an ERROR's retry, a stop, a person's
// override. A decision of new work starts no pipeline: its session does.
func Advance(x string, d Decision) PipelineChange {
	c := PipelineChange{Drop: x}
	item := ItemOf(d.Feature, d.Branch, d.Phase)
	if item == PhaseStopped && x != "" && d.Rule == "error-stop" { // an item named after its role stops as itself
		item = x
	}
	if !continues(d) || item == PhaseStopped || item == PhaseDone {
		return c
	}
	c.Set, c.Item = true, item
	c.Pipeline = progress.Pipeline{Phase: d.Phase, Branch: d.Branch, Rule: d.Rule, Reason: d.Reason, Errors: d.Errors}
	return c
}

func continues(d Decision) bool {
	switch {
	case d.Phase == PhaseReview, d.Phase == PhaseFix, d.Phase == PhaseStopped, d.Rule == "error-retry":
		return true
	case d.Rule == "human-override":
		_, role := Canonical(d.Phase)
		return role
	}
	return false
}

// Landing is the pipeline of an item whose review id decided a merge that
// there is nothing to do for (no repository, or no branch): it lands when
// REVIEW marks its features passing.
func Landing(id int, d Decision, branch *string) progress.Pipeline {
	return progress.Pipeline{Phase: progress.PhaseLanding, Branch: branch, Rule: d.Rule,
		Reason: fmt.Sprintf("R%d passed: REVIEW marks its features passing", id)}
}

// ErrorsSoFar is how many ERROR outcomes in a row an item's step had
// before this one: the item's retries of the same role.
func ErrorsSoFar(pl *progress.Pipeline, role string) int {
	if pl == nil || pl.Rule != "error-retry" || canonicalOr(pl.Phase) != canonicalOr(role) {
		return 0
	}
	return pl.Errors
}

// View is the project's one step, as the status shows it: d, the decision
// just made, when the schedule lists its step (to run, or running) or
// agrees it is DONE or STOPPED, which is the sequential workflow's answer;
// else the schedule's first step to run, else its first running one, else
// DONE or STOPPED.
func View(d Decision, s Schedule) Decision {
	if listed(d, s) {
		return d
	}
	for _, list := range [][]Step{s.Steps, s.Running} {
		if len(list) > 0 {
			st := list[0]
			return Decision{Phase: st.Role, Feature: st.Feature, Branch: st.Branch, Rule: st.Rule, Reason: st.Reason}
		}
	}
	if s.Phase == "" && len(s.Landing) > 0 {
		return queuedView(s.Landing[0])
	}
	if s.Phase == "" {
		return d
	}
	return Decision{Phase: s.Phase, Rule: s.Rule, Reason: s.Reason}
}

// RuleLandingQueue is the rule of a status that waits for the landing
// queue: nothing else runs, and the launcher lands the queue.
const RuleLandingQueue = "landing-queue"

// queuedView is the status while only the landing queue has work: the
// REVIEW of its first item, landing.
func queuedView(q progress.Landing) Decision {
	b := q.Branch
	return Decision{Phase: PhaseReview, Feature: ItemFeature(q.Item, &b), Branch: &b, Rule: RuleLandingQueue,
		Reason: fmt.Sprintf("R%d passed: %s waits in the landing queue; the launcher lands it (baton run)", q.ReviewID, q.Branch)}
}

func listed(d Decision, s Schedule) bool {
	if d.Phase == PhaseDone || d.Phase == PhaseStopped {
		return s.Phase == d.Phase
	}
	item := ItemOf(d.Feature, d.Branch, d.Phase)
	for _, list := range [][]Step{s.Steps, s.Running} {
		for _, st := range list {
			if st.Role == d.Phase && st.Item == item {
				return true
			}
		}
	}
	return false
}

// LaneView is what a lane's session reads as its current phase, feature
// and branch: its item's step while the item is in flight, else the lane's
// own step until a decision is made on the item. ok is false once the
// item's work is decided and out of flight: the session then reads the
// project's step, as every call does.
func LaneView(l progress.Lane, pl *progress.Pipeline) (Step, bool) {
	if pl != nil && pl.Phase != progress.PhaseLanding && pl.Phase != PhaseStopped {
		return Step{Role: pl.Phase, Item: l.Item, Feature: ItemFeature(l.Item, pl.Branch), Branch: pl.Branch, Rule: pl.Rule, Reason: pl.Reason, Session: l.Session}, true
	}
	if l.Decided {
		return Step{}, false
	}
	return Step{Role: l.Role, Item: l.Item, Feature: ItemFeature(l.Item, l.Branch), Branch: l.Branch, Rule: "running",
		Reason: fmt.Sprintf("session %d (%s) works on %s", l.Session, l.Role, l.Item), Session: l.Session}, true
}

// StepOpening is a session being opened for a step.
type StepOpening struct {
	Role   string
	Opener string // LauncherOpens, OverrideOpens or KeyholderOpens
	// Item is the item named ("" for the first runnable step of Role).
	Item   string
	Agents int
	// ViewPhase is the status's phase: its step may always be opened.
	ViewPhase string
}

// OpensStep picks the step a session opens for: a runnable step of its
// role (the item named, or the first one) among the steps the free lanes
// take, and never an item another lane holds. A person opening on purpose
// may open any role and item, and a session for no item named has no lane
// (Step.Item "").
func OpensStep(o StepOpening, s Schedule, lanes []progress.Lane) (Step, error) {
	if err := freeItem(o.Item, lanes); err != nil {
		return Step{}, err
	}
	var cands []Step
	for _, st := range s.Steps {
		if canonicalOr(st.Role) == canonicalOr(o.Role) && (o.Item == "" || st.Item == o.Item) {
			cands = append(cands, st)
		}
	}
	if st, ok := batchStep(o, s); ok && len(cands) == 0 {
		cands = append(cands, st)
	}
	if o.Opener == OverrideOpens { // on purpose: the item named, if any
		if o.Item == "" {
			return Step{Role: o.Role}, nil
		}
		if len(cands) > 0 {
			return cands[0], nil
		}
		return Step{Role: o.Role, Item: o.Item, Feature: ItemFeature(o.Item, nil), Rule: "human-override"}, nil
	}
	if s.Phase == PhaseStopped {
		return Step{}, errs.New(errs.Policy, "the workflow's next phase is STOPPED, not %s: a %s session is not opened now (%s; see 'baton status')", o.Role, o.Role, s.Reason)
	}
	free := o.Agents - len(lanes)
	if free <= 0 {
		return Step{}, errs.New(errs.Conflict, "%d session(s) already work in lanes and the project runs %d at once: no session is opened until one ends (see 'baton status')", len(lanes), o.Agents)
	}
	roleOK := startable(o, s.Steps[:min(free, len(s.Steps))])
	if len(cands) == 0 || !roleOK {
		return Step{}, notRunnable(o, s, roleOK)
	}
	return cands[0], nil
}

// batchStep is the step of a batch o names whose every id is a runnable
// new item of o's role (features implemented together).
func batchStep(o StepOpening, s Schedule) (Step, bool) {
	ids := features.SplitIDs(o.Item)
	if len(ids) < 2 {
		return Step{}, false
	}
	var first Step
	for i, id := range ids {
		j := slices.IndexFunc(s.Steps, func(st Step) bool {
			return st.Item == id && st.Feature != nil && canonicalOr(st.Role) == canonicalOr(o.Role) && (st.Rule == "next-feature" || st.Rule == "bug-first")
		})
		if j < 0 {
			return Step{}, false
		}
		if i == 0 {
			first = s.Steps[j]
		}
	}
	item := strings.Join(ids, ",")
	first.Item, first.Feature, first.Reason = item, &item, "a batch of pending work: "+first.Role+" "+item
	return first, true
}

// freeItem refuses an item another lane holds any id of.
func freeItem(item string, lanes []progress.Lane) error {
	ids := features.SplitIDs(item)
	for _, l := range lanes {
		if l.Item == item || slices.ContainsFunc(features.SplitIDs(l.Item), func(id string) bool { return slices.Contains(ids, id) }) {
			return errs.New(errs.Conflict, "%s already has a lane: session %d (%s) works on %s, and one session works on an item at a time; open this one when that session has ended, or pick another step (see 'baton next --json')", item, l.Session, l.Role, l.Item)
		}
	}
	return nil
}

// startable says whether a role the free lanes take (or the status's) is
// o's.
func startable(o StepOpening, first []Step) bool {
	if canonicalOr(o.ViewPhase) == canonicalOr(o.Role) {
		return true
	}
	for _, st := range first {
		if canonicalOr(st.Role) == canonicalOr(o.Role) {
			return true
		}
	}
	return false
}

// notRunnable is the refusal of a session for no runnable step (roleOK:
// its role has one).
func notRunnable(o StepOpening, s Schedule, roleOK bool) error {
	for _, w := range s.Waiting {
		if o.Item != "" && w.Item == o.Item {
			return errs.New(errs.Policy, "%s is not runnable now: %s; a %s session is not opened for it (see 'baton next')", o.Item, w.Reason, o.Role)
		}
	}
	next := s.Phase
	if len(s.Steps) > 0 {
		next = s.Steps[0].Role
	}
	if o.Item != "" && (roleOK || canonicalOr(next) == canonicalOr(o.Role)) {
		return errs.New(errs.Policy, "%s has no %s step now: a %s session is not opened for it (see 'baton next')", o.Item, o.Role, o.Role)
	}
	return errs.New(errs.Policy, "the workflow's next phase is %s, not %s: a %s session is not opened now (see 'baton next')", next, o.Role, o.Role)
}
