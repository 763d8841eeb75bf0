package app

import "time"

// RunSettings are a run's limits from .baton/config: how long an agent may
// write nothing (stall) and what the run may spend (budget, US dollars; 0
// for none).
func (a *App) RunSettings() (stall time.Duration, budget float64, err error) {
	s, err := a.openStore("")
	if err != nil {
		return 0, 0, err
	}
	cfg, err := s.LoadConfig()
	if err != nil {
		return 0, 0, err
	}
	return cfg.Stall(), cfg.Budget, nil
}
