package cli

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// heavyAtStart are packages whose initialisation every baton process would
// pay at start, although few commands use them, and what baton uses
// instead. Every command an agent calls starts a process, so none of them
// may be linked into cmd/baton again.
var heavyAtStart = map[string]string{
	"github.com/itchyny/gojq": "third_party/gojq (builtin tables built on first use)",
	"html/template":           "text/template with every action HTML-escaped (cmd/report.go escapeActions)",
}

// TestNoHeavyInitLinked lists the packages linked into the baton binary
// and fails if one of heavyAtStart is among them.
func TestNoHeavyInitLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/baton-cli/baton/cmd/baton").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 || !slices.Contains(deps, "github.com/baton-cli/baton/third_party/gojq") {
		t.Fatalf("go list -deps gave %d packages, not the binary's", len(deps))
	}
	for _, p := range deps {
		for heavy, instead := range heavyAtStart {
			if p == heavy || (strings.HasSuffix(heavy, "/") && strings.HasPrefix(p, heavy)) {
				t.Errorf("cmd/baton links %s, whose init every command pays at start; use %s", p, instead)
			}
		}
	}
}
