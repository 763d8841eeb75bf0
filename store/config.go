package store

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/baton-cli/baton/errs"
	"github.com/baton-cli/baton/jsondoc"
)

// ConfigName is the config file inside .baton/.
const ConfigName = "config"

// Config holds the workflow limits, with the seed's defaults, and how
// baton merges.
type Config struct {
	MaxFixCycles         int `json:"max_fix_cycles"`
	ArchitectureInterval int `json:"architecture_interval"`
	TechDebtThreshold    int `json:"tech_debt_threshold"`
	MaxErrorRetries      int `json:"max_error_retries"`
	LockTimeoutSeconds   int `json:"lock_timeout_seconds"`
	// MainBranch is the branch work merges into; empty means main, else
	// master.
	MainBranch string `json:"main_branch"`
	// MergeNoFF makes every merge a merge commit, even when main could
	// fast-forward (git merge --no-ff), so each merge is one commit to audit.
	MergeNoFF bool `json:"merge_no_ff"`
}

// DefaultConfig is the configuration of a project with no config file.
func DefaultConfig() Config {
	return Config{MaxFixCycles: 3, ArchitectureInterval: 5, TechDebtThreshold: 5, MaxErrorRetries: 2, LockTimeoutSeconds: 10, MergeNoFF: true}
}

// ConfigPath is where the config of the state directory lives.
func (s *Store) ConfigPath() string { return filepath.Join(s.BatonDir(), ConfigName) }

// LoadConfig reads .baton/config over the defaults. A missing file is the
// defaults; a corrupt one is an Invalid error naming the place.
func (s *Store) LoadConfig() (Config, error) {
	c := DefaultConfig()
	data, err := ReadRegular(s.ConfigPath())
	if err != nil || data == nil {
		return c, err
	}
	if err := jsondoc.Check(data); err != nil {
		ie := err.(*jsondoc.InvalidError)
		line, col := jsondoc.Position(data, ie.Offset)
		return c, errs.New(errs.Invalid, "%s: line %d, column %d: %s — fix the file or delete it to use the defaults", s.ConfigPath(), line, col, ie.Msg)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, errs.New(errs.Invalid, "%s: %v — fix the file or delete it to use the defaults", s.ConfigPath(), err)
	}
	for _, f := range []struct {
		name   string
		v, min int
	}{
		{"max_fix_cycles", c.MaxFixCycles, 1}, {"architecture_interval", c.ArchitectureInterval, 1},
		{"tech_debt_threshold", c.TechDebtThreshold, 1}, {"max_error_retries", c.MaxErrorRetries, 0},
		{"lock_timeout_seconds", c.LockTimeoutSeconds, 1},
	} {
		if f.v < f.min {
			return c, errs.New(errs.Invalid, "%s: %s must be at least %d, found %d", s.ConfigPath(), f.name, f.min, f.v)
		}
	}
	if b := c.MainBranch; b != "" && (strings.HasPrefix(b, "-") || strings.HasPrefix(b, "refs/") || strings.ContainsAny(b, " ~^:?*[\\") || strings.Contains(b, "..")) {
		return c, errs.New(errs.Invalid, "%s: main_branch %q is not a branch name (write it as git shows it, e.g. \"main\")", s.ConfigPath(), b)
	}
	return c, nil
}
