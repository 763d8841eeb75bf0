package cli

import (
	"os"
	"path/filepath"
	"strings"
)

// withSelfOnPath puts the directory of the running baton first on the
// agent's PATH, and names it in BATON (which the drop-in scripts run), so
// that the prompt's `baton …` lines and the scripts reach this same baton
// even when the person started it as ./bin/baton with no baton on PATH.
func withSelfOnPath(env []string, self string) []string {
	if self == "" {
		return env
	}
	dir := filepath.Dir(self)
	out := make([]string, 0, len(env)+2)
	path := dir
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH":
			if v != "" {
				path = dir + string(os.PathListSeparator) + v
			}
			continue
		case "BATON":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PATH="+path, "BATON="+self)
}

// agentBaton is the path of the running baton for the agent's PATH, ""
// when it cannot be found.
func agentBaton() string {
	self, err := selfPath()
	if err != nil {
		return ""
	}
	return self
}

// nativeCodex is the program npm's codex command starts, when path (the
// codex found on PATH) is that package's Node wrapper: the platform's
// native binary, with the variables the wrapper gives it. baton starts it
// directly, so that the agent's own program is Codex itself and the baton
// MCP server Codex starts is its child (through the wrapper, on a Node
// that spawns it, that server would be a grandchild: code the agent ran).
// ok is false when path is not the wrapper or no native binary is there.
func nativeCodex(path string) (bin string, env []string, ok bool) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil || filepath.Base(real) != "codex.js" {
		return "", nil, false
	}
	root := filepath.Dir(filepath.Dir(real)) // node_modules/@openai/codex
	for _, pattern := range []string{
		filepath.Join(filepath.Dir(root), "codex-*", "vendor", "*", "bin", "codex"),
		filepath.Join(root, "vendor", "*", "bin", "codex"),
		filepath.Join(root, "vendor", "*", "codex", "codex"),
	} {
		found, _ := filepath.Glob(pattern)
		for _, f := range found {
			if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
				return f, []string{"CODEX_MANAGED_BY_NPM=1", "CODEX_MANAGED_PACKAGE_ROOT=" + root}, true
			}
		}
	}
	return "", nil, false
}
