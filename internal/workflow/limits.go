package workflow

import "fmt"

// Limits are the workflow's numbers, from .baton/config.
type Limits struct {
	MaxFixCycles         int `json:"max_fix_cycles"`
	ArchitectureInterval int `json:"architecture_interval"`
	TechDebtThreshold    int `json:"tech_debt_threshold"`
	MaxErrorRetries      int `json:"max_error_retries"`
	// MaxItemReturns bounds an item's returns to one role with nothing
	// new (0: DefaultMaxItemReturns); see loop.go.
	MaxItemReturns int `json:"max_item_returns,omitempty"`
}

// DefaultLimits are the seed's, and the only defaults of these numbers:
// the config's defaults are these.
var DefaultLimits = Limits{MaxFixCycles: 3, ArchitectureInterval: 5, TechDebtThreshold: 5, MaxErrorRetries: 2}

// Validate names the first limit below its smallest sensible value (a
// config that would make the loop spin or never review).
func (l Limits) Validate() error {
	for _, f := range []struct {
		name   string
		v, min int
	}{
		{"max_fix_cycles", l.MaxFixCycles, 1}, {"architecture_interval", l.ArchitectureInterval, 1},
		{"tech_debt_threshold", l.TechDebtThreshold, 1}, {"max_error_retries", l.MaxErrorRetries, 0},
	} {
		if f.v < f.min {
			return fmt.Errorf("%s must be at least %d, found %d", f.name, f.min, f.v)
		}
	}
	return nil
}

// FixCycles is where a feature (or batch) stands against the fix-cycle
// limit.
type FixCycles struct {
	Used, Max, Remaining int
	// Reached: no more fixes; the next review of the work is decided by
	// severity.
	Reached bool
}

// FixCycles counts used fixes against the limit: the one place the limit
// is compared.
func (l Limits) FixCycles(used int) FixCycles {
	return FixCycles{Used: used, Max: l.MaxFixCycles, Remaining: max(l.MaxFixCycles-used, 0), Reached: used >= l.MaxFixCycles}
}

// FixCyclesAfterDecision is FixCycles as the session that recorded the
// limit's decision on the work sees it: the limit is reached, although the
// decision (a rejection) started a new count.
func (l Limits) FixCyclesAfterDecision(used int, decidedAtLimit bool) FixCycles {
	fc := l.FixCycles(used)
	if !fc.Reached && decidedAtLimit {
		fc = l.FixCycles(l.MaxFixCycles)
	}
	return fc
}
