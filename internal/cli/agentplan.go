package cli

import (
	"strings"

	"github.com/baton-cli/baton/internal/agentcli"
	"github.com/baton-cli/baton/internal/app"
)

// agentPlan is what a dry run says of the agent a session would start:
// its whole command line, whether it would be confined, and what it may
// run without asking.
type agentPlan struct {
	Command   []string `json:"command"`
	Sandboxed bool     `json:"sandboxed"`
	Allowed   []string `json:"allowed"` // every tool when sandboxed
}

// planAgent is the agent o would start for role, nil when the run goes
// through the bridge.
func (a *App) planAgent(o runOpts, role string) *agentPlan {
	if o.Agent == "" && o.AgentCmd == "" {
		return nil
	}
	mode, err := a.app.SandboxMode(o.Sandbox)
	p := &agentPlan{Sandboxed: err == nil && mode != app.SandboxOff && a.app.SandboxUnavailable() == ""}
	if o.AgentCmd != "" {
		p.Command = []string{"sh", "-c", o.AgentCmd}
		return p
	}
	preset := o.Agent
	if o.Prompts != "" && preset == "claude" {
		preset = agentcli.Predecessor
	}
	opts := a.app.AgentOptions(role)
	opts.Sandboxed = p.Sandboxed
	if p.Sandboxed {
		opts.WritableDirs = nil
	} else {
		p.Allowed = agentcli.Allowed(opts)
		opts.MCP = &agentcli.MCP{Baton: agentBaton(), ConfigFile: "<the session's MCP configuration>", PassEnv: []string{"BATON_SESSION", "BATON_STATE_DIR"}}
	}
	p.Command, _ = agentcli.Command(preset, opts)
	return p
}

// notePlan prints the plan on stderr.
func (a *App) notePlan(p *agentPlan) {
	if p == nil {
		return
	}
	a.notice("[baton run] dry run: the agent would run: %s", shellLine(p.Command))
	if p.Sandboxed {
		a.notice("[baton run] dry run: confined by baton's OS sandbox, the agent may use every tool (the kernel is the boundary)")
		return
	}
	if p.Allowed == nil {
		a.notice("[baton run] dry run: unsandboxed, the command runs as you: baton keeps no allowlist for --agent-cmd")
		return
	}
	a.notice("[baton run] dry run: unsandboxed, the agent may run without asking: %s (the project config's \"agent\": {\"allow\": [...]} sets the list)", strings.Join(p.Allowed, " "))
}

// shellLine is argv as a shell would take it: words with anything but
// plain characters single-quoted.
func shellLine(argv []string) string {
	out := make([]string, len(argv))
	for i, w := range argv {
		if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,@+%") == "" {
			out[i] = w
		} else {
			out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
