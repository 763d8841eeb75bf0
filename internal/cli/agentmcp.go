package cli

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/baton-cli/baton/internal/agentcli"
	"github.com/baton-cli/baton/internal/broker"
	"github.com/baton-cli/baton/internal/errs"
)

// agentMCP hands a preset's agent baton's MCP server for its session:
// the server sends its calls to the session's broker at sock, and holds
// no credential. Claude Code reads a --mcp-config file, written into a
// fresh private directory (mode 0700) under base, else outside the
// project (the system's temporary directory); cleanup removes it when the
// session's agent has exited. Codex is told by -c overrides which
// variables its server inherits.
func agentMCP(preset, sock, base, stateDir, cwd string) (*agentcli.MCP, func(), error) {
	none := func() {}
	if preset == "" {
		return nil, none, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, none, errs.New(errs.Unexpected, "finding baton's own path for the agent's MCP server: %v", err)
	}
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	m := &agentcli.MCP{Baton: self, PassEnv: []string{broker.EnvSocket}}
	if preset != "claude" {
		return m, none, nil
	}
	if base == "" {
		base = privateBase(stateDir, cwd)
	}
	dir, err := os.MkdirTemp(base, "baton-mcp-")
	if err != nil {
		return nil, none, errs.New(errs.Unexpected, "creating the agent's MCP configuration: %v", err)
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	m.ConfigFile = filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(m.ConfigFile, agentcli.ClaudeConfig(self, map[string]string{broker.EnvSocket: sock}), 0o600); err != nil {
		cleanup()
		return nil, none, errs.New(errs.Unexpected, "writing the agent's MCP configuration: %v", err)
	}
	return m, cleanup, nil
}

// privateBase is where the agent's MCP configuration directory is made:
// the system's temporary directory, else (when that lies in the project)
// the user's cache directory.
func privateBase(project ...string) string {
	base := os.TempDir()
	if !inside(base, project...) {
		return base
	}
	if cache, err := os.UserCacheDir(); err == nil && !inside(cache, project...) {
		if err := os.MkdirAll(filepath.Join(cache, "baton"), 0o700); err == nil {
			return filepath.Join(cache, "baton")
		}
	}
	return base
}

// inside says whether path is one of dirs or below one of them.
func inside(path string, dirs ...string) bool {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if rel, err := filepath.Rel(d, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// mcpNote opens the prompt of an agent CLI whose execs baton supervises:
// its own calls are those of baton's MCP server, which it starts itself; a
// baton command its shell tool runs is a program it ran, which may read
// and records nothing.
const mcpNote = `Record your work with baton's MCP tools (the "baton" server: session_end, create_branch, add_review, add_fix, merge, ...): each acts as this session. A baton command you run in your shell is a program you ran: it may read, and records nothing. Where this prompt shows a baton command that records something, call the MCP tool that does the same.

`

// withMCPNote is st with mcpNote before its prompt when its agent is a
// preset CLI with baton's MCP server under the supervision of its execs.
func withMCPNote(o runOpts, box *agentBox, st step) step {
	if o.Agent != "" && box != nil && box.supervised() {
		st.Prompt = mcpNote + st.Prompt
	}
	return st
}
