package workflow

import (
	"fmt"
	"strings"
)

// Phases: the role that runs next, or DONE / STOPPED.
const (
	PhaseInitializer  = Initializer
	PhaseImplement    = Implement
	PhaseBugfix       = "BUGFIX"
	PhaseReview       = Review
	PhaseFix          = Fix
	PhaseGlobalFix    = "GLOBAL_FIX"
	PhaseArchitecture = Architecture
	PhaseDone         = "DONE"
	PhaseStopped      = "STOPPED" // an ERROR retried to the limit: a person decides
)

// Backlog is the pending work, ids in file order.
type Backlog struct {
	Bugs     []string
	Debt     []string
	Features []string
}

// Situation is what the files say when a decision is made.
type Situation struct {
	Limits  Limits
	Backlog Backlog
	// PassedSinceArchitecture counts features merged since the last
	// architecture review (before the review being decided).
	PassedSinceArchitecture int
	// FixCount is the number of fixes recorded for the reviewed item.
	FixCount int
	// ConsecutiveErrors counts ERROR outcomes in a row, this one included.
	ConsecutiveErrors int
}

// Decision is where the project goes next and why.
type Decision struct {
	Phase   string  `json:"phase"`
	Feature *string `json:"feature"`
	Branch  *string `json:"branch"`
	Rule    string  `json:"rule"`
	Reason  string  `json:"reason"`
	// Effects of a review decision.
	Verdict         string `json:"verdict,omitempty"` // the verdict that takes effect
	Merge           bool   `json:"merge,omitempty"`
	Reject          bool   `json:"reject,omitempty"`
	LeftoversToDebt bool   `json:"leftovers_to_debt,omitempty"`
	// Limits are the limits in force when the decision was made.
	Limits *Limits `json:"limits,omitempty"`
	// Errors counts the ERROR outcomes in a row of an error decision.
	Errors int `json:"-"`
}

// SessionEnd is a finished session.
type SessionEnd struct {
	Role    string // as recorded (aliases allowed)
	Outcome string // the seed's outcome words
	Feature *string
	Branch  *string
	// Phase is the phase the session ran in (for an ERROR retry).
	Phase string
}

// AfterSession decides the next phase when a session ends. Reviews decide
// at the review itself (AfterReview); a REVIEW or ARCHITECTURE session end
// keeps that decision, reported as "keep".
func AfterSession(s SessionEnd, sit Situation) (Decision, bool) {
	if s.Outcome == "ERROR" {
		phase := s.Phase
		if phase == "" {
			phase = s.Role
		}
		if sit.ConsecutiveErrors <= sit.Limits.MaxErrorRetries {
			return Decision{Phase: phase, Feature: s.Feature, Branch: s.Branch, Rule: "error-retry", Errors: sit.ConsecutiveErrors,
				Reason: fmt.Sprintf("%s ended in ERROR (%d of %d retries): run it again", s.Role, sit.ConsecutiveErrors, sit.Limits.MaxErrorRetries)}, true
		}
		return Decision{Phase: PhaseStopped, Feature: s.Feature, Branch: s.Branch, Rule: "error-stop", Errors: sit.ConsecutiveErrors,
			Reason: fmt.Sprintf("%s ended in ERROR %d times in a row: stopped for a person", s.Role, sit.ConsecutiveErrors)}, true
	}
	role, _ := Canonical(s.Role)
	switch {
	case role == Initializer && s.Outcome == "SUCCESS":
		return withRule(NextWork(sit), "initialized", "the initializer finished: "), true
	case role == Implement && s.Outcome == "READY_FOR_REVIEW":
		return Decision{Phase: PhaseReview, Feature: s.Feature, Branch: s.Branch, Rule: "implemented",
			Reason: "the implementation is ready: REVIEW reviews " + describe(s.Feature, s.Branch)}, true
	case role == Fix && s.Outcome == "READY_FOR_REVIEW":
		return Decision{Phase: PhaseReview, Feature: s.Feature, Branch: s.Branch, Rule: "fixed",
			Reason: "the fixes are ready: REVIEW re-verifies " + describe(s.Feature, s.Branch)}, true
	}
	return Decision{}, false
}

// ReviewResult is a recorded review.
type ReviewResult struct {
	ReviewID     int
	Architecture bool
	Verdict      string
	Blocking     bool // critical or major issues in it
	Issues       int  // how many issues it has
	Features     []string
	Branch       *string
	// DebtItem is true when the reviewed items are tech debt, whose
	// leftovers are not turned into more debt (that is how the debt loop
	// ends).
	DebtItem bool
	// LeftoverIDs are the ids the review's issues get if they are turned
	// into tech debt: the minor issues and suggestions a PASS leaves, or
	// what is left at the fix-cycle limit.
	LeftoverIDs []string
}

// RefactorBranch names the branch an architecture review's fixes go on.
func RefactorBranch(reviewID int) string { return fmt.Sprintf("refactor/arch-review-%d", reviewID) }

// AfterReview decides what a review leads to.
func AfterReview(r ReviewResult, sit Situation) Decision {
	if r.Architecture {
		if r.Blocking {
			b := RefactorBranch(r.ReviewID)
			return Decision{Phase: PhaseFix, Branch: &b, Rule: "architecture-refactor", Verdict: r.Verdict,
				Reason: fmt.Sprintf("architecture review A%d found critical or major issues: FIX them on %s, then an ARCHITECTURE_REFACTOR review", r.ReviewID, b)}
		}
		sit.PassedSinceArchitecture = 0
		return withRule(NextWork(sit), "architecture-healthy", fmt.Sprintf("architecture review A%d found nothing blocking: ", r.ReviewID))
	}
	feature := joinIDs(r.Features)
	switch r.Verdict {
	case "PASS": // minor issues and suggestions a PASS leaves become tech debt
		return merged(r, sit, "passed", "PASS", !r.DebtItem && len(r.LeftoverIDs) > 0)
	case "PASS_WITH_COMMENTS", "REQUEST_CHANGES":
		if !sit.Limits.FixCycles(sit.FixCount).Reached {
			return Decision{Phase: PhaseFix, Feature: feature, Branch: r.Branch, Rule: "changes-requested", Verdict: r.Verdict,
				Reason: fmt.Sprintf("R%d is %s with %d issue(s): FIX (%d of %d fix cycles used)", r.ReviewID, r.Verdict, r.Issues, sit.FixCount, sit.Limits.MaxFixCycles)}
		}
		if r.Blocking {
			return rejected(r, sit, "fix-limit-reject", fmt.Sprintf("the fix-cycle limit (%d) is reached and critical or major issues remain: REJECT, ", sit.Limits.MaxFixCycles))
		}
		return merged(r, sit, "fix-limit-merge", "PASS_WITH_COMMENTS", !r.DebtItem && len(r.LeftoverIDs) > 0)
	case "REJECT":
		return rejected(r, sit, "rejected", fmt.Sprintf("R%d rejected the work: ", r.ReviewID))
	}
	return Decision{Phase: PhaseReview, Feature: feature, Branch: r.Branch, Rule: "unknown-verdict", Reason: "unknown verdict " + r.Verdict}
}

func merged(r ReviewResult, sit Situation, rule, verdict string, debt bool) Decision {
	sit.Backlog = sit.Backlog.without(r.Features)
	passed := sit.PassedSinceArchitecture
	if !r.DebtItem { // tech debt paid off is not a feature toward the interval
		passed += len(r.Features)
	}
	prefix := fmt.Sprintf("R%d: %s, merged; ", r.ReviewID, verdict)
	if debt {
		sit.Backlog.Debt = append(append([]string(nil), sit.Backlog.Debt...), r.LeftoverIDs...)
		prefix += "the remaining minor issues become tech debt; "
	}
	var d Decision
	if len(r.Features) > 0 && !r.DebtItem && sit.Limits.ArchitectureInterval > 0 && passed >= sit.Limits.ArchitectureInterval {
		d = Decision{Phase: PhaseArchitecture, Rule: rule + "-architecture", Reason: prefix + architectureDue(passed, sit.Limits.ArchitectureInterval)}
	} else {
		d = withRule(NextWork(sit), rule, prefix)
	}
	d.Merge, d.Verdict, d.LeftoversToDebt = true, verdict, debt
	return d
}

func rejected(r ReviewResult, sit Situation, rule, prefix string) Decision {
	d := withRule(NextWork(sit), rule, prefix+"the branch is deleted and the work goes back to the queue; ")
	d.Reject, d.Verdict = true, "REJECT"
	return d
}

// NextWork picks the next work item: bugs first, then tech debt once it
// reaches the threshold, then features, then any debt left, else DONE.
func NextWork(sit Situation) Decision {
	b := sit.Backlog
	switch {
	case len(b.Bugs) > 0:
		return bugFirst(b.Bugs[0])
	case len(b.Debt) > 0 && len(b.Debt) >= sit.Limits.TechDebtThreshold:
		return debtThreshold(b.Debt, sit.Limits.TechDebtThreshold)
	case len(b.Features) > 0:
		return nextFeature(b.Features[0])
	case len(b.Debt) > 0:
		return debtRemaining(b.Debt)
	}
	return done()
}

// The decisions of new work, which NextWork and the scheduler share.

func bugFirst(id string) Decision {
	return Decision{Phase: PhaseBugfix, Feature: &id, Rule: "bug-first", Reason: "a pending bug comes first: BUGFIX " + id}
}

func nextFeature(id string) Decision {
	return Decision{Phase: PhaseImplement, Feature: &id, Rule: "next-feature", Reason: "next pending feature: IMPLEMENT " + id}
}

func debtThreshold(debt []string, threshold int) Decision {
	return debtWork(debt, fmt.Sprintf("%d tech-debt items reached the threshold %d: GLOBAL_FIX", len(debt), threshold), "debt-threshold")
}

func debtRemaining(debt []string) Decision {
	return debtWork(debt, "only tech debt is left: GLOBAL_FIX", "debt-remaining")
}

func done() Decision {
	return Decision{Phase: PhaseDone, Rule: "done", Reason: "no bug, feature or tech debt is pending: DONE"}
}

// NotInitialized is where a project with no feature list and no session
// yet starts.
func NotInitialized() Decision {
	return Decision{Phase: PhaseInitializer, Rule: "not-initialized", Reason: "no features yet: INITIALIZER writes the feature list"}
}

func architectureDue(passed, interval int) string {
	return fmt.Sprintf("%d features passed since the last architecture review (interval %d): ARCHITECTURE", passed, interval)
}

func debtWork(debt []string, reason, rule string) Decision {
	ids := joinIDs(debt)
	return Decision{Phase: PhaseGlobalFix, Feature: ids, Rule: rule, Reason: reason + " " + *ids}
}

func withRule(d Decision, rule, prefix string) Decision {
	d.Rule = rule + "/" + d.Rule
	d.Reason = prefix + d.Reason
	return d
}

func (b Backlog) without(ids []string) Backlog {
	drop := map[string]bool{}
	for _, id := range ids {
		drop[id] = true
	}
	keep := func(in []string) []string {
		var out []string
		for _, id := range in {
			if !drop[id] {
				out = append(out, id)
			}
		}
		return out
	}
	return Backlog{Bugs: keep(b.Bugs), Debt: keep(b.Debt), Features: keep(b.Features)}
}

func joinIDs(ids []string) *string {
	if len(ids) == 0 {
		return nil
	}
	s := strings.Join(ids, ",")
	return &s
}

func describe(feature, branch *string) string {
	var parts []string
	if feature != nil {
		parts = append(parts, *feature)
	}
	if branch != nil {
		parts = append(parts, "on "+*branch)
	}
	if len(parts) == 0 {
		return "the work"
	}
	return strings.Join(parts, " ")
}
