package cli

import (
	"context"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/gitops"
)

// landQueue lands what the landing queue holds (app.Land), saying on
// stderr what each gate run and landing did.
func (a *App) landQueue(ctx context.Context) error {
	in := app.LandInput{Started: func(item, tree string) {
		a.notice("[baton run] gate started on %s (merged tree %s)", item, gitops.Short(tree))
	}}
	res, err := a.app.Land(ctx, a.caller(), in)
	for _, it := range res.Items {
		switch it.Outcome {
		case "landed":
			a.notice("[baton run] landed %s (%s, review R%d) as %s", it.Item, it.Branch, it.ReviewID, gitops.Short(it.MergeCommit))
		default:
			a.notice("[baton run] %s %s by gate review R%d: %s", map[string]string{"sent_back": "sent back", "rejected": "rejected"}[it.Outcome], it.Item, it.Review, it.Reason)
		}
	}
	return err
}
