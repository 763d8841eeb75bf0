package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The real agent CLIs on a runner: 'baton run --agent claude' and
// '--agent codex' with every lane on the runner of runners_test.go (a
// real sshd, a second OS user). The CLIs are the runner's own (on the
// runner user's PATH), logged in as that user (its ~/.codex, copied into
// each agent's home), and reach the scripted model servers on loopback
// through the runner's egress proxy; baton's MCP server is the runner's
// baton, started by the CLI from the configuration the runner's relay
// wrote, and its calls reach the launcher's broker through the relay as
// the agent's own.

// give writes a file of the runner user's, making its directories.
func (r *sshRunner) give(t *testing.T, rel, content string, mode os.FileMode) {
	t.Helper()
	path := filepath.Join(r.home, rel)
	for d := filepath.Dir(path); d != r.home; d = filepath.Dir(d) {
		defer os.Chown(d, r.uid, r.uid) //nolint:errcheck // the user's group has its id on this machine
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, r.uid, r.uid); err != nil {
		t.Fatal(err)
	}
}

// linkTool puts target on the runner user's PATH as name.
func (r *sshRunner) linkTool(t *testing.T, name, target string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(r.home, "bin", name)); err != nil {
		t.Fatal(err)
	}
}

// runnerAgentProject is the agent project of claude_test.go with every
// lane on runner r (two slots there, none here), committing as the
// project's configured identity (the runner's clone carries it).
func runnerAgentProject(t *testing.T, r *sshRunner, name, bin string, env []string, agent string) *agentProject {
	t.Helper()
	config := fmt.Sprintf(`{"agents": 2, "agent": %s, "runners": [{"name": "box1", "ssh": "box1", "slots": 2, "ssh_config": %q}, {"name": "local", "slots": 0}]}`, agent, r.config)
	p := newAgentProject(t, name, bin, env, config)
	p.run("git", "config", "user.name", "Agent")
	p.run("git", "config", "user.email", "agent@example.test")
	t.Cleanup(func() {
		if t.Failed() {
			p.logSessions()
		}
	})
	return p
}

// runPresetOnRunner checks runner r for preset, runs the project's two
// agent sessions there with it to DONE, and checks what the model server
// saw, the sessions, their cost and their logs (the preset's command as
// the launcher built it), and that the runner keeps nothing of them.
func runPresetOnRunner(t *testing.T, r *sshRunner, p *agentProject, preset string, srv interface{ check(*testing.T) }, command string) {
	t.Helper()
	if check, err := p.try(batonBin, "runner", "check", "box1", "--agent", preset); err != nil || !strings.Contains(check, "OK:") {
		t.Fatalf("baton runner check box1 --agent %s: %v\n%s", preset, err, check)
	}
	out, err := p.try(batonBin, "run", "--agent", preset, "--max-sessions", "3", "--timeout", "5m")
	t.Logf("baton run:\n%s", out)
	srv.check(t)
	if err != nil {
		t.Fatalf("baton run --agent %s on a runner: %v", preset, err)
	}
	p.checkDone(t)
	p.checkCost(t, preset)
	if n := strings.Count(out, "started on box1"); n != 2 {
		t.Errorf("%d sessions started on box1, want both agent sessions:\n%s", n, out)
	}
	for _, n := range []string{"2", "3"} {
		log, err := os.ReadFile(filepath.Join(p.dir, ".baton", "logs", "session-"+n+".log"))
		if err != nil || !strings.Contains(string(log), "=== command: "+command) || !strings.Contains(string(log), "=== exit: 0") {
			t.Errorf("session-%s.log lacks the command %q or the exit: %v\n%s", n, command, err, log)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(r.home, ".cache", "baton", "runner", "*", "session-*")); len(left) != 0 {
		t.Errorf("the runner keeps lane places after the run: %v", left)
	}
}

// TestRunnerClaudeCode runs Claude Code on the runner for one IMPLEMENT
// and one REVIEW session to DONE: its MCP server, its Bash tool's baton
// and git, its usage in the launcher's status; a command it runs cannot
// write into its descriptors (its pipe to baton's MCP server) there.
func TestRunnerClaudeCode(t *testing.T) {
	bin := os.Getenv("BATON_CLAUDE_BIN")
	if bin == "" {
		t.Skip("BATON_CLAUDE_BIN is not set: 'make agent-e2e' installs Claude Code and runs this test")
	}
	srv := newScriptedAPI(t)
	srv.sandboxed = true // the project's untracked hook is not in the clone
	srv.plantInjection()
	env := []string{"ANTHROPIC_BASE_URL=http://" + srv.addr, "ANTHROPIC_API_KEY=sk-scripted-test",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
	r := startRunner(t, strings.Join(env, "\n")+"\n")
	r.linkTool(t, "claude", bin)
	p := runnerAgentProject(t, r, "claude", bin, env, `{"model": "claude-scripted-default", "max_turns": 20, "models": {"REVIEW": "claude-scripted-review"}}`)
	srv.proj = p.dir
	runPresetOnRunner(t, r, p, "claude", srv, "claude -p --output-format stream-json --verbose --permission-mode bypassPermissions")
	srv.checkInjection(t)
	log, _ := os.ReadFile(filepath.Join(p.dir, ".baton", "logs", "session-2.log"))
	cfg := regexp.MustCompile(`--mcp-config (\S+)`).FindSubmatch(log)
	if cfg == nil || !strings.HasPrefix(string(cfg[1]), filepath.Join(r.home, ".cache", "baton", "runner")) {
		t.Errorf("the MCP configuration %q is not the runner's (in its lane's place)", cfg)
	}
}

// TestRunnerCodex runs Codex on the runner for one IMPLEMENT and one
// REVIEW session to DONE, logged in as the runner's user (its
// ~/.codex/config.toml names the scripted provider).
func TestRunnerCodex(t *testing.T) {
	bin := os.Getenv("BATON_CODEX_BIN")
	if bin == "" {
		t.Skip("BATON_CODEX_BIN is not set: 'make agent-e2e' installs Codex and runs this test")
	}
	srv := newScriptedResponses(t)
	t.Cleanup(func() {
		if t.Failed() {
			srv.logOutputs(t)
		}
	})
	env := []string{"SCRIPTED_API_KEY=sk-scripted-test", "OPENAI_BASE_URL=http://" + srv.addr + "/v1"}
	r := startRunner(t, strings.Join(env, "\n")+"\n")
	r.linkTool(t, "codex", bin)
	r.give(t, ".codex/config.toml", fmt.Sprintf("model_provider = \"scripted\"\n\n[model_providers.scripted]\nname = \"scripted\"\nbase_url = \"http://%s/v1\"\nwire_api = \"responses\"\nenv_key = \"SCRIPTED_API_KEY\"\n", srv.addr), 0o600)
	p := runnerAgentProject(t, r, "codex", bin, env, `{"model": "gpt-scripted-default", "models": {"REVIEW": "gpt-scripted-review"}}`)
	runPresetOnRunner(t, r, p, "codex", srv, "codex exec --json --sandbox danger-full-access")
}
