package agentcli_test

import (
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/agentcli"
)

// playwright is the predecessor's list of Playwright MCP browser tools.
const playwright = "mcp__plugin_playwright_playwright__browser_navigate mcp__plugin_playwright_playwright__browser_navigate_back mcp__plugin_playwright_playwright__browser_snapshot mcp__plugin_playwright_playwright__browser_click mcp__plugin_playwright_playwright__browser_fill_form mcp__plugin_playwright_playwright__browser_type mcp__plugin_playwright_playwright__browser_select_option mcp__plugin_playwright_playwright__browser_hover mcp__plugin_playwright_playwright__browser_drag mcp__plugin_playwright_playwright__browser_press_key mcp__plugin_playwright_playwright__browser_take_screenshot mcp__plugin_playwright_playwright__browser_evaluate mcp__plugin_playwright_playwright__browser_console_messages mcp__plugin_playwright_playwright__browser_network_requests mcp__plugin_playwright_playwright__browser_tabs mcp__plugin_playwright_playwright__browser_close mcp__plugin_playwright_playwright__browser_resize mcp__plugin_playwright_playwright__browser_file_upload mcp__plugin_playwright_playwright__browser_handle_dialog mcp__plugin_playwright_playwright__browser_wait_for mcp__plugin_playwright_playwright__browser_install mcp__plugin_playwright_playwright__browser_run_code"

func TestCommandLines(t *testing.T) {
	cases := []struct {
		name string
		o    agentcli.Options
		want string
	}{
		// unsandboxed: the default allowlist, the test command's program added once
		{"claude", agentcli.Options{}, "claude -p --output-format stream-json --verbose --permission-mode acceptEdits --allowedTools Read Edit Write Glob Grep Bash(baton:*) Bash(git:*) Bash(make:*) Bash(go:*) Bash(npm:*) Bash(npx:*) Bash(node:*) Bash(python:*) Bash(python3:*) Bash(pytest:*) Bash(pip:*) Bash(cargo:*) Bash(sh:*) Bash(bash:*)"},
		{"claude", agentcli.Options{Model: "opus", MaxTurns: 40, TestCommand: "go test ./..."},
			"claude -p --output-format stream-json --verbose --permission-mode acceptEdits --model opus --max-turns 40 --allowedTools Read Edit Write Glob Grep Bash(baton:*) Bash(git:*) Bash(make:*) Bash(go:*) Bash(npm:*) Bash(npx:*) Bash(node:*) Bash(python:*) Bash(python3:*) Bash(pytest:*) Bash(pip:*) Bash(cargo:*) Bash(sh:*) Bash(bash:*)"},
		{"claude", agentcli.Options{TestCommand: "./run-tests.sh -v"},
			"claude -p --output-format stream-json --verbose --permission-mode acceptEdits --allowedTools Read Edit Write Glob Grep Bash(baton:*) Bash(git:*) Bash(make:*) Bash(go:*) Bash(npm:*) Bash(npx:*) Bash(node:*) Bash(python:*) Bash(python3:*) Bash(pytest:*) Bash(pip:*) Bash(cargo:*) Bash(sh:*) Bash(bash:*) Bash(./run-tests.sh:*)"},
		// the project's own allowlist: baton and git stay, tool rules kept as written
		{"Claude", agentcli.Options{TestCommand: "git status", Allow: []string{"deno", "git", "WebFetch", "Bash(ls:*)", " "}},
			"claude -p --output-format stream-json --verbose --permission-mode acceptEdits --allowedTools Read Edit Write Glob Grep Bash(baton:*) Bash(git:*) Bash(deno:*) WebFetch Bash(ls:*)"},
		{"claude", agentcli.Options{Allow: []string{}}, "claude -p --output-format stream-json --verbose --permission-mode acceptEdits --allowedTools Read Edit Write Glob Grep Bash(baton:*) Bash(git:*)"},
		// in baton's sandbox the kernel is the boundary: every tool
		{"claude", agentcli.Options{Sandboxed: true, Allow: []string{"deno"}, MCP: &agentcli.MCP{ConfigFile: "/t/mcp.json"}},
			"claude -p --output-format stream-json --verbose --permission-mode bypassPermissions --mcp-config /t/mcp.json"},
		{"codex", agentcli.Options{Sandboxed: true, WritableDirs: []string{"/p/state"}}, "codex exec --json --sandbox danger-full-access --color never -"},
		{"claude-predecessor", agentcli.Options{Role: "FIX", Sandboxed: true},
			"claude -p --output-format stream-json --verbose --max-turns 200 --permission-mode bypassPermissions --model sonnet --allowedTools Read Write Edit Glob Grep Bash TodoWrite " + playwright},
		{"codex", agentcli.Options{}, "codex exec --json --sandbox workspace-write --color never -c sandbox_workspace_write.network_access=true -"},
		// as the predecessor ran Claude Code: its model per role, 200 turns, its tools
		{"claude-predecessor", agentcli.Options{Role: "REVIEW"},
			"claude -p --output-format stream-json --verbose --max-turns 200 --model opus --allowedTools Read Write Edit Glob Grep Bash TodoWrite " + playwright},
		{"claude-predecessor", agentcli.Options{Role: "BUGFIX", Model: "haiku", MaxTurns: 30},
			"claude -p --output-format stream-json --verbose --max-turns 30 --model haiku --allowedTools Read Write Edit Glob Grep Bash TodoWrite " + playwright},
		{"codex", agentcli.Options{Model: "gpt-5-codex", MaxTurns: 9, WritableDirs: []string{"/p/state", `/p/a "b"`}},
			`codex exec --json --sandbox workspace-write --color never --add-dir /p/state --add-dir /p/a "b" -c sandbox_workspace_write.network_access=true --model gpt-5-codex -`},
	}
	for _, c := range cases {
		argv, err := agentcli.Command(c.name, c.o)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(argv, " "); got != c.want {
			t.Errorf("Command(%s, %+v) =\n%s\nwant\n%s", c.name, c.o, got, c.want)
		}
	}
	if _, err := agentcli.Command("aider", agentcli.Options{}); err == nil || !strings.Contains(err.Error(), "claude, claude-predecessor, codex") || !strings.Contains(err.Error(), "--agent-cmd") {
		t.Errorf("an unknown preset: %v, want the presets and --agent-cmd named", err)
	}
}

func TestLatest(t *testing.T) {
	cases := []struct{ preset, line, want string }{
		{"claude", `{"type":"system","subtype":"init"}`, ""},
		{"claude", `{"type":"assistant","message":{"content":[{"type":"text","text":"Reading the spec\nmore"}]}}`, "Reading the spec"},
		{"claude", `{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"baton session end -o SUCCESS"}}]}}`, "Bash: baton session end -o SUCCESS"},
		{"claude", `{"type":"result","subtype":"success","result":"All done"}`, "result: All done"},
		{"claude", "plain text", "plain text"},
		{"claude", "{not json", "{not json"},
		{"codex", `  exec baton features list  `, "exec baton features list"},
		{"codex", `{"type":"item.started","item":{"id":"item_2","type":"command_execution","command":"bash -lc 'baton context'\nmore","status":"in_progress"}}`, "exec: bash -lc 'baton context'"},
		{"codex", `{"type":"item.completed","item":{"type":"mcp_tool_call","server":"baton","tool":"context"}}`, "mcp: baton context"},
		{"codex", `{"type":"item.completed","item":{"type":"agent_message","text":"All done"}}`, "All done"},
		{"codex", `{"type":"item.completed","item":{"type":"error","message":"stream disconnected"}}`, "error: stream disconnected"},
		{"codex", `{"type":"turn.completed","usage":{"input_tokens":600}}`, ""},
		{"codex", `{broken`, "{broken"},
		{"", "", ""},
	}
	for _, c := range cases {
		if got := agentcli.Latest(c.preset, c.line); got != c.want {
			t.Errorf("Latest(%s, %q) = %q, want %q", c.preset, c.line, got, c.want)
		}
	}
}

func TestEnv(t *testing.T) {
	if got := agentcli.Env("claude", agentcli.Options{Sandboxed: true}); strings.Join(got, " ") != "IS_SANDBOX=1" {
		t.Errorf("claude in baton's sandbox: %v", got)
	}
	for _, c := range []struct {
		name string
		o    agentcli.Options
	}{{"claude", agentcli.Options{}}, {"codex", agentcli.Options{Sandboxed: true}}} {
		if got := agentcli.Env(c.name, c.o); got != nil {
			t.Errorf("Env(%s, %+v) = %v, want nothing", c.name, c.o, got)
		}
	}
}

func TestMCPCommandLines(t *testing.T) {
	m := &agentcli.MCP{Baton: "/opt/bin/baton", ConfigFile: "/tmp/baton-mcp-1/claude.json", PassEnv: []string{"BATON_SESSION", "BATON_STATE_DIR"}}
	cases := []struct{ name, want string }{
		{"claude", "claude -p --output-format stream-json --verbose --permission-mode acceptEdits --mcp-config /tmp/baton-mcp-1/claude.json --allowedTools Read Edit Write Glob Grep Bash(baton:*) Bash(git:*) mcp__baton__*"},
		{"codex", `codex exec --json --sandbox workspace-write --color never -c sandbox_workspace_write.network_access=true -c mcp_servers.baton.command="/opt/bin/baton" -c mcp_servers.baton.args=["mcp"] -c mcp_servers.baton.default_tools_approval_mode="approve" -c mcp_servers.baton.env_vars=["BATON_SESSION","BATON_STATE_DIR"] -`},
	}
	for _, c := range cases {
		argv, err := agentcli.Command(c.name, agentcli.Options{MCP: m, Allow: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(argv, " "); got != c.want {
			t.Errorf("Command(%s) with MCP =\n%s\nwant\n%s", c.name, got, c.want)
		}
		if strings.Contains(strings.Join(argv, " "), "bts1_") {
			t.Errorf("%s: a credential on the command line: %v", c.name, argv)
		}
	}
}

func TestClaudeConfig(t *testing.T) {
	got := string(agentcli.ClaudeConfig("/opt/bin/baton", map[string]string{"BATON_SESSION": "bts1_x"}))
	want := `{
  "mcpServers": {
    "baton": {
      "command": "/opt/bin/baton",
      "args": [
        "mcp"
      ],
      "env": {
        "BATON_SESSION": "bts1_x"
      }
    }
  }
}
`
	if got != want {
		t.Errorf("ClaudeConfig =\n%s\nwant\n%s", got, want)
	}
}

// TestClaudeShell: with baton's agent shell, Claude Code is told to run
// its commands there, in its environment and as a command-line setting,
// and loads no project settings or MCP servers a branch could carry.
func TestClaudeShell(t *testing.T) {
	o := agentcli.Options{Sandboxed: true, Shell: "/run/x/baton-agent-shell/bash", MCP: &agentcli.MCP{Baton: "/b", ConfigFile: "/c.json"}}
	argv, err := agentcli.Command("claude", o)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(argv, " ")
	for _, want := range []string{"--setting-sources  --strict-mcp-config", `--settings {"disableAllHooks":true,"env":{"CLAUDE_CODE_SHELL":"/run/x/baton-agent-shell/bash"}}`, "--mcp-config /c.json"} {
		if !strings.Contains(line, want) {
			t.Errorf("claude's command line lacks %q: %s", want, line)
		}
	}
	if env := strings.Join(agentcli.Env("claude", o), " "); !strings.Contains(env, "CLAUDE_CODE_SHELL=/run/x/baton-agent-shell/bash") {
		t.Errorf("claude's environment lacks its shell: %s", env)
	}
	o.Shell = ""
	if argv, _ := agentcli.Command("claude", o); strings.Contains(strings.Join(argv, " "), "--setting-sources") {
		t.Errorf("without the agent shell, claude's command line keeps the project's settings: %v", argv)
	}
	if env := agentcli.Env("codex", agentcli.Options{Shell: "/x"}); len(env) != 0 {
		t.Errorf("codex's environment = %v, want nothing of Claude Code's", env)
	}
}
