package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/workflow"
)

// This file connects the pure transition table (package workflow) to the
// files: it builds the Situation from them and applies a Decision to the
// status. The next phase is never taken from an argument.

func canonicalRole(t string) string {
	c, ok := workflow.Canonical(t)
	if !ok {
		return strings.ToUpper(t)
	}
	return c
}

func (st *state) limits() workflow.Limits { return st.cfg.Limits() }

// backlogOf lists the pending work of a feature list (none without one).
func backlogOf(feat *features.File) workflow.Backlog {
	var b workflow.Backlog
	if feat == nil {
		return b
	}
	pending := feat.PendingIDs()
	b.Bugs, b.Debt, b.Features = pending["BUG"], pending["DEBT"], pending["FEAT"]
	return b
}

// situation reads the backlog and the architecture count from the files.
func (st *state) situation() (workflow.Situation, error) {
	sit := workflow.Situation{Limits: st.limits()}
	feat, _, err := st.featuresOpt()
	if err != nil {
		return sit, err
	}
	sit.Backlog = backlogOf(feat)
	rev, ok, err := st.reviewsOpt()
	if err != nil || !ok {
		return sit, err
	}
	sit.PassedSinceArchitecture = passedSinceArchitecture(rev, feat)
	return sit, nil
}

// passedSinceArchitecture counts the features merged since the last
// architecture review (after a PASS, or at the fix-cycle limit with a
// merge); tech debt paid off does not count.
func passedSinceArchitecture(rev *reviews.File, feat *features.File) int {
	n := 0
	for _, batch := range rev.MergedSinceArchitecture() {
		ids := features.SplitIDs(batch)
		if !(feat != nil && allKind(feat, ids, "DEBT")) {
			n += len(ids)
		}
	}
	return n
}

// statusDecision is what the status records about the last decision.
type statusDecision struct {
	Rule      string          `json:"rule"`
	Reason    string          `json:"reason"`
	DecidedAt string          `json:"decided_at"`
	Limits    workflow.Limits `json:"limits"` // in force when it was decided
}

// applyDecision applies decision d made on item x ("" for none): the
// item's pipeline moves (workflow.Advance), and the status shows the
// project's step (workflow.View) — d itself whenever the schedule has its
// step, and a person's override as given.
func (st *state) applyDecision(p *progress.File, x string, d workflow.Decision) error {
	if err := st.advance(p, x, d); err != nil {
		return err
	}
	return st.show(p, d)
}

// show writes the project's step for decision d into the status: what
// runs once the session deciding has ended, so its own lane is not
// counted.
func (st *state) show(p *progress.File, d workflow.Decision) error {
	view := d
	if d.Rule != "human-override" {
		var err error
		if view, err = st.viewOf(p, d); err != nil {
			return err
		}
	}
	return st.writeStatus(p, view)
}

// viewOf is the project's step for decision d (workflow.View), once the
// session deciding has ended.
func (st *state) viewOf(p *progress.File, d workflow.Decision) (workflow.Decision, error) {
	pr, err := st.project(p)
	if err != nil {
		return d, err
	}
	if who, _ := st.resolveActor(); who != nil && who.Session != nil {
		pr.Lanes = slices.DeleteFunc(pr.Lanes, func(l progress.Lane) bool { return l.Session == *who.Session })
	}
	return workflow.View(d, workflow.Runnable(pr)), nil
}

// writeStatus writes the project's step into the status.
func (st *state) writeStatus(p *progress.File, d workflow.Decision) error {
	for _, kv := range []struct {
		k string
		v any
	}{
		{"current_phase", d.Phase}, {"current_feature", d.Feature}, {"current_branch", d.Branch},
		{"decision", statusDecision{Rule: d.Rule, Reason: d.Reason, DecidedAt: st.stamp(), Limits: st.limits()}},
	} {
		if err := p.SetStatus(kv.k, kv.v); err != nil {
			return err
		}
	}
	st.touch(progress.FileName)
	return nil
}

// checkNextPhase judges a --next-phase against the computed one
// (workflow.JudgeClaim): agreeing, it passes; naming the predecessor's
// coarser next step, it is recorded as the agent's suggestion with a
// warning and the computed phase stands; contradicting it, it is refused.
// A person (--as HUMAN) overrides instead: the phase given is applied and
// recorded with the person's reason. role and outcome are the session's
// ("" outside a session end, where only agreement passes).
func (st *state) checkNextPhase(flag, given string, d workflow.Decision, role, outcome string) error {
	if given == "" {
		return nil
	}
	g, err := progress.Choose(flag, given, progress.Phases, nil)
	if err != nil {
		return err
	}
	if who, _ := st.resolveActor(); role != "" && who != nil && who.Session != nil {
		role = who.Role // the session's own role: GLOBAL_FIX records its work as FIX
	}
	kind, why := workflow.JudgeClaim(workflow.Claim{Role: role, Outcome: outcome, Given: g, Computed: d.Phase})
	who, _ := st.resolveActor()
	switch workflow.RuleOnClaim(kind, ruleActor(who).Person() && st.prog != nil, role != "") {
	case workflow.RulingAgrees:
		return nil
	case workflow.RulingOverride:
		cur, err := st.prog.Status()
		if err != nil {
			return err
		}
		return st.applyDecision(st.prog, "", workflow.HumanOverride(g, d.Phase, cur.CurrentFeature, cur.CurrentBranch, who.Reason))
	case workflow.RulingSuggest:
		return st.suggestPhase(flag, g, d, role, why)
	}
	return st.decide(workflow.NextPhaseClaim(flag, g, d.Phase, why, d.Reason))
}

// phaseSuggestion is what the status keeps of a coarse --next-phase.
type phaseSuggestion struct {
	Phase    string `json:"phase"`
	Role     string `json:"role"`
	Computed string `json:"computed"`
	Note     string `json:"note"`
}

// suggestPhase records a coarse --next-phase as the agent's suggestion and
// warns that the computed phase stands.
func (st *state) suggestPhase(flag, given string, d workflow.Decision, role, why string) error {
	if st.prog != nil {
		if err := st.prog.SetStatus("suggested_next_phase", phaseSuggestion{Phase: given, Role: role, Computed: d.Phase, Note: why}); err != nil {
			return err
		}
		st.touch(progress.FileName)
	}
	st.app.warn("%s %s is recorded as your suggestion; the next phase is %s (%s), computed from the files", flag, given, d.Phase, why)
	return nil
}

// afterSession applies the transition for a finished session of item x.
// phase is the phase the session ran in. When no row applies (a REVIEW or
// ARCHITECTURE session, whose review already decided), the status stays
// and --next-phase is checked against it.
func (st *state) afterSession(p *progress.File, x string, s progress.Session, feature, branch *string, phase, nextPhase string) error {
	sit, err := st.situation()
	if err != nil {
		return err
	}
	if s.Outcome == "ERROR" {
		var prev *progress.Pipeline
		if pl, ok := p.Pipelines()[x]; ok {
			prev = &pl
		}
		sit.ConsecutiveErrors = 1 + workflow.ErrorsSoFar(prev, phaseOr(phase, s.AgentType))
	}
	d, ok := workflow.AfterSession(workflow.SessionEnd{Role: s.AgentType, Outcome: s.Outcome, Feature: feature, Branch: branch, Phase: phase}, sit)
	if !ok { // the item's step as its review decided it, else the project's
		cur, err := p.Status()
		if err != nil {
			return err
		}
		now := workflow.Decision{Phase: cur.CurrentPhase, Reason: gjson.GetBytes(p.StatusRaw(), "decision.reason").String()}
		pl, own := p.Pipelines()[x]
		if own && pl.Phase != progress.PhaseLanding {
			now = workflow.Decision{Phase: pl.Phase, Reason: pl.Reason}
		}
		if now.Reason == "" {
			now.Reason = "the phase before this session"
		}
		if err := st.checkNextPhase("--next-phase", nextPhase, now, phase, s.Outcome); err != nil || !own || pl.Phase == progress.PhaseLanding {
			return err
		}
		now.Feature, now.Branch = feature, branch
		stop, err := st.stopLoop(x, s, now)
		if err != nil || stop.Rule != workflow.RuleLoop {
			return err
		}
		return st.applyDecision(p, x, stop)
	}
	if err := st.checkNextPhase("--next-phase", nextPhase, d, phase, s.Outcome); err != nil {
		return err
	}
	if d, err = st.stopLoop(x, s, d); err != nil {
		return err
	}
	return st.applyDecision(p, x, d)
}

func phaseOr(phase, role string) string {
	if phase != "" {
		return phase
	}
	return role
}

// afterReview decides what a new review leads to and applies its effects
// on the feature list: at the fix-cycle limit the leftovers become tech
// debt, or the features go back to the queue. It returns the decision,
// which the review records; applyReview then moves the status once the
// review is in the file.
func (st *state) afterReview(rev *reviews.File, in reviews.NewReview, id int) (workflow.Decision, []string, error) {
	sit, err := st.situation()
	if err != nil {
		return workflow.Decision{}, nil, err
	}
	issues := in.Issues
	res := workflow.ReviewResult{
		ReviewID: id, Architecture: in.AgentType == workflow.Architecture, Verdict: in.Verdict,
		Blocking: blockingPending(in.Issues), Issues: len(issues), Branch: in.Branch,
	}
	feat, haveFeat, err := st.featuresOpt()
	if err != nil {
		return workflow.Decision{}, nil, err
	}
	if in.FeatureID != nil {
		res.Features = features.SplitIDs(*in.FeatureID)
		sit.FixCount = rev.FixCount(*in.FeatureID)
		res.DebtItem = haveFeat && allKind(feat, res.Features, "DEBT")
	}
	if haveFeat && workflow.NeedsLeftovers(in.Verdict, res.Architecture, sit.Limits.FixCycles(sit.FixCount)) {
		res.LeftoverIDs = nextDebtIDs(feat, len(issues))
	}
	d := workflow.AfterReview(res, sit)
	d.Limits = &sit.Limits
	if d.LeftoversToDebt {
		if err := st.appendLeftovers(feat, in, res.LeftoverIDs, id, d.Verdict); err != nil {
			return d, nil, err
		}
	}
	if d.Reject && haveFeat && len(res.Features) > 0 {
		if _, err := feat.SetPasses(res.Features, false, st.stamp(), fmt.Sprintf("rejected in review R%d: back in the queue", id)); err != nil {
			return d, nil, err
		}
		st.touch(features.FileName)
	}
	return d, res.Features, nil
}

// applyReview moves the status and the reviewed item's pipeline for review
// id's decision d: a passing review whose branch can be merged waits in
// REVIEW for its merge (workflow.AwaitMerge); one with nothing to merge
// lands when its features pass.
func (st *state) applyReview(p *progress.File, in reviews.NewReview, id int, d workflow.Decision, ids []string) error {
	phase := workflow.PhaseReview
	if in.AgentType == workflow.Architecture {
		phase = workflow.ItemArchitecture
	}
	x := workflow.ItemOf(in.FeatureID, in.Branch, phase)
	mergeable := d.Merge && st.canMerge(in.Branch)
	shown := workflow.AwaitMerge(id, d, ids, in.Branch, mergeable)
	if err := st.advance(p, x, shown); err != nil {
		return err
	}
	if d.Merge && !mergeable && len(ids) > 0 {
		landing := workflow.Landing(id, d, in.Branch)
		landing.DecidedAt = st.stamp()
		if err := p.SetPipeline(x, landing); err != nil {
			return err
		}
	}
	return st.show(p, shown)
}

// canMerge reports whether 'baton reviews merge' can merge branch here: in
// a repository where the branch exists. Elsewhere a passing review's
// decision applies at once, as there is nothing to wait for.
func (st *state) canMerge(branch *string) bool {
	r := st.app.repo()
	if r == nil || branch == nil {
		return false
	}
	_, err := r.Branch(*branch)
	return err == nil
}

func blockingPending(issues []reviews.PendingIssue) bool {
	for _, is := range issues {
		if is.Severity == "critical" || is.Severity == "major" {
			return true
		}
	}
	return false
}

func allKind(feat *features.File, ids []string, kind string) bool {
	for _, id := range ids {
		f, err := feat.Get(id)
		if err != nil || f.Kind() != kind {
			return false
		}
	}
	return len(ids) > 0
}

// nextDebtIDs returns the next n DEBT ids of the feature list.
func nextDebtIDs(feat *features.File, n int) []string {
	ids := make([]string, 0, n)
	base := feat.NextID("DEBT")
	var start int
	fmt.Sscanf(strings.TrimPrefix(base, "DEBT-"), "%d", &start)
	for i := 0; i < n; i++ {
		ids = append(ids, fmt.Sprintf("DEBT-%03d", start+i))
	}
	return ids
}

func joinedIDs(ids []string) *string {
	if len(ids) == 0 {
		return nil
	}
	s := strings.Join(ids, ",")
	return &s
}
