package workflow

import (
	"fmt"
	"strings"
)

// ClaimKind is how an agent's --next-phase relates to the phase baton
// computed.
type ClaimKind int

// The kinds of claim.
const (
	// ClaimAgrees: the claim names the computed phase (or a role with the
	// same rights).
	ClaimAgrees ClaimKind = iota
	// ClaimCoarse: the claim names the predecessor's coarser next step (it
	// calls every next work item IMPLEMENT). It is recorded as the agent's
	// suggestion with a warning, and the computed phase stands.
	ClaimCoarse
	// ClaimContradicts: the claim would skip work the files say is due (a
	// review, a fix cycle, a merge) or says there is none left when there
	// is. It is refused.
	ClaimContradicts
)

// Claim is an agent's --next-phase beside what baton computed.
type Claim struct {
	Role     string // the bound session's role (aliases kept: GLOBAL_FIX, BUGFIX)
	Outcome  string // the session's outcome as recorded
	Given    string // the --next-phase the agent named
	Computed string // the phase baton computed (or kept)
}

// nextWork are the phases that start a new item of work: the predecessor's
// prompts call each of them IMPLEMENT, as its orchestrator, not the
// session, chose among them.
var nextWork = map[string]bool{
	PhaseImplement: true, PhaseBugfix: true, PhaseGlobalFix: true, PhaseArchitecture: true, PhaseDone: true,
}

// JudgeClaim says whether a claimed next phase agrees with the computed
// one, is merely coarser, or contradicts it, and why. The computed phase
// always stands; only a contradiction is refused.
func JudgeClaim(c Claim) (ClaimKind, string) {
	given, computed := strings.ToUpper(strings.TrimSpace(c.Given)), strings.ToUpper(strings.TrimSpace(c.Computed))
	gc, _ := Canonical(given)
	cc, _ := Canonical(computed)
	fixDone := canonicalOf(c.Role) == Fix && strings.EqualFold(strings.TrimSpace(c.Outcome), "SUCCESS")
	switch {
	case given == "" || given == computed:
		return ClaimAgrees, ""
	case fixDone: // whatever the next phase is called (GLOBAL_FIX for FIX, say)
		return ClaimContradicts, "a fix is done when REVIEW has verified it: end READY_FOR_REVIEW"
	case gc != "" && gc == cc:
		return ClaimAgrees, ""
	case given == PhaseDone:
		return ClaimContradicts, fmt.Sprintf("DONE says nothing is left, but %s is due", computed)
	case computed == PhaseReview && given == PhaseImplement && strings.EqualFold(c.Role, PhaseGlobalFix):
		// The predecessor merges tech-debt fixes unreviewed; baton reviews them.
		return ClaimCoarse, "tech-debt fixes are reviewed before they reach main"
	case computed == PhaseReview:
		return ClaimContradicts, "the work waits for REVIEW (its review, or its merge after a PASS)"
	case computed == PhaseFix:
		return ClaimContradicts, "the review's issues wait for FIX"
	case computed == PhaseStopped:
		return ClaimContradicts, "the run is STOPPED for a person"
	case computed == PhaseInitializer:
		return ClaimContradicts, "there is no feature list yet: INITIALIZER writes it"
	case nextWork[computed] && (given == PhaseImplement || nextWork[given]):
		return ClaimCoarse, fmt.Sprintf("the next work item is %s", computed)
	}
	return ClaimContradicts, fmt.Sprintf("%s is not what follows: %s is due", given, computed)
}

func canonicalOf(role string) string {
	c, _ := Canonical(role)
	return c
}

// Ruling is what becomes of a claimed next phase.
type Ruling int

// The rulings.
const (
	// RulingAgrees: the claim names the computed phase; nothing to do.
	RulingAgrees Ruling = iota
	// RulingOverride: a person's claim is applied over the computed
	// phase, with the person's reason (HumanOverride).
	RulingOverride
	// RulingSuggest: a coarser claim made with a session's record is kept
	// as the agent's suggestion, with a warning; the computed phase stands.
	RulingSuggest
	// RulingRefuse: the claim contradicts the computed phase
	// (NextPhaseClaim).
	RulingRefuse
)

// RuleOnClaim decides what becomes of a claim judged kind: person says a
// person makes it (and there is a status to set), withRecord that it comes
// with a session's record (add-session, session end) rather than alone.
func RuleOnClaim(kind ClaimKind, person, withRecord bool) Ruling {
	switch {
	case kind == ClaimAgrees:
		return RulingAgrees
	case person:
		return RulingOverride
	case kind == ClaimCoarse && withRecord:
		return RulingSuggest
	}
	return RulingRefuse
}
