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
