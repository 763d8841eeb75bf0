package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/progress"
)

// writeCosts shows what the agents spent, on status's screen: in all with
// the roles, then by feature and by run (nothing when no agent reported
// usage).
func writeCosts(w io.Writer, c app.Costs) {
	line := c.CostLine()
	if line == "" {
		return
	}
	printf(w, "Cost:      %s", line)
	if f := c.FeatureLine(); f != "" {
		printf(w, "Cost/item: %s", f)
	}
	runs := make([]string, 0, len(c.ByRun))
	for _, r := range c.ByRun {
		runs = append(runs, fmt.Sprintf("%s $%.4f (%d sessions)", r.Key, r.CostUSD, r.Sessions))
	}
	if len(runs) > 0 {
		printf(w, "Cost/run:  %s", strings.Join(runs, ", "))
	}
}

// writeSessionCost shows one session's usage under it in 'baton show'.
func writeSessionCost(w io.Writer, usage any) {
	m, ok := usage.(map[string]any)
	if !ok {
		return
	}
	b, _ := json.Marshal(m)
	var u progress.Usage
	if json.Unmarshal(b, &u) != nil {
		return
	}
	printf(w, "    spent %s (reported by %s)", app.UsageText(u), app.OrDash(u.Source))
}
