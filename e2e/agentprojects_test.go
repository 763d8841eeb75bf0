package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/sandbox"
)

// The real agent CLIs on projects that are not Go: a Node project whose
// tests run with npm test (node --test, no dependency to download) and a
// Python one tested with pytest. The scripted model server makes the
// IMPLEMENT agent write the code with a tool call and run the project's
// tests with another; the tests' output must reach the server in the tool
// result, and pass. Under --sandbox the agent also tries a host outside
// the egress policy, through the proxy and past it: both are refused, and
// the proxy's refusal is in the audit log with the session.

// project is a small project of one language.
type project struct {
	name    string
	files   map[string]string // the project before the session
	code    string            // the file the agent writes
	content string            // what it writes there
	test    string            // the project's test command
	passed  *regexp.Regexp    // the test command's output when the tests pass
	tools   func(t *testing.T) map[string]string
}

var projects = []project{
	{
		name: "node",
		files: map[string]string{
			"package.json":       `{"name": "greeter", "version": "1.0.0", "private": true, "scripts": {"test": "node --test"}}` + "\n",
			"test/greet.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\nconst { greet } = require('../greet.js');\n\ntest('greet says hello', () => {\n  assert.strictEqual(greet('Ada'), 'hello Ada');\n});\n",
			".gitignore":         "node_modules/\n",
			"README.md":          "greet(name) says hello. Test: npm test\n",
		},
		code:    "greet.js",
		content: "exports.greet = (name) => 'hello ' + name;\n",
		test:    "npm test",
		passed:  regexp.MustCompile(`(?m)^# pass 1\s*$[\s\S]*^# fail 0\s*$`),
		tools:   func(*testing.T) map[string]string { return nil },
	},
	{
		name: "python",
		files: map[string]string{
			"test_greet.py": "from greet import greet\n\n\ndef test_greet():\n    assert greet(\"Ada\") == \"hello Ada\"\n",
			".gitignore":    "__pycache__/\n.pytest_cache/\n",
			"README.md":     "greet(name) says hello. Test: python3 -m pytest\n",
		},
		code:    "greet.py",
		content: "def greet(name):\n    return \"hello \" + name\n",
		test:    "python3 -m pytest -q",
		passed:  regexp.MustCompile(`\b1 passed\b`),
		tools:   pytestTools,
	},
}

// pytestTools puts first on the agent's PATH a python3 that has pytest:
// the one on PATH, else the system's (Debian's python3-pytest).
func pytestTools(t *testing.T) map[string]string {
	var tried []string
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		path, err := exec.LookPath(py)
		if err != nil {
			continue
		}
		tried = append(tried, path)
		if exec.Command(path, "-m", "pytest", "--version").Run() == nil {
			return map[string]string{"python3": path}
		}
	}
	t.Skipf("no python3 here has pytest (tried %v): install it (Debian: apt-get install python3-pytest; .ci/run does) to run the Python project", tried)
	return nil
}

// act is one tool call of a scripted session, which each CLI's script
// makes its own: a shell command, a file written, a tool of baton's MCP
// server.
type act struct {
	sh            string
	write, text   string
	mcp, mcpInput string
}

// claudeSteps is acts as Claude Code's tool calls.
func claudeSteps(acts []act) []step {
	var out []step
	for _, a := range acts {
		switch {
		case a.write != "":
			out = append(out, step{"Write", map[string]any{"file_path": a.write, "content": a.text}})
		case a.mcp != "":
			var in map[string]any
			_ = json.Unmarshal([]byte(a.mcpInput), &in)
			out = append(out, step{"mcp__baton__" + a.mcp, in})
		default:
			out = append(out, step{"Bash", map[string]any{"command": a.sh, "description": "run " + strings.Fields(a.sh)[0]}})
		}
	}
	return out
}

// codexSteps is acts as Codex's: a file is written by its shell.
func codexSteps(acts []act) []string {
	var out []string
	for _, a := range acts {
		switch {
		case a.write != "":
			out = append(out, fmt.Sprintf("cat > %s <<'EOF'\n%sEOF", a.write, a.text))
		case a.mcp != "":
			out = append(out, "mcp "+a.mcp+" "+a.mcpInput)
		default:
			out = append(out, a.sh)
		}
	}
	return out
}

// blockedHost is outside every egress policy of these tests.
const blockedHost = "registry.blocked.test"

// implementActs is the IMPLEMENT session of pr: branch, code, tests,
// commit; confined, a try of the network outside the policy.
func implementActs(pr project, sandboxed bool) []act {
	acts := []act{
		{mcp: "create_branch", mcpInput: `{"name":"feature/f001"}`},
		{sh: "git switch feature/f001"},
		{write: pr.code, text: pr.content},
		{sh: pr.test},
	}
	if sandboxed {
		acts = append(acts, act{sh: "curl -s -m 5 -o /dev/null -w 'proxy: %{http_code}\\n' http://" + blockedHost + "/pkg; " +
			"curl -s -m 5 --noproxy '*' http://1.1.1.1/ >/dev/null 2>&1 && echo 'direct: ESCAPED' || echo 'direct: BLOCKED'"})
	}
	return append(acts,
		act{sh: "git add " + pr.code + " && git commit -q -m 'Implement F001: greet says hello'"},
		act{mcp: "session_end", mcpInput: `{"outcome":"READY_FOR_REVIEW","summary":"Implemented F001: greet says hello, tests pass"}`},
	)
}

// cliRun is one agent CLI's part of these tests.
type cliRun struct {
	name, binEnv string
	// serve starts the scripted server playing IMPLEMENT's acts (or
	// stalling IMPLEMENT) and returns what the project needs of it
	serve func(t *testing.T, acts []act, stall bool) (served, []string, string)
	home  func(t *testing.T, p *agentProject, addr string)
}

// served is a scripted server as these tests read it.
type served interface {
	address() string
	results() []string
	requests(role string) int
}

func (s *scriptedAPI) address() string { return s.addr }
func (s *scriptedAPI) results() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.outputs...)
}
func (s *scriptedAPI) requests(role string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[role]
}

func (s *scriptedResponses) address() string { return s.addr }
func (s *scriptedResponses) results() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.outputs...)
}
func (s *scriptedResponses) requests(role string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[role]
}

var cliRuns = []cliRun{
	{name: "claude", binEnv: "BATON_CLAUDE_BIN",
		serve: func(t *testing.T, acts []act, stall bool) (served, []string, string) {
			srv := newScriptedAPI(t)
			srv.scripts = map[string][]step{"IMPLEMENT": claudeSteps(acts)}
			if stall {
				srv.stall = "IMPLEMENT"
			}
			return srv, []string{"ANTHROPIC_BASE_URL=http://" + srv.addr, "ANTHROPIC_API_KEY=sk-scripted-test", "DISABLE_TELEMETRY=1",
				"DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}, `"model": "claude-scripted-default", "max_turns": 20`
		},
		home: func(*testing.T, *agentProject, string) {}},
	{name: "codex", binEnv: "BATON_CODEX_BIN",
		serve: func(t *testing.T, acts []act, stall bool) (served, []string, string) {
			srv := newScriptedResponses(t)
			srv.scripts = map[string][]string{"IMPLEMENT": codexSteps(acts)}
			if stall {
				srv.stall = "IMPLEMENT"
			}
			return srv, []string{"SCRIPTED_API_KEY=sk-scripted-test", "OPENAI_BASE_URL=http://" + srv.addr + "/v1"}, `"model": "gpt-scripted-default"`
		},
		home: codexHome},
}

// agentOnProject makes pr's project for cli, the scripted server playing
// acts (or stalling), with extra in .baton/config.
func agentOnProject(t *testing.T, cli cliRun, pr project, acts []act, stall bool, extra string) (*agentProject, served) {
	bin := os.Getenv(cli.binEnv)
	if bin == "" {
		t.Skipf("%s is not set: 'make agent-e2e' installs the %s CLI and runs this test", cli.binEnv, cli.name)
	}
	tools := map[string]string{cli.name: bin}
	for k, v := range pr.tools(t) {
		tools[k] = v
	}
	srv, env, agent := cli.serve(t, acts, stall)
	p := newAgentProjectOf(t, projectSetup{tools: tools, env: env, files: pr.files,
		config:  `{"agent": {` + agent + `}` + extra + `}`,
		feature: `[{"id":"F001","name":"Greeting","description":"greet(name) says hello name","steps":["run ` + pr.test + `","see the test pass"]}]`})
	cli.home(t, p, srv.address())
	t.Cleanup(func() {
		if t.Failed() {
			p.logSessions()
			for _, r := range srv.results() {
				t.Logf("tool result: %s", r)
			}
		}
	})
	return p, srv
}

// TestAgentsOnProjects runs each agent CLI's IMPLEMENT session on each
// project, unconfined and under --sandbox.
func TestAgentsOnProjects(t *testing.T) {
	for _, cli := range cliRuns {
		for _, pr := range projects {
			for _, sandboxed := range []bool{false, true} {
				mode := map[bool]string{false: "plain", true: "sandbox"}[sandboxed]
				t.Run(cli.name+"/"+pr.name+"/"+mode, func(t *testing.T) {
					if sandboxed && sandbox.ABI() < sandbox.MinABI {
						t.Skip("no OS sandbox here (Landlock, Linux 6.2 or later)")
					}
					implementOnProject(t, cli, pr, sandboxed)
				})
			}
		}
	}
}

func implementOnProject(t *testing.T, cli cliRun, pr project, sandboxed bool) {
	p, srv := agentOnProject(t, cli, pr, implementActs(pr, sandboxed), false, "")
	args := []string{"run", "--agent", cli.name, "--max-sessions", "1", "--timeout", "3m"}
	if sandboxed {
		args = append(args, "--sandbox")
	} else {
		args = append(args, "--sandbox=off")
	}
	out, err := p.try(batonBin, args...)
	t.Logf("baton run:\n%s", out)
	if code := exitCode(err); code != 7 {
		t.Fatalf("baton run: exit %d (%v), want 7 (--max-sessions reached)", code, err)
	}
	if n, want := srv.requests("IMPLEMENT"), len(implementActs(pr, sandboxed))+1; n < want {
		t.Errorf("IMPLEMENT: %d requests, want %d (one per tool call and a closing one)", n, want)
	}
	all := strings.Join(srv.results(), "\n")
	if !pr.passed.MatchString(all) {
		t.Errorf("the output of %q (its tests passing) did not reach the model", pr.test)
	}
	s := gjson.Parse(p.run(batonBin, "--json", "progress", "get-session", "2"))
	if s.Get("outcome").String() != "READY_FOR_REVIEW" {
		t.Errorf("session 2: %s", s.Raw)
	}
	if b, err := exec.Command("git", "-C", p.dir, "show", "feature/f001:"+pr.code).Output(); err != nil || string(b) != pr.content {
		t.Errorf("feature/f001 lacks the agent's %s: %v %q", pr.code, err, b)
	}
	p.checkCost(t, cli.name, "2")
	if sandboxed {
		checkRefused(t, p, all)
	}
}

// checkRefused checks that the confined agent's tries of the network
// outside the policy failed, and that the proxy's refusal was logged
// with the session.
func checkRefused(t *testing.T, p *agentProject, results string) {
	if !strings.Contains(results, "proxy: 403") || !strings.Contains(results, "direct: BLOCKED") {
		t.Errorf("the agent's tries of %s and of a direct connection were not both refused", blockedHost)
	}
	log := p.run(batonBin, "log")
	if !regexp.MustCompile(`session 2 \(IMPLEMENT\): a connection to ` + regexp.QuoteMeta(blockedHost) + `:80 \(GET\) was refused`).MatchString(log) {
		t.Errorf("the audit log lacks the refusal of %s with session 2:\n%s", blockedHost, log)
	}
}

// TestAgentsStall runs each agent CLI against a model server that never
// answers: the session is ended at the stall timeout, long before its
// timeout, as ERROR with failure signature stalled.
func TestAgentsStall(t *testing.T) {
	for _, cli := range cliRuns {
		t.Run(cli.name, func(t *testing.T) {
			p, srv := agentOnProject(t, cli, projects[0], nil, true, `, "stall_timeout": "4s", "max_error_retries": 0`)
			out, err := p.try(batonBin, "run", "--agent", cli.name, "--max-sessions", "2", "--timeout", "3m")
			t.Logf("baton run:\n%s", out)
			if code := exitCode(err); code != 3 {
				t.Errorf("baton run: exit %d (%v), want 3 (stopped for a person)", code, err)
			}
			if !strings.Contains(out, "IMPLEMENT session 2 stalled: no output for 4s") {
				t.Errorf("the run did not say session 2 stalled")
			}
			if srv.requests("IMPLEMENT") == 0 {
				t.Errorf("the agent never asked the model: it stalled before it started")
			}
			s := gjson.Parse(p.run(batonBin, "--json", "progress", "get-session", "2"))
			if s.Get("outcome").String() != "ERROR" || s.Get("failure_signature.code").String() != "stalled" {
				t.Errorf("session 2: %s", s.Raw)
			}
			if b, _ := os.ReadFile(filepath.Join(p.dir, ".baton", "logs", "session-2.log")); !strings.Contains(string(b), "=== command: ") {
				t.Errorf("session-2.log lacks the agent's command:\n%s", b)
			}
		})
	}
}
