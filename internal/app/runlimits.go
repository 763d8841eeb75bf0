package app

import "time"

// RunLimits are a run's limits from .baton/config.
type RunLimits struct {
	// Stall is how long an agent may write nothing.
	Stall time.Duration
	// Budget is what one run may spend, FeatureBudget what one feature
	// may cost over every run (US dollars; 0 for none).
	Budget, FeatureBudget float64
}

// RunSettings are the project's run limits.
func (a *App) RunSettings() (RunLimits, error) {
	s, err := a.openStore("")
	if err != nil {
		return RunLimits{}, err
	}
	cfg, err := s.LoadConfig()
	if err != nil {
		return RunLimits{}, err
	}
	return RunLimits{Stall: cfg.Stall(), Budget: cfg.Budget, FeatureBudget: cfg.FeatureBudget}, nil
}
