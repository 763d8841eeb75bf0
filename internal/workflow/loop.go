package workflow

import "fmt"

// The loop rule: an item that keeps coming back to the same role while
// nothing changes (no new commit on its work, no new verdict on it) is
// going round in a circle no later session will break. After
// max_item_returns such returns it stops, for a person, with the rule
// "loop" (the run reports failure signature loop).

// DefaultMaxItemReturns is the default of max_item_returns.
const DefaultMaxItemReturns = 3

// RuleLoop is the rule of a decision that stopped an item in a loop.
const RuleLoop = "loop"

// Visit is one ended session of an item, as the loop rule sees it: its
// role and the item's state it left, the head of its work and the number
// of verdicts recorded on the item by then.
type Visit struct {
	Role     string
	Head     string
	Verdicts int
}

// ReturnsWithoutChange counts the item's sessions in role since the
// item's state last changed: the trailing visits that left the same head
// and the same number of verdicts as the last one.
func ReturnsWithoutChange(visits []Visit, role string) int {
	if len(visits) == 0 {
		return 0
	}
	last := visits[len(visits)-1]
	n := 0
	for i := len(visits) - 1; i >= 0; i-- {
		v := visits[i]
		if v.Head != last.Head || v.Verdicts != last.Verdicts {
			break
		}
		if c, _ := Canonical(v.Role); c == role {
			n++
		}
	}
	return n
}

// StopLoop turns decision d, which sends item back to a role, into a stop
// when the item has already been in that role max times since its state
// last changed. It returns d unchanged otherwise.
func StopLoop(d Decision, item string, visits []Visit, max int) Decision {
	if max <= 0 {
		max = DefaultMaxItemReturns
	}
	role, ok := Canonical(d.Phase)
	if !ok || item == "" || d.Rule == "error-retry" {
		return d
	}
	n := ReturnsWithoutChange(visits, role)
	if n < max {
		return d
	}
	return Decision{Phase: PhaseStopped, Feature: d.Feature, Branch: d.Branch, Rule: RuleLoop,
		Reason: fmt.Sprintf("%s would go to %s again after %d sessions there with no new commit and no new verdict (max_item_returns %d): stopped for a person", item, d.Phase, n, max)}
}
