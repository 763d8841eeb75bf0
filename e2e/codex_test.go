package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/sandbox"
)

// TestCodexDrivesSessions runs the real Codex CLI under 'baton run --agent
// codex' for one IMPLEMENT and one REVIEW session, against a scripted
// Responses API server on the loopback interface (a model provider named
// in CODEX_HOME's config.toml). The agent calls baton and git through
// Codex's exec_command tool, inside Codex's workspace-write sandbox with the
// directories the preset adds, and through baton's MCP server (the -c
// overrides of the preset: Codex lists its tools, the session role's, as
// the mcp__baton namespace). It runs when BATON_CODEX_BIN names a Codex
// binary ('make agent-e2e' installs one from npm).
func TestCodexDrivesSessions(t *testing.T) { codexDrivesSessions(t, false) }

// TestCodexDrivesSessionsSandboxed is the same under baton run --sandbox:
// Codex's own sandbox is off (danger-full-access) inside baton's, and the
// agent reaches the state only through baton's broker, by its shell.
func TestCodexDrivesSessionsSandboxed(t *testing.T) {
	if sandbox.ABI() < sandbox.MinABI {
		t.Skip("no OS sandbox here (Landlock, Linux 6.2 or later)")
	}
	codexDrivesSessions(t, true)
}

func codexDrivesSessions(t *testing.T, sandboxed bool) {
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
	// the model provider's base URL is also named in the environment: a
	// confined agent's network reaches a model API on the launcher's
	// loopback only when a *_BASE_URL variable names it
	p := newAgentProject(t, "codex", bin, []string{"SCRIPTED_API_KEY=sk-scripted-test", "OPENAI_BASE_URL=http://" + srv.addr + "/v1"},
		`{"agent": {"model": "gpt-scripted-default", "models": {"REVIEW": "gpt-scripted-review"}}}`)
	t.Cleanup(func() {
		if t.Failed() {
			p.logSessions()
		}
	})
	codexHome(t, p, srv.addr)
	args, mode := []string{"run", "--agent", "codex", "--max-sessions", "3", "--timeout", "5m"}, "workspace-write"
	if sandboxed {
		args, mode = append(args, "--sandbox"), "danger-full-access"
	} else {
		args = append(args, "--sandbox=off")
	}
	out, err := p.try(batonBin, args...)
	t.Logf("baton run:\n%s", out)
	srv.check(t)
	if err != nil {
		t.Fatalf("baton run --agent codex: %v", err)
	}
	p.checkDone(t)
	p.checkCost(t, "codex")
	for _, n := range []string{"2", "3"} {
		log, err := os.ReadFile(filepath.Join(p.dir, ".baton", "logs", "session-"+n+".log"))
		// npm's codex command is a Node wrapper: baton starts the native
		// binary it names, so that Codex's MCP server is the agent's own
		if err != nil || !regexp.MustCompile(`=== command: \S*/bin/codex exec --json --sandbox `+mode).Match(log) || !strings.Contains(string(log), "=== exit: 0") {
			t.Errorf("session-%s.log lacks the command or the exit: %v\n%s", n, err, log)
		}
	}
}

// codexHome writes Codex's home, ~/.codex, naming the scripted server at
// addr as its model provider: a confined agent gets a copy of its
// configuration in a home of its own.
func codexHome(t *testing.T, p *agentProject, addr string) {
	home := filepath.Join(envOf(p.env, "HOME"), ".codex")
	cfg := fmt.Sprintf("model_provider = \"scripted\"\n\n[model_providers.scripted]\nname = \"scripted\"\nbase_url = \"http://%s/v1\"\nwire_api = \"responses\"\nenv_key = \"SCRIPTED_API_KEY\"\n", addr)
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

// scriptedResponses is a Responses API server (streaming) that plays each
// role's script of shell commands, one exec_command call per request.
type scriptedResponses struct {
	addr    string
	mu      sync.Mutex
	scripts map[string][]string
	models  map[string]string
	seen    map[string]int
	outputs []string
	mcp     map[string]string // role -> the tools of the mcp__baton namespace
	stall   string            // the role whose requests are never answered
}

// envOf is the value of key in env.
func envOf(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

func newScriptedResponses(t *testing.T) *scriptedResponses {
	s := &scriptedResponses{models: map[string]string{}, seen: map[string]int{}, mcp: map[string]string{}, scripts: map[string][]string{
		// "mcp TOOL ARGS" calls baton's MCP server (Codex's mcp__baton
		// namespace), anything else is a shell command
		"IMPLEMENT": {
			`mcp context {"budget":2000}`,
			`mcp create_branch {"name":"feature/f001"}`,
			"git switch feature/f001",
			`printf '#!/bin/sh\necho hello\n' > hello.sh`,
			"git add hello.sh && git commit -q -m 'Implement F001: hello.sh prints hello'",
			`mcp session_end {"outcome":"READY_FOR_REVIEW","summary":"Implemented F001: hello.sh prints hello"}`,
		},
		"REVIEW": {
			"baton context --budget 2000",
			"git switch main",
			`mcp add_review {"verdict":"PASS","summary":"hello.sh prints hello: verified","features":["F001"],"branch":"feature/f001"}`,
			`mcp merge {}`,
			"baton reviews get-last --field verdict",
			`mcp session_end {"outcome":"SUCCESS","summary":"R1: PASS, merged"}`,
		},
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	hs := &http.Server{Handler: http.HandlerFunc(s.serve)}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return s
}

func (s *scriptedResponses) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/v1/responses" {
		http.NotFound(w, r)
		return
	}
	req := gjson.ParseBytes(body)
	role, results := "", 0
	req.Get("input").ForEach(func(_, it gjson.Result) bool {
		if m := promptRole.FindStringSubmatch(it.Get("content").Raw); m != nil && it.Get("role").String() == "user" && role == "" {
			role = m[1]
		}
		if it.Get("type").String() == "function_call_output" {
			results++
			s.mu.Lock()
			s.outputs = append(s.outputs, it.Get("output").String())
			s.mu.Unlock()
		}
		return true
	})
	s.mu.Lock()
	script := s.scripts[role]
	if role != "" {
		s.models[role] = req.Get("model").String()
		s.seen[role]++
		var offered []string
		req.Get(`tools.#(name=="mcp__baton").tools.#.name`).ForEach(func(_, n gjson.Result) bool { offered = append(offered, n.String()); return true })
		s.mcp[role] = " " + strings.Join(offered, " ") + " "
	}
	stall := role != "" && role == s.stall
	s.mu.Unlock()
	if stall {
		hang(r)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	bw := bufio.NewWriter(w)
	ev := func(data string) {
		fmt.Fprintf(bw, "event: %s\ndata: %s\n\n", gjson.Get(data, "type").String(), data)
	}
	id := fmt.Sprintf("resp_%s_%d", strings.ToLower(role), results)
	ev(`{"type":"response.created","response":{"id":"` + id + `"}}`)
	if results < len(script) {
		ev(functionCall(id, script[results]))
	} else {
		ev(`{"type":"response.output_item.done","item":{"type":"message","role":"assistant","id":"msg_` + id + `","content":[{"type":"output_text","text":"Done: the session is ended."}]}}`)
	}
	ev(`{"type":"response.completed","response":{"id":"` + id + `","usage":{"input_tokens":100,"input_tokens_details":null,"output_tokens":20,"output_tokens_details":null,"total_tokens":120}}}`)
	_ = bw.Flush()
}

// functionCall is the output item that calls step: a tool of baton's MCP
// server ("mcp TOOL ARGS", in the namespace Codex lists it under) or a
// shell command through exec_command.
func functionCall(id, step string) string {
	name, ns, args := "exec_command", "", ""
	if rest, ok := strings.CutPrefix(step, "mcp "); ok {
		name, args, _ = strings.Cut(rest, " ")
		ns = `"namespace":"mcp__baton",`
	} else {
		b, _ := json.Marshal(map[string]string{"cmd": step})
		args = string(b)
	}
	argStr, _ := json.Marshal(args)
	return fmt.Sprintf(`{"type":"response.output_item.done","item":{"type":"function_call","id":"fc_%s","call_id":"call_%s",%s"name":%q,"arguments":%s}}`, id, id, ns, name, argStr)
}

// logOutputs logs what the agent's commands printed, each once.
func (s *scriptedResponses) logOutputs(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for _, o := range s.outputs {
		if !seen[o] {
			seen[o] = true
			t.Logf("exec_command output: %s", o)
		}
	}
}

// check fails the test if a script was not played or a role did not get
// its configured model.
func (s *scriptedResponses) check(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for role, script := range s.scripts {
		if s.seen[role] < len(script)+1 {
			t.Errorf("%s: %d requests, want %d (one per tool call and a closing one)", role, s.seen[role], len(script)+1)
		}
	}
	if s.models["IMPLEMENT"] != "gpt-scripted-default" || s.models["REVIEW"] != "gpt-scripted-review" {
		t.Errorf("models asked for: %v, want the configured default for IMPLEMENT and REVIEW's own", s.models)
	}
	checkOffered(t, s.mcp)
}
