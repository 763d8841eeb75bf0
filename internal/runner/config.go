package runner

import (
	"fmt"
	"regexp"
	"strings"
)

// Local is the name of the launcher's own machine among the runners.
const Local = "local"

// Sandbox modes of a runner: "on" runs its agents confined or not at all;
// "auto" runs them unconfined, and says so, where the runner has no
// sandbox.
const (
	SandboxOn   = "on"
	SandboxAuto = "auto"
)

// DefaultLocalSlots is how many lanes the launcher's machine runs when
// runners are configured and no entry named "local" says otherwise.
const DefaultLocalSlots = 1

// Runner is one entry of "runners" in .baton/config.
type Runner struct {
	// Name is how status, the run's lines and 'baton runner check' call
	// it; "local" is the launcher's own machine.
	Name string `json:"name"`
	// SSH is the destination as ssh takes it (user@host, or a Host of
	// the user's ssh configuration); empty for "local".
	SSH string `json:"ssh,omitempty"`
	// Slots is how many lanes it runs at once (0 for "local": none).
	Slots int `json:"slots"`
	// Sandbox is "on" (the default) or "auto".
	Sandbox string `json:"sandbox,omitempty"`
	// Port is the SSH port (0: what the ssh configuration says).
	Port int `json:"port,omitempty"`
	// SSHConfig is an ssh configuration file to use instead of the
	// user's (ssh -F); empty: the user's.
	SSHConfig string `json:"ssh_config,omitempty"`
}

// Remote says whether r is another machine.
func (r Runner) Remote() bool { return r.Name != Local }

// Confined says whether r's agents must run in a sandbox.
func (r Runner) Confined() bool { return r.Sandbox != SandboxAuto }

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// Validate checks the runners of a config: each error names the entry and
// its field.
func Validate(rs []Runner) error {
	seen := map[string]bool{}
	for i, r := range rs {
		at := fmt.Sprintf("runners[%d]", i)
		if err := r.validate(at); err != nil {
			return err
		}
		if seen[r.Name] {
			return fmt.Errorf("%s.name: %q is named twice: give each runner its own name", at, r.Name)
		}
		seen[r.Name] = true
	}
	return nil
}

func (r Runner) validate(at string) error {
	switch {
	case !namePattern.MatchString(r.Name):
		return fmt.Errorf("%s.name: %q is not a name: letters, digits, '.', '_' and '-', starting with a letter or digit", at, r.Name)
	case r.Name == Local && (r.SSH != "" || r.Port != 0 || r.SSHConfig != "" || r.Sandbox != ""):
		return fmt.Errorf("%s: the runner named %q is this machine: give it only \"slots\" (the run's --sandbox confines its agents)", at, Local)
	case r.Name != Local && r.SSH == "":
		return fmt.Errorf("%s.ssh: runner %q needs an SSH destination such as \"agent@box1\" or a Host of your ssh configuration", at, r.Name)
	case strings.HasPrefix(r.SSH, "-") || strings.ContainsAny(r.SSH, " \t\n'\"\\;|&$`<>()"):
		return fmt.Errorf("%s.ssh: %q is not an SSH destination: write user@host or a Host name, with no spaces or options", at, r.SSH)
	case r.Slots < 0 || (r.Slots == 0 && r.Name != Local):
		return fmt.Errorf("%s.slots: runner %q needs at least 1 slot, found %d", at, r.Name, r.Slots)
	case r.Sandbox != "" && r.Sandbox != SandboxOn && r.Sandbox != SandboxAuto:
		return fmt.Errorf("%s.sandbox: %q is not a mode: give \"on\" (the default: confined or not at all) or \"auto\" (unconfined where the runner has no sandbox, and said so)", at, r.Sandbox)
	case r.Port < 0 || r.Port > 65535:
		return fmt.Errorf("%s.port: %d is not a TCP port (1 to 65535, or leave it out)", at, r.Port)
	case strings.HasPrefix(r.SSHConfig, "-"):
		return fmt.Errorf("%s.ssh_config: %q is not a file name", at, r.SSHConfig)
	}
	return nil
}

// Lineup is the order lanes are placed in: the runners as configured,
// with the launcher's machine first (DefaultLocalSlots) unless an entry
// named "local" gives its place and slots. No runners: nil, every lane
// is local.
func Lineup(rs []Runner) []Runner {
	if len(rs) == 0 {
		return nil
	}
	for _, r := range rs {
		if r.Name == Local {
			return rs
		}
	}
	return append([]Runner{{Name: Local, Slots: DefaultLocalSlots}}, rs...)
}

// Find is the runner named name in rs.
func Find(rs []Runner, name string) (Runner, bool) {
	for _, r := range rs {
		if r.Name == name {
			return r, true
		}
	}
	return Runner{}, false
}

// Slots is how many lanes the lineup runs at once.
func Slots(line []Runner) int {
	n := 0
	for _, r := range line {
		n += r.Slots
	}
	return n
}

// Pick is the runner a new lane goes to: the first of line with a free
// slot (busy counts each runner's running lanes) that is not down. ok is
// false when every slot is taken. An empty lineup places every lane on
// the launcher's machine.
func Pick(line []Runner, busy map[string]int, down map[string]bool) (Runner, bool) {
	if len(line) == 0 {
		return Runner{Name: Local}, true
	}
	for _, r := range line {
		if !down[r.Name] && busy[r.Name] < r.Slots {
			return r, true
		}
	}
	return Runner{}, false
}
