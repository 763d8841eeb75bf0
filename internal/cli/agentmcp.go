package cli

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/baton-cli/baton/internal/agentcli"
	"github.com/baton-cli/baton/internal/errs"
)

// agentMCP hands a preset's agent baton's MCP server for its session.
// Claude Code reads a --mcp-config file: it is written into a fresh
// private directory outside the project (the system's temporary
// directory, mode 0700; the file 0600), since it holds the session's
// credential, and cleanup removes it when the session's agent has exited.
// cwd and stateDir are the project's: a temporary directory inside them
// (TMPDIR set into the project) is not used.
// Codex is told by -c overrides which variables its server inherits; the
// values stay in the agent's environment.
func agentMCP(preset, credential, stateDir, cwd string) (*agentcli.MCP, func(), error) {
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
	m := &agentcli.MCP{Baton: self, PassEnv: []string{"BATON_SESSION", "BATON_STATE_DIR"}}
	if preset != "claude" {
		return m, none, nil
	}
	dir, err := os.MkdirTemp(privateBase(stateDir, cwd), "baton-mcp-")
	if err != nil {
		return nil, none, errs.New(errs.Unexpected, "creating the agent's MCP configuration: %v", err)
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	m.ConfigFile = filepath.Join(dir, "mcp.json")
	env := map[string]string{"BATON_SESSION": credential}
	if stateDir != "" {
		env["BATON_STATE_DIR"] = stateDir
	}
	if err := os.WriteFile(m.ConfigFile, agentcli.ClaudeConfig(self, env), 0o600); err != nil {
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
