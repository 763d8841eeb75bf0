package workflow

import (
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/progress"
)

// items builds a feature list: "F001" pending, "+F001" passing, "BUG-1",
// "DEBT-1" by prefix, "F002<F001" depending on F001.
func items(specs ...string) []WorkItem {
	var out []WorkItem
	for _, s := range specs {
		it := WorkItem{Kind: "FEAT"}
		if strings.HasPrefix(s, "+") {
			it.Passes, s = true, s[1:]
		}
		if id, deps, ok := strings.Cut(s, "<"); ok {
			s, it.DependsOn = id, strings.Split(deps, "&")
		}
		it.ID = s
		switch {
		case strings.HasPrefix(s, "BUG"):
			it.Kind = "BUG"
		case strings.HasPrefix(s, "DEBT"):
			it.Kind = "DEBT"
		}
		out = append(out, it)
	}
	return out
}

func pipe(phase, rule, at string) progress.Pipeline {
	return progress.Pipeline{Phase: phase, Rule: rule, Reason: rule, DecidedAt: at}
}

// steps renders a schedule's steps as "ROLE item" lines.
func steps(list []Step) string {
	var out []string
	for _, st := range list {
		out = append(out, st.Role+" "+st.Item)
	}
	return strings.Join(out, "; ")
}

func waits(list []Wait) string {
	var out []string
	for _, w := range list {
		out = append(out, w.Item)
	}
	return strings.Join(out, "; ")
}

func TestRunnable(t *testing.T) {
	lim := DefaultLimits
	lane := func(item, role string, session int) progress.Lane {
		return progress.Lane{Item: item, Role: role, Session: session}
	}
	tests := []struct {
		name                    string
		p                       Project
		steps, running, waiting string
		phase                   string
	}{
		{"bugs before features, then features in order",
			Project{Agents: 2, Limits: lim, Items: items("F001", "BUG-1", "F002")}, "BUGFIX BUG-1; IMPLEMENT F001; IMPLEMENT F002", "", "", ""},
		{"a feature waits for its depends_on",
			Project{Agents: 2, Limits: lim, Items: items("F001", "F002<F001", "F003")}, "IMPLEMENT F001; IMPLEMENT F003", "", "F002", ""},
		{"depends_on passing: runnable",
			Project{Agents: 2, Limits: lim, Items: items("+F001", "F002<F001")}, "IMPLEMENT F002", "", "", ""},
		{"depends_on on two items, one passing",
			Project{Agents: 2, Limits: lim, Items: items("+F001", "F002", "F003<F001&F002")}, "IMPLEMENT F002", "", "F003", ""},
		{"items in flight first, oldest decision first",
			Project{Agents: 3, Limits: lim, Items: items("F001", "F002", "F003"), Pipelines: map[string]progress.Pipeline{
				"F002": pipe(PhaseReview, "implemented", "2025-01-29T10:00:01Z"), "F001": pipe(PhaseFix, "changes-requested", "2025-01-29T10:00:02Z")}},
			"REVIEW F002; FIX F001; IMPLEMENT F003", "", "", ""},
		{"equal decision times keep the list's order",
			Project{Agents: 3, Limits: lim, Items: items("F001", "F002"), Pipelines: map[string]progress.Pipeline{
				"F002": pipe(PhaseReview, "implemented", "2025-01-29T10:00:00Z"), "F001": pipe(PhaseReview, "implemented", "2025-01-29T10:00:00Z")}},
			"REVIEW F001; REVIEW F002", "", "", ""},
		{"a lane holds its item: running, not runnable, and no new step on it",
			Project{Agents: 2, Limits: lim, Items: items("F001", "F002"), Lanes: []progress.Lane{lane("F001", PhaseImplement, 4)}},
			"IMPLEMENT F002", "IMPLEMENT F001", "", ""},
		{"a lane on an item in flight runs its pipeline's step",
			Project{Agents: 2, Limits: lim, Items: items("F001"), Pipelines: map[string]progress.Pipeline{"F001": pipe(PhaseFix, "changes-requested", "t")},
				Lanes: []progress.Lane{lane("F001", PhaseReview, 4)}}, "", "FIX F001", "", ""},
		{"a lane on a batch takes each of its ids",
			Project{Agents: 2, Limits: lim, Items: items("F001", "F002", "F003"), Lanes: []progress.Lane{lane("F001,F002", PhaseImplement, 4)}},
			"IMPLEMENT F003", "IMPLEMENT F001,F002", "", ""},
		{"a lane on a landed item is finishing and counts for nothing",
			Project{Agents: 1, Limits: lim, Items: items("+F001"), Lanes: []progress.Lane{lane("F001", PhaseReview, 4)}}, "", "", "", PhaseDone},
		{"architecture interval reached: a barrier, no new item starts",
			Project{Agents: 2, Limits: lim, Items: items("+F001", "F002"), PassedSinceArchitecture: 5, Pipelines: map[string]progress.Pipeline{"F003": pipe(PhaseReview, "implemented", "t")}},
			"REVIEW F003; ARCHITECTURE ARCHITECTURE", "", "F002", ""},
		{"architecture due while passed items wait in the landing queue: it starts once they have landed, and holds back new work",
			Project{Agents: 3, Limits: lim, Items: items("+F001", "F002", "F003"), PassedSinceArchitecture: 5,
				Pipelines: map[string]progress.Pipeline{"F002": pipe(progress.PhaseLanding, "passed", "t")}, Landing: []progress.Landing{{Item: "F002"}}},
			"", "", "F002; ARCHITECTURE; F003", ""},
		{"tech debt at the threshold while an item lands: GLOBAL_FIX starts once it has landed",
			Project{Agents: 2, Limits: Limits{TechDebtThreshold: 2, ArchitectureInterval: 5}, Items: items("F001", "F002", "DEBT-1", "DEBT-2"),
				Pipelines: map[string]progress.Pipeline{"F001": pipe(progress.PhaseLanding, "passed", "t")}, Landing: []progress.Landing{{Item: "F001"}}},
			"", "", "F001; DEBT-1,DEBT-2; F002", ""},
		{"an architecture review stopped for a person holds back new work, and nothing runs",
			Project{Agents: 2, Limits: lim, Items: items("+F001", "F002"), PassedSinceArchitecture: 5, Pipelines: map[string]progress.Pipeline{ItemArchitecture: pipe(PhaseStopped, "error-stop", "t")}},
			"", "", "ARCHITECTURE; F002", PhaseStopped},
		{"an item in flight comes before a barrier: a passed item's merge",
			Project{Agents: 1, Limits: lim, Items: items("F001"), PassedSinceArchitecture: 5, Pipelines: map[string]progress.Pipeline{"F001": pipe(PhaseReview, RuleMergePending, "t")}},
			"REVIEW F001; ARCHITECTURE ARCHITECTURE", "", "", ""},
		{"tech debt reaching the threshold while an item is in flight: the item goes on first",
			Project{Agents: 1, Limits: Limits{TechDebtThreshold: 2, ArchitectureInterval: 5}, Items: items("F001", "F002", "DEBT-1", "DEBT-2"), Pipelines: map[string]progress.Pipeline{"F001": pipe(PhaseFix, "changes-requested", "t")}},
			"FIX F001; GLOBAL_FIX DEBT-1,DEBT-2", "", "F002", ""},
		{"a running architecture lane: nothing new starts, running lanes finish",
			Project{Agents: 3, Limits: lim, Items: items("F001", "F002"), PassedSinceArchitecture: 5,
				Lanes: []progress.Lane{lane(ItemArchitecture, PhaseArchitecture, 7), lane("F001", PhaseImplement, 6)}},
			"", "ARCHITECTURE ARCHITECTURE; IMPLEMENT F001", "F002", ""},
		{"an architecture refactor in flight: no new item starts until it lands",
			Project{Agents: 2, Limits: lim, Items: items("F001"), Pipelines: map[string]progress.Pipeline{
				"refactor/arch-review-7": pipe(PhaseFix, "architecture-refactor", "t1"), "F002": pipe(PhaseReview, "implemented", "t0")}},
			"REVIEW F002; FIX refactor/arch-review-7", "", "F001", ""},
		{"tech debt at the threshold: GLOBAL_FIX as a barrier",
			Project{Agents: 2, Limits: Limits{TechDebtThreshold: 2, ArchitectureInterval: 5}, Items: items("F001", "DEBT-1", "DEBT-2")},
			"GLOBAL_FIX DEBT-1,DEBT-2", "", "F001", ""},
		{"tech debt at the threshold waits for bugs",
			Project{Agents: 2, Limits: Limits{TechDebtThreshold: 2, ArchitectureInterval: 5}, Items: items("F001", "BUG-1", "DEBT-1", "DEBT-2")},
			"BUGFIX BUG-1; IMPLEMENT F001", "", "DEBT-1,DEBT-2", ""},
		{"a tech-debt batch in flight holds back the others",
			Project{Agents: 2, Limits: lim, Items: items("F001", "DEBT-1", "DEBT-2"), Pipelines: map[string]progress.Pipeline{"DEBT-1,DEBT-2": pipe(PhaseReview, "fixed", "t")}},
			"REVIEW DEBT-1,DEBT-2", "", "F001", ""},
		{"a tech-debt batch landing holds back new work until it has landed",
			Project{Agents: 2, Limits: lim, Items: items("F001", "DEBT-1", "DEBT-2"), Pipelines: map[string]progress.Pipeline{"DEBT-1,DEBT-2": pipe(progress.PhaseLanding, "passed", "t")},
				Landing: []progress.Landing{{Item: "DEBT-1,DEBT-2"}}},
			"", "", "DEBT-1,DEBT-2; F001", ""},
		{"tech debt below the threshold waits for the features",
			Project{Agents: 2, Limits: lim, Items: items("F001", "DEBT-1")}, "IMPLEMENT F001", "", "DEBT-1", ""},
		{"only tech debt left", Project{Agents: 2, Limits: lim, Items: items("+F001", "DEBT-1", "DEBT-2")}, "GLOBAL_FIX DEBT-1,DEBT-2", "", "", ""},
		{"a landing item is no feature left",
			Project{Agents: 1, Limits: lim, Items: items("F001", "DEBT-1"), Pipelines: map[string]progress.Pipeline{"F001": pipe(progress.PhaseLanding, "passed", "t")}},
			"GLOBAL_FIX DEBT-1", "", "F001", ""},
		{"one agent: an item stopped for a person stops the project",
			Project{Agents: 1, Limits: lim, Items: items("F001", "F002"), Pipelines: map[string]progress.Pipeline{"F001": pipe(PhaseStopped, "error-stop", "t")}},
			"", "", "", PhaseStopped},
		{"several agents: an item stopped stops only that item",
			Project{Agents: 2, Limits: lim, Items: items("F001", "F002"), Pipelines: map[string]progress.Pipeline{"F001": pipe(PhaseStopped, "error-stop", "t")}},
			"IMPLEMENT F002", "", "F001", ""},
		{"what waits on a stopped item stops with it",
			Project{Agents: 2, Limits: lim, Items: items("F001", "F002<F001"), Pipelines: map[string]progress.Pipeline{"F001": pipe(PhaseStopped, "error-stop", "t")}},
			"", "", "F001; F002", PhaseStopped},
		{"a person stopped the project: nothing new, lanes finish",
			Project{Agents: 2, Limits: lim, Items: items("F001", "F002"), Stopped: true, Lanes: []progress.Lane{lane("F001", PhaseImplement, 3)}},
			"", "IMPLEMENT F001", "", PhaseStopped},
		{"done: nothing pending, in flight or running", Project{Agents: 2, Limits: lim, Items: items("+F001", "+DEBT-1")}, "", "", "", PhaseDone},
		{"not done while a lane runs",
			Project{Agents: 2, Limits: lim, Items: items("+F001"), Lanes: []progress.Lane{lane(ItemArchitecture, PhaseArchitecture, 3)}}, "", "ARCHITECTURE ARCHITECTURE", "", ""},
		{"not done while the landing queue holds an item",
			Project{Agents: 2, Limits: lim, Items: items("F001"), Pipelines: map[string]progress.Pipeline{"F001": pipe(progress.PhaseLanding, "passed", "t")}, Landing: []progress.Landing{{Item: "F001"}}},
			"", "", "F001", ""},
		{"no feature list yet: INITIALIZER", Project{Agents: 2, Limits: lim, NeedsInitializer: true}, "INITIALIZER INITIALIZER", "", "", ""},
		{"the initializer running", Project{Agents: 2, Limits: lim, NeedsInitializer: true, Lanes: []progress.Lane{lane(ItemInitializer, Initializer, 1)}}, "", "INITIALIZER INITIALIZER", "", ""},
		{"a passing item's merge still to come",
			Project{Agents: 2, Limits: lim, Items: items("+F001", "F002"), Pipelines: map[string]progress.Pipeline{"F001": pipe(PhaseReview, RuleMergePending, "t")}}, "REVIEW F001; IMPLEMENT F002", "", "", ""},
		{"an ERROR's retry is the item's step",
			Project{Agents: 2, Limits: lim, Items: items("F001", "F002"), Pipelines: map[string]progress.Pipeline{"F001": pipe(PhaseImplement, "error-retry", "t")}},
			"IMPLEMENT F001; IMPLEMENT F002", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Runnable(tt.p)
			if got := steps(s.Steps); got != tt.steps {
				t.Errorf("steps %q, want %q", got, tt.steps)
			}
			if got := steps(s.Running); got != tt.running {
				t.Errorf("running %q, want %q", got, tt.running)
			}
			if got := waits(s.Waiting); got != tt.waiting {
				t.Errorf("waiting %q, want %q", got, tt.waiting)
			}
			if s.Phase != tt.phase {
				t.Errorf("phase %q, want %q (%s)", s.Phase, tt.phase, s.Reason)
			}
			for _, st := range append(s.Steps, s.Running...) {
				if st.Reason == "" || st.Rule == "" {
					t.Errorf("step %s %s without a rule or reason", st.Role, st.Item)
				}
			}
			for _, w := range s.Waiting {
				if w.Reason == "" {
					t.Errorf("%s waits without a reason", w.Item)
				}
			}
		})
	}
}

func TestRunnableReasons(t *testing.T) {
	s := Runnable(Project{Agents: 2, Limits: DefaultLimits, Items: items("F001", "F002<F001")})
	if len(s.Waiting) != 1 || s.Waiting[0].Reason != "F002 depends on F001, not passing yet" {
		t.Errorf("waiting %+v", s.Waiting)
	}
	s = Runnable(Project{Agents: 2, Limits: DefaultLimits, Items: items("+F001", "F002"), PassedSinceArchitecture: 5})
	if s.Steps[0].Rule != "architecture-interval" || !strings.Contains(s.Steps[0].Reason, "5 features passed since the last architecture review (interval 5)") {
		t.Errorf("architecture step %+v", s.Steps[0])
	}
	if len(s.Waiting) != 1 || s.Waiting[0].Reason != "IMPLEMENT F002 waits until ARCHITECTURE ARCHITECTURE has landed" {
		t.Errorf("waiting %+v", s.Waiting)
	}
	s = Runnable(Project{Agents: 2, Limits: DefaultLimits, Items: items("F001", "F002<F001"), Pipelines: map[string]progress.Pipeline{"F001": pipe(PhaseStopped, "error-stop", "t")}})
	if !strings.Contains(s.Reason, "nothing can run: stopped for a person") {
		t.Errorf("reason %q", s.Reason)
	}
}

// after builds the project as the files would be once decision d was
// applied to item x: its pipelines moved (Advance), merged features
// passing, leftovers appended as debt.
func after(x string, d Decision, sit Situation, merged []string, passed int) Project {
	p := Project{Agents: 1, Limits: sit.Limits, Pipelines: map[string]progress.Pipeline{}, PassedSinceArchitecture: passed}
	done := map[string]bool{}
	for _, id := range merged {
		done[id] = true
	}
	add := func(ids []string, kind string) {
		for _, id := range ids {
			p.Items = append(p.Items, WorkItem{ID: id, Kind: kind, Passes: done[id]})
		}
	}
	add(sit.Backlog.Bugs, "BUG")
	add(sit.Backlog.Features, "FEAT")
	add(sit.Backlog.Debt, "DEBT")
	if c := Advance(x, d); c.Set {
		p.Pipelines[c.Item] = c.Pipeline
	}
	return p
}

// agrees checks that one agent's schedule after decision d starts with d
// (the sequential workflow's step), and that the status shows d.
func agrees(t *testing.T, d Decision, p Project) {
	t.Helper()
	s := Runnable(p)
	switch {
	case d.Phase == PhaseDone || d.Phase == PhaseStopped:
		if s.Phase != d.Phase || len(s.Steps) > 0 {
			t.Errorf("decision %s, schedule %s with steps %q (%s)", d.Phase, s.Phase, steps(s.Steps), s.Reason)
		}
	case len(s.Steps) == 0:
		t.Errorf("decision %s %s, no step to run (%s, waiting %q)", d.Phase, ItemOf(d.Feature, d.Branch, d.Phase), s.Phase, waits(s.Waiting))
	default:
		head := s.Steps[0]
		if head.Role != d.Phase || head.Item != ItemOf(d.Feature, d.Branch, d.Phase) || val(head.Feature) != val(d.Feature) || val(head.Branch) != val(d.Branch) {
			t.Errorf("decision %s %s (branch %s), first step %s %s (branch %s)", d.Phase, val(d.Feature), val(d.Branch), head.Role, val(head.Feature), val(head.Branch))
		}
	}
	if v := View(d, s); v.Phase != d.Phase || v.Rule != d.Rule || val(v.Feature) != val(d.Feature) {
		t.Errorf("the status shows %s %s [%s], not the decision %s %s [%s]", v.Phase, val(v.Feature), v.Rule, d.Phase, val(d.Feature), d.Rule)
	}
}

// One agent is the sequential workflow: in every situation the transition
// table's tests decide, the schedule's first step is the decision.
func TestOneAgentIsTheSequentialWorkflow(t *testing.T) {
	for _, tt := range reviewCases {
		t.Run("review: "+tt.name, func(t *testing.T) {
			d := AfterReview(tt.r, tt.sit)
			x := ItemOf(joinIDs(tt.r.Features), tt.r.Branch, map[bool]string{true: ItemArchitecture, false: PhaseReview}[tt.r.Architecture])
			sit, merged, passed := tt.sit, []string(nil), tt.sit.PassedSinceArchitecture
			if d.Merge {
				merged = tt.r.Features
				if !tt.r.DebtItem {
					passed += len(tt.r.Features)
				}
			}
			if tt.r.Architecture {
				passed = 0
			}
			if d.LeftoversToDebt {
				sit.Backlog.Debt = append(append([]string(nil), sit.Backlog.Debt...), tt.r.LeftoverIDs...)
			}
			agrees(t, d, after(x, d, sit, merged, passed))
			if d.Merge { // waiting for its merge, the item's REVIEW comes first
				w := AwaitMerge(tt.r.ReviewID, d, tt.r.Features, tt.r.Branch, true)
				agrees(t, w, after(x, w, tt.sit, nil, tt.sit.PassedSinceArchitecture))
			}
		})
	}
	for _, tt := range sessionCases {
		d, ok := AfterSession(tt.s, tt.sit)
		if !ok {
			continue
		}
		t.Run("session: "+tt.name, func(t *testing.T) {
			agrees(t, d, after(ItemOf(tt.s.Feature, tt.s.Branch, tt.s.Role), d, tt.sit, nil, tt.sit.PassedSinceArchitecture))
		})
	}
	sit := Situation{Limits: DefaultLimits, Backlog: Backlog{Features: []string{"F001", "F002"}}}
	t.Run("merge conflict", func(t *testing.T) {
		d := MergeConflict(4, sp("F001"), "feature/a", "main", []string{"a.go"})
		agrees(t, d, after("F001", d, sit, nil, 0))
	})
	t.Run("regression after DONE", func(t *testing.T) {
		d, _ := AfterRegression(PhaseDone, []string{"F001"}, sit)
		agrees(t, d, after("", d, sit, nil, 0))
	})
	t.Run("after the merge", func(t *testing.T) {
		d := AfterMerge(4, AfterReview(ReviewResult{ReviewID: 4, Verdict: "PASS", Features: []string{"F001"}}, sit), sit)
		agrees(t, d, after("F001", d, sit, []string{"F001"}, 1))
	})
}

func TestAdvance(t *testing.T) {
	c := Advance("F001", Decision{Phase: PhaseReview, Feature: sp("F001"), Branch: sp("feature/a"), Rule: "implemented", Reason: "ready"})
	if c.Drop != "F001" || !c.Set || c.Item != "F001" || c.Pipeline.Phase != PhaseReview || val(c.Pipeline.Branch) != "feature/a" {
		t.Errorf("implemented: %+v", c)
	}
	if c := Advance("F001", Decision{Phase: PhaseImplement, Feature: sp("F001"), Rule: "rejected/next-feature"}); c.Drop != "F001" || c.Set {
		t.Errorf("a rejection sends the item back to the queue: %+v", c)
	}
	if c := Advance("F001", Decision{Phase: PhaseImplement, Feature: sp("F002"), Rule: "passed/next-feature"}); c.Drop != "F001" || c.Set {
		t.Errorf("new work starts no pipeline: %+v", c)
	}
	if c := Advance(ItemArchitecture, Decision{Phase: PhaseFix, Branch: sp("refactor/arch-review-7"), Rule: "architecture-refactor"}); c.Drop != ItemArchitecture || c.Item != "refactor/arch-review-7" {
		t.Errorf("an architecture review's refactor is its own item: %+v", c)
	}
	if c := Advance("F001", Decision{Phase: PhaseImplement, Feature: sp("F001"), Rule: "error-retry", Errors: 2}); !c.Set || c.Pipeline.Errors != 2 {
		t.Errorf("an ERROR's retry counts: %+v", c)
	}
	if c := Advance("", HumanOverride(PhaseDone, PhaseReview, sp("F001"), nil, "why")); c.Set {
		t.Errorf("an override to DONE is no item's step: %+v", c)
	}
	if c := Advance("", HumanOverride(PhaseFix, PhaseReview, sp("F001"), nil, "why")); !c.Set || c.Pipeline.Phase != PhaseFix {
		t.Errorf("a person's override is the item's step: %+v", c)
	}
	if c := Advance(ItemArchitecture, Decision{Phase: PhaseStopped, Rule: "error-stop", Errors: 3}); !c.Set || c.Item != ItemArchitecture || c.Pipeline.Phase != PhaseStopped {
		t.Errorf("an architecture review stopped by its errors stops as itself: %+v", c)
	}
	pl := progress.Pipeline{Phase: PhaseImplement, Rule: "error-retry", Errors: 2}
	if ErrorsSoFar(&pl, "BUGFIX") != 2 || ErrorsSoFar(&pl, Review) != 0 || ErrorsSoFar(nil, Implement) != 0 {
		t.Error("ErrorsSoFar")
	}
}

func TestView(t *testing.T) {
	s := Schedule{Steps: []Step{{Role: PhaseImplement, Item: "F003", Feature: sp("F003"), Rule: "next-feature", Reason: "r"}},
		Running: []Step{{Role: PhaseImplement, Item: "F002", Feature: sp("F002"), Rule: "running", Session: 4}}}
	if v := View(Decision{Phase: PhaseImplement, Feature: sp("F002"), Rule: "passed/next-feature"}, s); val(v.Feature) != "F002" || v.Rule != "passed/next-feature" {
		t.Errorf("a running step is listed: %+v", v)
	}
	if v := View(Decision{Phase: PhaseImplement, Feature: sp("F009"), Rule: "passed/next-feature"}, s); val(v.Feature) != "F003" || v.Rule != "next-feature" {
		t.Errorf("a step no longer listed gives way to the first: %+v", v)
	}
	if v := View(Decision{Phase: PhaseDone, Rule: "passed/done"}, s); v.Phase != PhaseImplement {
		t.Errorf("DONE with steps left: %+v", v)
	}
	if v := View(Decision{Phase: PhaseDone, Rule: "passed/done"}, Schedule{Phase: PhaseDone, Rule: "done"}); v.Rule != "passed/done" {
		t.Errorf("DONE agreed: %+v", v)
	}
	if v := View(Decision{Phase: PhaseImplement, Feature: sp("F001")}, Schedule{Phase: PhaseStopped, Rule: "waiting", Reason: "nothing can run"}); v.Phase != PhaseStopped || v.Rule != "waiting" {
		t.Errorf("stopped: %+v", v)
	}
}

func TestOpensStep(t *testing.T) {
	sched := Runnable(Project{Agents: 2, Limits: DefaultLimits, Items: items("F001", "F002", "F003<F001"),
		Pipelines: map[string]progress.Pipeline{"F001": pipe(PhaseReview, "implemented", "t")}})
	lanes := []progress.Lane{{Item: "F002", Role: PhaseImplement, Session: 5}}
	tests := []struct {
		name string
		o    StepOpening
		l    []progress.Lane
		item string
		kind errs.Kind
		msg  string
	}{
		{"the first step of the role", StepOpening{Role: Review, Opener: LauncherOpens, Agents: 2}, nil, "F001", 0, ""},
		{"a named item of the role", StepOpening{Role: Implement, Opener: KeyholderOpens, Agents: 2, Item: "F002"}, nil, "F002", 0, ""},
		{"an alias of the role", StepOpening{Role: "BUGFIX", Opener: LauncherOpens, Agents: 2, Item: "F002"}, nil, "F002", 0, ""},
		{"an item another lane holds", StepOpening{Role: Implement, Opener: LauncherOpens, Agents: 3, Item: "F002"}, lanes, "", errs.Conflict, "F002 already has a lane: session 5 (IMPLEMENT) works on F002"},
		{"an item in a lane's batch", StepOpening{Role: Implement, Opener: OverrideOpens, Agents: 3, Item: "F002"}, []progress.Lane{{Item: "F002,F004", Role: PhaseImplement, Session: 5}}, "", errs.Conflict, "already has a lane"},
		{"every lane taken", StepOpening{Role: Review, Opener: LauncherOpens, Agents: 1}, lanes, "", errs.Conflict, "1 session(s) already work in lanes and the project runs 1 at once"},
		{"an item that waits", StepOpening{Role: Implement, Opener: KeyholderOpens, Agents: 2, Item: "F003"}, nil, "", errs.Policy, "F003 is not runnable now: F003 depends on F001, not passing yet"},
		{"a role with no step", StepOpening{Role: Fix, Opener: LauncherOpens, Agents: 2}, nil, "", errs.Policy, "the workflow's next phase is REVIEW, not FIX"},
		{"one lane: only the first step's role", StepOpening{Role: Implement, Opener: KeyholderOpens, Agents: 1}, nil, "", errs.Policy, "the workflow's next phase is REVIEW, not IMPLEMENT"},
		{"one lane: the status's phase", StepOpening{Role: Implement, Opener: KeyholderOpens, Agents: 1, ViewPhase: Implement}, nil, "F002", 0, ""},
		{"a batch of runnable new items", StepOpening{Role: Implement, Opener: KeyholderOpens, Agents: 2, Item: "F002,F004"}, nil, "", errs.Policy, "F002,F004 has no IMPLEMENT step now"},
		{"a person on purpose: any role", StepOpening{Role: Fix, Opener: OverrideOpens, Agents: 1, Item: "F009"}, nil, "F009", 0, ""},
		{"a person on purpose without an item or step", StepOpening{Role: Fix, Opener: OverrideOpens, Agents: 1}, nil, "", 0, ""},
		{"a person on purpose naming no item", StepOpening{Role: Review, Opener: OverrideOpens, Agents: 1}, nil, "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := OpensStep(tt.o, sched, tt.l)
			if tt.msg == "" {
				if err != nil || st.Item != tt.item {
					t.Fatalf("got %+v, %v; want item %q", st, err, tt.item)
				}
				return
			}
			if err == nil || errs.KindOf(err) != tt.kind || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("got %v (kind %v), want %v %q", err, errs.KindOf(err), tt.kind, tt.msg)
			}
		})
	}
	batch := Runnable(Project{Agents: 2, Limits: DefaultLimits, Items: items("F001", "F002", "F004")})
	if st, err := OpensStep(StepOpening{Role: Implement, Opener: KeyholderOpens, Agents: 2, Item: "F002,F004"}, batch, nil); err != nil || st.Item != "F002,F004" || val(st.Feature) != "F002,F004" {
		t.Errorf("a batch of runnable features: %+v %v", st, err)
	}
	stopped := Runnable(Project{Agents: 1, Limits: DefaultLimits, Items: items("F001"), Pipelines: map[string]progress.Pipeline{"F001": pipe(PhaseStopped, "error-stop", "t")}})
	if _, err := OpensStep(StepOpening{Role: Implement, Opener: LauncherOpens, Agents: 1}, stopped, nil); err == nil || !strings.Contains(err.Error(), "next phase is STOPPED") {
		t.Errorf("stopped: %v", err)
	}
}

func TestValidateLanes(t *testing.T) {
	for _, tc := range []struct {
		agents int
		g      Gate
		want   string
	}{
		{1, Gate{}, ""}, {8, Gate{Command: "make test", Timeout: "90s", Batch: 4}, ""},
		{0, Gate{}, "agents must be at least 1, found 0"},
		{1, Gate{Timeout: "20m"}, "gate.command must name the command"},
		{1, Gate{Command: "make test", Timeout: "soon"}, `gate.timeout must be a duration such as "20m", found "soon"`},
		{1, Gate{Command: "make test", Timeout: "-1m"}, "gate.timeout"},
		{1, Gate{Command: "make test", Batch: -1}, "gate.batch must be at least 1, found -1"},
	} {
		err := ValidateLanes(tc.agents, tc.g)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("ValidateLanes(%d, %+v) = %v, want %q", tc.agents, tc.g, err, tc.want)
		}
	}
	if g := (Gate{Command: "make test"}).WithDefaults(); g.Timeout != "20m" || g.Batch != 1 {
		t.Errorf("defaults %+v", g)
	}
	if (Gate{}).WithDefaults().Configured() {
		t.Error("no gate has no defaults")
	}
}
