package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestAgentMCPConfig: Claude Code's MCP configuration names the session's
// broker and holds no credential, lives outside the project in a private
// directory, mode 0600, and is gone after cleanup; Codex gets no file,
// only the names of the variables its server inherits.
func TestAgentMCPConfig(t *testing.T) {
	proj := t.TempDir()
	t.Chdir(proj)
	m, cleanup, err := agentMCP("claude", "/run/broker/sock", "", "/state/dir", proj)
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(m.Baton) || !filepath.IsAbs(m.ConfigFile) || strings.HasPrefix(m.ConfigFile, proj) {
		t.Errorf("baton %q, config %q: want absolute paths, the config outside the project %s", m.Baton, m.ConfigFile, proj)
	}
	fi, err := os.Stat(m.ConfigFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("config file: %v %v, want mode 0600", err, fi)
	}
	if di, err := os.Stat(filepath.Dir(m.ConfigFile)); err != nil || di.Mode().Perm() != 0o700 {
		t.Errorf("config directory: %v %v, want mode 0700", err, di)
	}
	b, _ := os.ReadFile(m.ConfigFile)
	srv := gjson.GetBytes(b, "mcpServers.baton")
	if srv.Get("command").String() != m.Baton || srv.Get("args.#").Int() != 1 || srv.Get("args.0").String() != "mcp" ||
		srv.Get("env.BATON_BROKER").String() != "/run/broker/sock" || srv.Get("env.BATON_SESSION").Exists() || strings.Contains(string(b), "bts1") {
		t.Errorf("config:\n%s", b)
	}
	cleanup()
	if _, err := os.Stat(filepath.Dir(m.ConfigFile)); !os.IsNotExist(err) {
		t.Errorf("the config's directory is still there after cleanup: %v", err)
	}

	m, cleanup, err = agentMCP("codex", "/run/broker/sock", "", "/state/dir", proj)
	if err != nil || m.ConfigFile != "" || strings.Join(m.PassEnv, ",") != "BATON_BROKER" {
		t.Errorf("codex: %+v %v", m, err)
	}
	cleanup()
	if m, _, _ := agentMCP("", "/run/broker/sock", "", "", proj); m != nil {
		t.Errorf("--agent-cmd gets no MCP configuration: %+v", m)
	}

	// a temporary directory set inside the project is not used
	t.Setenv("TMPDIR", filepath.Join(proj, "tmp"))
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	if err := os.Mkdir(filepath.Join(proj, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	m, cleanup, err = agentMCP("claude", "/run/broker/sock", "", "", proj)
	if err != nil || strings.HasPrefix(m.ConfigFile, proj) {
		t.Errorf("with TMPDIR in the project: %v %+v", err, m)
	}
	cleanup()
}
