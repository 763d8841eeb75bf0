package workflow

import (
	"fmt"
	"sort"
	"strings"

	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/progress"
)

// The scheduler: from plain data the application reads out of the files,
// which steps can run now, in order, and why the other items wait. Each
// work item (a feature, a bug, a tech-debt batch, an architecture review
// and its refactor) moves through its own pipeline; with one agent the
// first step is the sequential workflow's decision.

// The items that name no feature.
const (
	ItemInitializer  = Initializer
	ItemArchitecture = Architecture
)

// WorkItem is one entry of the feature list as the scheduler reads it.
type WorkItem struct {
	ID        string
	Kind      string // FEAT, BUG or DEBT
	Passes    bool
	DependsOn []string
}

// Project is what the scheduler decides from.
type Project struct {
	// Agents is how many sessions may run at once (at least 1).
	Agents int
	Limits Limits
	// Items is the feature list in file order.
	Items     []WorkItem
	Pipelines map[string]progress.Pipeline
	Lanes     []progress.Lane
	Landing   []progress.Landing
	// PassedSinceArchitecture counts the features passed since the last
	// architecture review.
	PassedSinceArchitecture int
	// NeedsInitializer: no feature list and no session yet.
	NeedsInitializer bool
	// Stopped: a person stopped the project, for StopReason.
	Stopped    bool
	StopReason string
}

// Step is one session that can run, or runs.
type Step struct {
	Role    string  `json:"role"`
	Item    string  `json:"item"`
	Feature *string `json:"feature"`
	Branch  *string `json:"branch"`
	Rule    string  `json:"rule"`
	Reason  string  `json:"reason"`
	// Session is the session whose lane holds the item (0: none).
	Session int `json:"session,omitempty"`
}

// Wait is an item that cannot run now, and why.
type Wait struct {
	Item   string `json:"item"`
	Reason string `json:"reason"`
}

// Schedule is what can run now.
type Schedule struct {
	// Steps can run now, in order: items in flight (oldest decision
	// first), a barrier due, then new work (bugs, features, tech debt),
	// which waits while a barrier is due or runs.
	Steps []Step `json:"steps"`
	// Running are the steps whose item a lane holds.
	Running []Step `json:"running"`
	Waiting []Wait `json:"waiting"`
	// Phase is DONE or STOPPED when nothing can run or runs ("" else),
	// with the rule and reason.
	Phase  string `json:"phase,omitempty"`
	Rule   string `json:"rule,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Landing is the landing queue, when nothing else can run or runs:
	// the launcher lands it.
	Landing []progress.Landing `json:"landing,omitempty"`
}

// ItemOf is the item a decision or a session is about: its features, else
// its branch (an architecture refactor), else its role (the initializer,
// an architecture review).
func ItemOf(feature, branch *string, phase string) string {
	switch {
	case feature != nil && *feature != "":
		return *feature
	case branch != nil && *branch != "":
		return *branch
	}
	return phase
}

// ItemFeature is the feature ids an item names (nil for an item named
// after its branch or role).
func ItemFeature(item string, branch *string) *string {
	if _, role := Canonical(item); role || item == PhaseDone || item == PhaseStopped || (branch != nil && *branch == item) || strings.HasPrefix(item, "refactor/") {
		return nil
	}
	return &item
}

// Runnable is the schedule of a project: one pure function, so that every
// front end and the launcher ask the same question.
func Runnable(p Project) Schedule {
	v := newPlan(p)
	if v.stopped() {
		return v.s
	}
	barrier := v.barrier()
	v.inFlight()
	v.laneSteps()
	switch {
	case barrier == nil || v.has(barrier.Item):
	case barrier.Role == progress.PhaseLanding: // it holds back new work until it has landed
		v.draining = true
	case barrier.Role != PhaseStopped: // a barrier stopped for a person holds back new work, and runs no more
		v.dueBarrier(*barrier)
	}
	v.newWork(barrier)
	v.finish()
	return v.s
}

// plan is the scheduler's working view of a project.
type plan struct {
	p       Project
	s       Schedule
	passing map[string]bool
	order   map[string]int
	kinds   map[string]string
	lanes   map[string]progress.Lane // by item
	taken   map[string]bool          // ids in flight or in a lane
	blocked int                      // waits that are work still to do
	// draining: a barrier due waits for the landing queue, which the
	// launcher lands
	draining bool
}

func newPlan(p Project) *plan {
	v := &plan{p: p, passing: map[string]bool{}, order: map[string]int{}, kinds: map[string]string{}, lanes: map[string]progress.Lane{}, taken: map[string]bool{}}
	v.s.Steps, v.s.Running, v.s.Waiting = []Step{}, []Step{}, []Wait{}
	for i, it := range p.Items {
		v.passing[it.ID], v.order[it.ID], v.kinds[it.ID] = it.Passes, i, it.Kind
	}
	for _, l := range p.Lanes {
		if !v.landed(l.Item) {
			v.lanes[l.Item] = l
			v.take(l.Item)
		}
	}
	for item := range p.Pipelines {
		v.take(item)
	}
	return v
}

func (v *plan) take(item string) {
	for _, id := range features.SplitIDs(item) {
		v.taken[id] = true
	}
}

// landed says whether every id of item is a passing entry of the list: a
// lane on it is its session finishing.
func (v *plan) landed(item string) bool {
	ids := features.SplitIDs(item)
	for _, id := range ids {
		if !v.passing[id] {
			return false
		}
	}
	return len(ids) > 0
}

// allKind says whether every id of item is an entry of kind.
func (v *plan) allKind(item, kind string) bool {
	ids := features.SplitIDs(item)
	for _, id := range ids {
		if v.kinds[id] != kind {
			return false
		}
	}
	return len(ids) > 0
}

// isBarrier says whether item's pipeline runs alone: an architecture
// review and its refactor, a tech-debt batch.
func (v *plan) isBarrier(item string) bool {
	return item == ItemArchitecture || strings.HasPrefix(item, "refactor/arch-review-") || v.allKind(item, "DEBT")
}

// has says whether a step of item is listed.
func (v *plan) has(item string) bool {
	for _, list := range [][]Step{v.s.Steps, v.s.Running} {
		for _, st := range list {
			if st.Item == item {
				return true
			}
		}
	}
	return false
}

// stopped fills the schedule of a stopped project: a person stopped it, or
// with one agent an item stopped for a person stops the one pipeline
// there is. Lanes already running are listed; they finish.
func (v *plan) stopped() bool {
	rule, reason := "stopped", v.p.StopReason
	stop := v.p.Stopped
	if !stop && v.p.Agents <= 1 {
		for _, item := range v.inFlightItems() {
			if pl := v.p.Pipelines[item]; pl.Phase == PhaseStopped {
				stop, rule, reason = true, pl.Rule, pl.Reason
				break
			}
		}
	}
	if !stop {
		return false
	}
	for _, l := range v.p.Lanes {
		if _, ok := v.lanes[l.Item]; ok {
			v.s.Running = append(v.s.Running, v.laneStep(l))
		}
	}
	v.s.Phase, v.s.Rule, v.s.Reason = PhaseStopped, rule, reason
	return true
}

// inFlightItems are the items with a pipeline, oldest decision first (then
// in the list's order). A pipeline ends when its item lands or goes back to
// the queue; features marked passing before their merge keep theirs.
func (v *plan) inFlightItems() []string {
	var items []string
	for item := range v.p.Pipelines {
		items = append(items, item)
	}
	sort.Slice(items, func(i, j int) bool {
		a, b := v.p.Pipelines[items[i]], v.p.Pipelines[items[j]]
		if a.DecidedAt != b.DecidedAt {
			return a.DecidedAt < b.DecidedAt
		}
		if oi, oj := v.rank(items[i]), v.rank(items[j]); oi != oj {
			return oi < oj
		}
		return items[i] < items[j]
	})
	return items
}

// rank is an item's place in the list (its first id's), after the list
// for items it does not hold.
func (v *plan) rank(item string) int {
	if ids := features.SplitIDs(item); len(ids) > 0 {
		if i, ok := v.order[ids[0]]; ok {
			return i
		}
	}
	return len(v.p.Items)
}

// laneStep is the step a lane runs when its item has no pipeline yet.
func (v *plan) laneStep(l progress.Lane) Step {
	return Step{Role: l.Role, Item: l.Item, Feature: ItemFeature(l.Item, l.Branch), Branch: l.Branch, Rule: "running",
		Reason: fmt.Sprintf("session %d (%s) works on %s", l.Session, l.Role, l.Item), Session: l.Session}
}

// pipelineStep is the step an item's pipeline waits for.
func (v *plan) pipelineStep(item string, pl progress.Pipeline) Step {
	return Step{Role: pl.Phase, Item: item, Feature: ItemFeature(item, pl.Branch), Branch: pl.Branch, Rule: pl.Rule, Reason: pl.Reason}
}

// barrier is the step that runs alone now (nil for none): a barrier item
// in flight (its pipeline, or a lane on it, until it has landed), else an architecture review
// due after architecture_interval passed features, else tech debt at the
// threshold when no bug is pending.
func (v *plan) barrier() *Step {
	for _, item := range v.inFlightItems() {
		if pl := v.p.Pipelines[item]; v.isBarrier(item) {
			st := v.pipelineStep(item, pl)
			return &st
		}
	}
	for _, l := range v.p.Lanes {
		if _, ok := v.lanes[l.Item]; ok && v.isBarrier(l.Item) {
			st := v.laneStep(l)
			return &st
		}
	}
	if v.p.NeedsInitializer {
		return nil
	}
	lim := v.p.Limits
	if lim.ArchitectureInterval > 0 && v.p.PassedSinceArchitecture >= lim.ArchitectureInterval {
		return &Step{Role: PhaseArchitecture, Item: ItemArchitecture, Rule: "architecture-interval",
			Reason: architectureDue(v.p.PassedSinceArchitecture, lim.ArchitectureInterval)}
	}
	if debt := v.pendingNew("DEBT"); len(debt) > 0 && len(debt) >= lim.TechDebtThreshold && !v.pending("BUG") {
		st := stepOf(debtThreshold(debt, lim.TechDebtThreshold))
		return &st
	}
	return nil
}

// dueBarrier lists barrier st, due to start: once the landing queue is
// empty, so that it works on a main that holds every item that passed
// before it. Until then it and new work wait.
func (v *plan) dueBarrier(st Step) {
	if len(v.p.Landing) == 0 {
		v.s.Steps = append(v.s.Steps, st)
		return
	}
	items := make([]string, len(v.p.Landing))
	for i, q := range v.p.Landing {
		items[i] = q.Item
	}
	v.draining = true
	v.wait(st.Item, fmt.Sprintf("%s is due (%s) and starts once the landing queue has landed %s", st.Role, st.Reason, strings.Join(items, ", ")), false)
}

// inFlight lists the steps of the items in flight: to run, running in a
// lane, or waiting (stopped for a person, or landing). A barrier holds back
// no item in flight: with one agent they come first, as they always have.
func (v *plan) inFlight() {
	for _, item := range v.inFlightItems() {
		pl := v.p.Pipelines[item]
		switch {
		case pl.Phase == PhaseStopped:
			v.wait(item, "stopped for a person: "+pl.Reason, true)
		case pl.Phase == progress.PhaseLanding:
			v.wait(item, "passed review, lands when its features pass: "+pl.Reason, false)
		default:
			st := v.pipelineStep(item, pl)
			if l, ok := v.lanes[item]; ok {
				st.Session = l.Session
				v.s.Running = append(v.s.Running, st)
			} else {
				v.s.Steps = append(v.s.Steps, st)
			}
		}
	}
}

// laneSteps lists the lanes whose item has no pipeline yet (its first
// step runs).
func (v *plan) laneSteps() {
	for _, l := range v.p.Lanes {
		if _, ok := v.lanes[l.Item]; !ok {
			continue
		}
		if _, ok := v.p.Pipelines[l.Item]; !ok {
			v.s.Running = append(v.s.Running, v.laneStep(l))
		}
	}
}

func (v *plan) wait(item, reason string, blocked bool) {
	v.s.Waiting = append(v.s.Waiting, Wait{Item: item, Reason: reason})
	if blocked {
		v.blocked++
	}
}

// newWork lists the items not started yet: bugs first, then features whose
// depends_on all pass, then tech debt once no feature is left. While a
// barrier runs they wait for it.
func (v *plan) newWork(barrier *Step) {
	add := func(st Step) {
		if barrier != nil {
			v.wait(st.Item, heldBack(st, barrier), true)
			return
		}
		v.s.Steps = append(v.s.Steps, st)
	}
	if v.p.NeedsInitializer {
		if _, ok := v.lanes[ItemInitializer]; !ok && !v.has(ItemInitializer) {
			add(stepOf(NotInitialized()))
		}
		return
	}
	for _, id := range v.pendingNew("BUG") {
		add(stepOf(bugFirst(id)))
	}
	for _, it := range v.p.Items {
		if it.Kind != "FEAT" || it.Passes || v.taken[it.ID] {
			continue
		}
		if missing := v.unmet(it.DependsOn); len(missing) > 0 {
			v.wait(it.ID, fmt.Sprintf("%s depends on %s, not passing yet", it.ID, strings.Join(missing, ", ")), true)
			continue
		}
		add(stepOf(nextFeature(it.ID)))
	}
	debt := v.pendingNew("DEBT")
	switch {
	case len(debt) == 0 || (barrier != nil && barrier.Item == strings.Join(debt, ",")):
	case v.featuresLeft():
		v.wait(strings.Join(debt, ","), fmt.Sprintf("%d tech-debt item(s) wait until no feature is left (or until %d reach the threshold)", len(debt), v.p.Limits.TechDebtThreshold), true)
	default:
		add(stepOf(debtRemaining(debt)))
	}
}

// heldBack is why st waits for a barrier.
func heldBack(st Step, barrier *Step) string {
	return fmt.Sprintf("%s %s waits until %s %s has landed", st.Role, st.Item, barrier.Role, barrier.Item)
}

// unmet lists the ids of deps that are not passing.
func (v *plan) unmet(deps []string) []string {
	var out []string
	for _, id := range deps {
		if !v.passing[id] {
			out = append(out, id)
		}
	}
	return out
}

// pendingNew lists the ids of kind not passing and not taken, in order.
func (v *plan) pendingNew(kind string) []string {
	var out []string
	for _, it := range v.p.Items {
		if it.Kind == kind && !it.Passes && !v.taken[it.ID] {
			out = append(out, it.ID)
		}
	}
	return out
}

// pending says whether an entry of kind is not passing.
func (v *plan) pending(kind string) bool {
	for _, it := range v.p.Items {
		if it.Kind == kind && !it.Passes {
			return true
		}
	}
	return false
}

// featuresLeft says whether a feature is left to do: not passing, and not
// landing.
func (v *plan) featuresLeft() bool {
	landing := map[string]bool{}
	for item, pl := range v.p.Pipelines {
		if pl.Phase == progress.PhaseLanding {
			for _, id := range features.SplitIDs(item) {
				landing[id] = true
			}
		}
	}
	for _, it := range v.p.Items {
		if it.Kind == "FEAT" && !it.Passes && !landing[it.ID] {
			return true
		}
	}
	return false
}

// finish says DONE or STOPPED when no step can run or runs: DONE when
// nothing is pending, in flight or queued; STOPPED when what is left waits
// for a person.
func (v *plan) finish() {
	if len(v.s.Steps) > 0 || len(v.s.Running) > 0 {
		return
	}
	if v.blocked > 0 && !v.draining {
		var why []string
		for _, w := range v.s.Waiting {
			why = append(why, w.Reason)
		}
		v.s.Phase, v.s.Rule, v.s.Reason = PhaseStopped, "waiting", "nothing can run: "+strings.Join(why, "; ")
		return
	}
	if len(v.p.Landing) > 0 {
		v.s.Landing = v.p.Landing // the launcher lands them
		return
	}
	d := done()
	v.s.Phase, v.s.Rule, v.s.Reason = d.Phase, d.Rule, d.Reason
}

// stepOf is the step a decision of new work names.
func stepOf(d Decision) Step {
	return Step{Role: d.Phase, Item: ItemOf(d.Feature, d.Branch, d.Phase), Feature: d.Feature, Branch: d.Branch, Rule: d.Rule, Reason: d.Reason}
}
