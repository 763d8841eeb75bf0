package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/internal/app"
)

// newLandCmd is 'baton land': the landing queue, landed by the launcher.
func (a *App) newLandCmd() *cobra.Command {
	var o app.LandInput
	c := &cobra.Command{
		Use:   "land",
		Short: "Land the landing queue: merge, run the gate, move main (the launcher; no agent role)",
		Long: `Land the queued merges, first queued first. When several agents run at once ("agents" in
.baton/config, or baton run --agents) or a gate is configured ("gate": {"command": "make test",
"timeout": "20m"}), a passing review's 'reviews merge' queues its branch instead of moving main.
For each queued item: the merged tree is made with git's merge engine; the gate's command runs on
it in a clean working copy of its own (no session credential, no state directory); only when it
passes does main move (compare-and-swap), the features pass and the branch is deleted, in one
transaction. A conflict or a failing gate records a review by the queue's own actor, GATE, whose
critical issue names the conflicting paths or the gate's output tail: the item goes back to FIX,
counted toward max_fix_cycles, and at the limit it is rejected. Every gate run is in the audit log.
baton run lands the queue itself between sessions; no agent role may land.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			out, err := a.app.Land(c.Context(), a.caller(), o)
			if err != nil {
				return err
			}
			return a.emit(out, func(w io.Writer) { writeLand(w, out) })
		},
	}
	c.Flags().IntVar(&o.Max, "max", 0, "land at most this many queued items (default: the whole queue)")
	return c
}

func writeLand(w io.Writer, out app.LandResult) {
	if len(out.Items) == 0 {
		printf(w, "NOTHING_QUEUED: the landing queue is empty")
	}
	for _, it := range out.Items {
		switch it.Outcome {
		case "landed":
			printf(w, "LANDED: %s (%s, review R%d) as %s", it.Item, it.Branch, it.ReviewID, it.MergeCommit)
		default:
			printf(w, "%s: %s (%s) by gate review R%d: %s", map[string]string{"sent_back": "SENT_BACK", "rejected": "REJECTED"}[it.Outcome], it.Item, it.Branch, it.Review, it.Reason)
		}
		if g := it.Gate; g != nil {
			printf(w, "  gate %q on tree %s: exit %d in %dms (output %s)", g.Command, g.Tree, g.ExitCode, g.DurationMS, g.Digest)
		}
	}
}
