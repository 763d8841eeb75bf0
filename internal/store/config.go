package store

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/runner"
	"github.com/baton-cli/baton/internal/workflow"
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
	// MaxItemReturns: an item sent back to the same role this many times
	// with no new commit and no new verdict stops for a person (0: the
	// workflow's default).
	MaxItemReturns     int `json:"max_item_returns,omitempty"`
	LockTimeoutSeconds int `json:"lock_timeout_seconds"`
	// MainBranch is the branch work merges into; empty means main, else
	// master.
	MainBranch string `json:"main_branch"`
	// MergeNoFF makes every merge a merge commit, even when main could
	// fast-forward (git merge --no-ff), so each merge is one commit to audit.
	MergeNoFF bool `json:"merge_no_ff"`
	// SpecFile is the project's specification, the INITIALIZER's input;
	// empty: the first of app_spec.txt, spec.md, ... that exists.
	SpecFile string `json:"spec_file,omitempty"`
	// TestCommand runs the project's tests, as prompts tell agents; empty:
	// guessed from the build files (make test, go test ./..., npm test).
	TestCommand string `json:"test_command,omitempty"`
	// Agent configures the agent CLIs baton run starts.
	Agent AgentConfig `json:"agent,omitzero"`
	// Sandbox is baton run's default for --sandbox: "on", "auto" or
	// "off" (empty: off).
	Sandbox string `json:"sandbox,omitempty"`
	// SandboxHosts are the hosts a confined agent may reach besides its
	// CLI's model API, under --sandbox-net=model (package registries, say):
	// "registry.npmjs.org", "*.pypi.org", "proxy.golang.org:443".
	SandboxHosts []string `json:"sandbox_hosts,omitempty"`
	// Agents is how many sessions run at once, each in its own lane.
	Agents int `json:"agents"`
	// Gate is the command the merged tree must pass before main moves
	// (none when empty).
	Gate workflow.Gate `json:"gate,omitzero"`
	// StallTimeout is how long baton run lets an agent write nothing
	// before it ends the session as stalled (a Go duration, "10m";
	// empty: DefaultStallTimeout).
	StallTimeout string `json:"stall_timeout,omitempty"`
	// Budget is what one baton run may spend on agents, in US dollars
	// (0: no budget).
	Budget float64 `json:"budget,omitempty"`
	// FeatureBudget is what the sessions of one feature may cost over
	// every run, in US dollars (0: no budget).
	FeatureBudget float64 `json:"feature_budget,omitempty"`
	// Runners are the machines lanes may run on besides this one, in the
	// order lanes are placed (docs/runners.md).
	Runners []runner.Runner `json:"runners,omitempty"`
}

// DefaultStallTimeout is the stall timeout of a project that sets none.
const DefaultStallTimeout = 10 * time.Minute

// Stall is the configured stall timeout.
func (c Config) Stall() time.Duration {
	d, err := time.ParseDuration(c.StallTimeout)
	if err != nil || d <= 0 {
		return DefaultStallTimeout
	}
	return d
}

// AgentConfig is how baton run starts an agent CLI (--agent claude|codex).
type AgentConfig struct {
	// Model is the model of every role without its own in Models.
	Model string `json:"model,omitempty"`
	// Models names a role's own model.
	Models RoleModels `json:"models,omitzero"`
	// MaxTurns bounds an agent's turns where the CLI supports it (0: its default).
	MaxTurns int `json:"max_turns,omitempty"`
	// Allow are the programs an unsandboxed agent may run without asking
	// (nil: the preset's default list).
	Allow []string `json:"allow,omitempty"`
}

// RoleModels are the models of the roles that have their own (a struct,
// not a map, so that a Config stays comparable).
type RoleModels struct {
	Initializer           string `json:"INITIALIZER,omitempty"`
	BrownfieldInitializer string `json:"BROWNFIELD_INITIALIZER,omitempty"`
	Implement             string `json:"IMPLEMENT,omitempty"`
	Bugfix                string `json:"BUGFIX,omitempty"`
	Review                string `json:"REVIEW,omitempty"`
	Fix                   string `json:"FIX,omitempty"`
	GlobalFix             string `json:"GLOBAL_FIX,omitempty"`
	Architecture          string `json:"ARCHITECTURE,omitempty"`
}

// ModelFor is the model configured for role, "" for the CLI's default.
func (c AgentConfig) ModelFor(role string) string {
	m := map[string]string{
		"INITIALIZER": c.Models.Initializer, "BROWNFIELD_INITIALIZER": c.Models.BrownfieldInitializer,
		"IMPLEMENT": c.Models.Implement, "BUGFIX": c.Models.Bugfix, "REVIEW": c.Models.Review, "FIX": c.Models.Fix,
		"GLOBAL_FIX": c.Models.GlobalFix, "ARCHITECTURE": c.Models.Architecture,
	}[strings.ToUpper(role)]
	if m != "" {
		return m
	}
	return c.Model
}

// DefaultConfig is the configuration of a project with no config file:
// the workflow's own default limits.
func DefaultConfig() Config {
	l := workflow.DefaultLimits
	return Config{MaxFixCycles: l.MaxFixCycles, ArchitectureInterval: l.ArchitectureInterval, TechDebtThreshold: l.TechDebtThreshold,
		MaxErrorRetries: l.MaxErrorRetries, LockTimeoutSeconds: 10, MergeNoFF: true, Agents: workflow.DefaultAgents}
}

// Limits are the workflow limits the config sets.
func (c Config) Limits() workflow.Limits {
	return workflow.Limits{MaxFixCycles: c.MaxFixCycles, ArchitectureInterval: c.ArchitectureInterval,
		TechDebtThreshold: c.TechDebtThreshold, MaxErrorRetries: c.MaxErrorRetries, MaxItemReturns: c.MaxItemReturns}
}

// ConfigPath is where the config of the state directory lives.
func (s *Store) ConfigPath() string { return filepath.Join(s.BatonDir(), ConfigName) }

// LoadConfig reads .baton/config over the defaults. A missing file is the
// defaults; a corrupt one is an Invalid error naming the place.
func (s *Store) LoadConfig() (Config, error) {
	c, err := s.loadConfig()
	if err == nil && c.MainBranch == "" {
		c.MainBranch = s.takenOverMain()
	}
	return c, err
}

// GitBaselineName is the file, in .baton/, recording main's branch and head
// when baton took over the project.
const GitBaselineName = "git.json"

// takenOverMain is the main branch baton took over the project on, as
// .baton/git.json records it with its head ("" when none is recorded, or
// the repository had no commit yet): with no
// main_branch configured it stays the branch work merges into, so that a
// 'main' created beside a project's 'master' changes nothing.
func (s *Store) takenOverMain() string {
	data, err := ReadRegular(filepath.Join(s.BatonDir(), GitBaselineName))
	if err != nil || data == nil {
		return ""
	}
	b := gjson.GetBytes(data, "main_branch").String()
	if gjson.GetBytes(data, "main_head_at_init").Type != gjson.String || !validBranch(b) {
		return ""
	}
	return b
}

// validBranch says whether b can name a branch as main_branch does.
func validBranch(b string) bool {
	return b != "" && !strings.HasPrefix(b, "-") && !strings.HasPrefix(b, "refs/") && !strings.ContainsAny(b, " ~^:?*[\\") && !strings.Contains(b, "..")
}

func (s *Store) loadConfig() (Config, error) {
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
	switch c.Sandbox {
	case "", "on", "auto", "off":
	default:
		return c, errs.New(errs.Invalid, "%s: sandbox must be \"on\", \"auto\" or \"off\", found %q", s.ConfigPath(), c.Sandbox)
	}
	for i, h := range c.SandboxHosts {
		if h == "" || strings.ContainsAny(h, "/ \t@") {
			return c, errs.New(errs.Invalid, "%s: sandbox_hosts[%d] %q is not a host: write a name (\"registry.npmjs.org\"), a wildcard (\"*.pypi.org\") or either with a port (\"proxy.golang.org:443\")", s.ConfigPath(), i, h)
		}
	}
	if err := c.Limits().Validate(); err != nil {
		return c, errs.New(errs.Invalid, "%s: %v", s.ConfigPath(), err)
	}
	if err := workflow.ValidateLanes(c.Agents, c.Gate); err != nil {
		return c, errs.New(errs.Invalid, "%s: %v", s.ConfigPath(), err)
	}
	c.Gate = c.Gate.WithDefaults()
	if d, err := time.ParseDuration(c.StallTimeout); c.StallTimeout != "" && (err != nil || d <= 0) {
		return c, errs.New(errs.Invalid, "%s: stall_timeout must be a positive duration such as \"10m\" or \"90s\", found %q", s.ConfigPath(), c.StallTimeout)
	}
	if c.Budget < 0 || c.FeatureBudget < 0 {
		return c, errs.New(errs.Invalid, "%s: budget and feature_budget must be costs in US dollars, 0 or more, found %v and %v", s.ConfigPath(), c.Budget, c.FeatureBudget)
	}
	if c.LockTimeoutSeconds < 1 {
		return c, errs.New(errs.Invalid, "%s: lock_timeout_seconds must be at least 1, found %d", s.ConfigPath(), c.LockTimeoutSeconds)
	}
	if err := runner.Validate(c.Runners); err != nil {
		return c, errs.New(errs.Invalid, "%s: %v", s.ConfigPath(), err)
	}
	if b := c.MainBranch; b != "" && !validBranch(b) {
		return c, errs.New(errs.Invalid, "%s: main_branch %q is not a branch name (write it as git shows it, e.g. \"main\")", s.ConfigPath(), b)
	}
	return c, nil
}
