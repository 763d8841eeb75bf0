// Package agentcli holds the command lines of the agent CLIs baton run
// starts with --agent (Claude Code, Codex): non-interactive, the prompt on
// stdin, the permissions that fit the boundary (every tool inside baton's
// OS sandbox, an allowlist of the project's tools outside it), and the
// model configured for the role. It also reads their output for the
// progress line and the usage they report, and copies their login files
// into an agent's home. It starts nothing.
package agentcli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Options are what a command line depends on.
type Options struct {
	Model       string // "" for the CLI's default
	MaxTurns    int    // 0 for the CLI's default (Claude Code only)
	TestCommand string // the project's test command, allowed to run
	// WritableDirs are directories outside the working directory the
	// agent must write: the state directory, git's common directory.
	WritableDirs []string
	Role         string // the session's role (the predecessor's preset picks its model by it)
	// MCP, when set, hands the agent baton's MCP server for its session.
	MCP *MCP
	// Sandboxed says the agent runs inside baton's OS sandbox: the kernel
	// is the boundary, so the CLI allows every tool.
	Sandboxed bool
	// Allow are the programs (or Claude Code tool rules) an unsandboxed
	// agent may run without asking; nil means DefaultAllow.
	Allow []string
	// Shell is the shell Claude Code runs its commands in ("" for its
	// own): baton's agent shell, which keeps what they run from acting as
	// the agent. With it the CLI loads no settings files, hooks or MCP
	// servers other than baton's: a branch under review, or code the
	// agent ran, could have written them.
	Shell string
}

// DefaultAllow are the programs an unsandboxed agent may run when the
// project configures none: baton and git, and the build and test tools of
// the projects baton finds (make, Go, Node, Python, Rust, shell scripts).
var DefaultAllow = []string{"baton", "git", "make", "go", "npm", "npx", "node", "python", "python3", "pytest", "pip", "cargo", "sh", "bash"}

// Allowed is the allowlist of o: the configured programs (else
// DefaultAllow), with baton, git and the test command's program always
// in, each once.
func Allowed(o Options) []string {
	list := o.Allow
	if list == nil {
		list = DefaultAllow
	}
	list = append([]string{"baton", "git"}, list...)
	if f := strings.Fields(o.TestCommand); len(f) > 0 {
		list = append(list, f[0])
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range list {
		if p = strings.TrimSpace(p); p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// MCP is how the agent CLI starts `baton mcp` for its session.
type MCP struct {
	// Baton is the absolute path of the baton binary.
	Baton string
	// ConfigFile is the Claude Code MCP configuration (ClaudeConfig),
	// written outside the project, mode 0600, for this session only.
	ConfigFile string
	// PassEnv names the variables of the agent's environment the server
	// inherits (Codex copies only those it is told to: the session's
	// binding, never written on the command line).
	PassEnv []string
}

// ServerName is the name agents know baton's MCP server by: Claude Code
// calls its tools mcp__baton__<tool>.
const ServerName = "baton"

// ClaudeConfig is the --mcp-config file of a Claude Code session: one
// stdio server, `baton mcp`, with the session's binding in its
// environment.
func ClaudeConfig(baton string, env map[string]string) []byte {
	type server struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env,omitempty"`
	}
	b, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]server{ServerName: {Command: baton, Args: []string{"mcp"}, Env: env}}}, "", "  ")
	return append(b, '\n')
}

// preset builds one CLI's command line.
type preset func(Options) []string

var presets = map[string]preset{"claude": claude, "codex": codex, Predecessor: claudePredecessor}

// Names lists the presets.
func Names() []string {
	var n []string
	for k := range presets {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Command returns the argv of preset name for o.
func Command(name string, o Options) ([]string, error) {
	p, ok := presets[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return nil, fmt.Errorf("%q is not an agent preset (presets: %s; run any other CLI with --agent-cmd)", name, strings.Join(Names(), ", "))
	}
	return p(o), nil
}

// claude is Claude Code in print mode: the prompt read from stdin, events
// streamed as JSON lines (stream-json needs --verbose in print mode). In
// baton's sandbox every tool is allowed (bypassPermissions); outside it
// file edits are accepted and Bash is allowed for the allowlist's
// programs — anything else it asks for is denied, as print mode cannot ask.
func claude(o Options) []string {
	mode := "acceptEdits"
	if o.Sandboxed {
		mode = "bypassPermissions"
	}
	args := []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", mode}
	if o.Model != "" {
		args = append(args, "--model", o.Model)
	}
	if o.MaxTurns > 0 {
		args = append(args, "--max-turns", fmt.Sprint(o.MaxTurns))
	}
	if o.MCP != nil {
		args = append(args, "--mcp-config", o.MCP.ConfigFile)
	}
	if o.Shell != "" {
		// no settings file the agent or a branch could write (its home's
		// included), no hooks, no MCP servers but baton's
		b, _ := json.Marshal(map[string]any{"env": map[string]string{shellVar: o.Shell}, "disableAllHooks": true})
		args = append(args, "--setting-sources", "", "--strict-mcp-config", "--settings", string(b))
	}
	if o.Sandboxed {
		return args
	}
	tools := AllowedTools(o)
	if o.MCP != nil {
		tools = append(tools, "mcp__"+ServerName+"__*")
	}
	return append(args, append([]string{"--allowedTools"}, tools...)...)
}

// AllowedTools are the Claude Code tools an unsandboxed session may use
// without asking: reading and editing files, and Bash for each program of
// the allowlist. An entry that is already a tool rule ("WebFetch",
// "Bash(ls:*)") is kept as written.
func AllowedTools(o Options) []string {
	tools := []string{"Read", "Edit", "Write", "Glob", "Grep"}
	for _, p := range Allowed(o) {
		if strings.Contains(p, "(") || (p[0] >= 'A' && p[0] <= 'Z') {
			tools = append(tools, p)
		} else {
			tools = append(tools, "Bash("+p+":*)")
		}
	}
	return tools
}

// Env is what the preset's CLI needs in its environment besides the
// launcher's: inside baton's sandbox, Claude Code is told it runs in one
// (IS_SANDBOX), which it requires to bypass its permissions as root, and
// the shell it runs its commands in.
func Env(name string, o Options) []string {
	var env []string
	if o.Sandboxed && strings.HasPrefix(strings.ToLower(strings.TrimSpace(name)), "claude") {
		env = append(env, "IS_SANDBOX=1")
	}
	if o.Shell != "" && strings.ToLower(strings.TrimSpace(name)) == "claude" {
		env = append(env, shellVar+"="+o.Shell)
	}
	return env
}

// shellVar names the shell Claude Code runs its commands in.
const shellVar = "CLAUDE_CODE_SHELL"

// codex is Codex's exec mode: the prompt read from stdin ("-"), events
// as JSON lines (--json: the log keeps them, and the usage is read from
// them), asking for no approvals. Inside baton's sandbox
// its own sandbox is off (danger-full-access: the kernel's boundary is
// baton's); outside it Codex confines itself to writing the workspace plus
// the state and git directories (--add-dir), with sockets allowed, so that
// the baton its commands run reaches the session's broker.
func codex(o Options) []string {
	args := []string{"codex", "exec", "--json", "--sandbox", "workspace-write", "--color", "never"}
	if o.Sandboxed {
		args[4] = "danger-full-access"
	} else {
		for _, d := range o.WritableDirs {
			args = append(args, "--add-dir", d)
		}
		args = append(args, "-c", "sandbox_workspace_write.network_access=true")
	}
	if o.Model != "" {
		args = append(args, "--model", o.Model)
	}
	if o.MCP != nil {
		args = append(args, codexMCP(o.MCP)...)
	}
	return append(args, "-")
}

// codexMCP configures `baton mcp` for Codex with -c overrides (Codex has
// no MCP configuration file of its own per run): the command, its
// arguments, its tools' approval, and the names of the variables it
// inherits — the values (the session's credential) stay in the
// environment, out of the command line and the session log.
func codexMCP(m *MCP) []string {
	q := func(v string) string { b, _ := json.Marshal(v); return string(b) }
	list := func(vs []string) string {
		out := make([]string, len(vs))
		for i, v := range vs {
			out[i] = q(v)
		}
		return "[" + strings.Join(out, ",") + "]"
	}
	pre := "mcp_servers." + ServerName + "."
	// exec mode asks no approvals: a tool Codex would ask about (merge and
	// reject are destructive) is approved, as baton checks every call
	// against the session's role itself
	args := []string{"-c", pre + "command=" + q(m.Baton), "-c", pre + `args=["mcp"]`, "-c", pre + `default_tools_approval_mode="approve"`}
	if len(m.PassEnv) > 0 {
		args = append(args, "-c", pre+"env_vars="+list(m.PassEnv))
	}
	return args
}

// Latest turns one line of an agent's output into what the progress line
// shows: Claude Code's stream-json events become the text or the tool call
// they carry; other lines are shown as they are. "" means nothing to show.
func Latest(name, line string) string {
	line = strings.TrimSpace(line)
	if name == "codex" && strings.HasPrefix(line, "{") {
		return codexLatest(line)
	}
	if name != "claude" || !strings.HasPrefix(line, "{") {
		return line
	}
	var ev struct {
		Type    string `json:"type"`
		Result  string `json:"result"`
		Message struct {
			Content []struct {
				Type  string          `json:"type"`
				Text  string          `json:"text"`
				Name  string          `json:"name"`
				Input json.RawMessage `json:"input"`
			} `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal([]byte(line), &ev) != nil {
		return line
	}
	switch ev.Type {
	case "result":
		return "result: " + firstLine(ev.Result)
	case "assistant":
		out := ""
		for _, c := range ev.Message.Content {
			switch c.Type {
			case "text":
				out = firstLine(c.Text)
			case "tool_use":
				var in struct {
					Command string `json:"command"`
				}
				_ = json.Unmarshal(c.Input, &in)
				out = c.Name + ": " + firstLine(in.Command)
			}
		}
		return out
	}
	return ""
}

// codexLatest is what one of Codex's --json events shows: the command it
// runs, the MCP tool it calls, its message or its error.
func codexLatest(line string) string {
	var ev struct {
		Type string `json:"type"`
		Item struct {
			Type    string `json:"type"`
			Command string `json:"command"`
			Text    string `json:"text"`
			Message string `json:"message"`
			Server  string `json:"server"`
			Tool    string `json:"tool"`
		} `json:"item"`
	}
	if json.Unmarshal([]byte(line), &ev) != nil {
		return line
	}
	if ev.Type != "item.started" && ev.Type != "item.completed" {
		return ""
	}
	switch ev.Item.Type {
	case "command_execution":
		return "exec: " + firstLine(ev.Item.Command)
	case "mcp_tool_call":
		return "mcp: " + ev.Item.Server + " " + ev.Item.Tool
	case "agent_message":
		return firstLine(ev.Item.Text)
	case "error":
		return "error: " + firstLine(ev.Item.Message)
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Predecessor is the preset that runs Claude Code as the predecessor's
// orchestrator did ('baton run --prompts' with --agent claude uses it).
const Predecessor = "claude-predecessor"

// PredecessorModels are the predecessor's default model per role: opus
// reviews and turns free text into features, sonnet writes code.
var PredecessorModels = map[string]string{
	"INITIALIZER": "sonnet", "BROWNFIELD_INITIALIZER": "opus", "IMPLEMENT": "sonnet", "BUGFIX": "sonnet",
	"REVIEW": "opus", "FIX": "sonnet", "ARCHITECTURE": "opus", "GLOBAL_FIX": "sonnet",
}

// PredecessorMaxTurns is the predecessor's turn limit for a session.
const PredecessorMaxTurns = 200

// predecessorTools are the tools the predecessor allowed: the built-in
// file tools, any Bash command (its prompts run python3, cat, mkdir and the
// project's tests), TodoWrite, and the Playwright MCP server's browser
// tools its reviewers verify UIs with.
var predecessorTools = append([]string{"Read", "Write", "Edit", "Glob", "Grep", "Bash", "TodoWrite"}, playwrightTools()...)

func playwrightTools() []string {
	var out []string
	for _, t := range strings.Fields(`navigate navigate_back snapshot click fill_form type select_option hover drag press_key
		take_screenshot evaluate console_messages network_requests tabs close resize file_upload handle_dialog wait_for install run_code`) {
		out = append(out, "mcp__plugin_playwright_playwright__browser_"+t)
	}
	return out
}

// claudePredecessor is Claude Code in print mode as the predecessor ran it:
// the role's model (the project's configured one, else the predecessor's
// default for the role), its turn limit (the configured max_turns, else
// 200), stream-json events and its tool list. The prompt is read from stdin.
func claudePredecessor(o Options) []string {
	model := o.Model
	if model == "" {
		model = PredecessorModels[strings.ToUpper(o.Role)]
	}
	turns := o.MaxTurns
	if turns <= 0 {
		turns = PredecessorMaxTurns
	}
	args := []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--max-turns", fmt.Sprint(turns)}
	if o.Sandboxed {
		args = append(args, "--permission-mode", "bypassPermissions")
	}
	if model != "" {
		args = append(args, "--model", model)
	}
	tools := append([]string(nil), predecessorTools...)
	if o.MCP != nil {
		args = append(args, "--mcp-config", o.MCP.ConfigFile)
		tools = append(tools, "mcp__"+ServerName+"__*")
	}
	return append(args, append([]string{"--allowedTools"}, tools...)...)
}

// LoginFiles are what the agent CLIs need of a home to log in: copied
// into an agent's own home, never linked.
var LoginFiles = []string{".claude/.credentials.json", ".claude.json", ".codex/auth.json", ".codex/config.toml", ".gitconfig"}

// CopyLogins copies the login files of home that exist into dst, each
// mode 0600 ("" home: none).
func CopyLogins(home, dst string) error {
	if home == "" {
		return nil
	}
	for _, f := range LoginFiles {
		b, err := os.ReadFile(filepath.Join(home, f))
		if err != nil {
			continue // none: the agent's CLI logs in as it can
		}
		to := filepath.Join(dst, f)
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(to, b, 0o600); err != nil {
			return err
		}
	}
	return nil
}
