package cli

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/internal/app"
)

func (a *App) newReviewsMergeCmd() *cobra.Command {
	var o app.MergeInput
	c := &cobra.Command{
		Use:   "merge",
		Short: "Merge the branch of a passing review into main, mark its features passing, delete the branch (REVIEW)",
		Long: `Merge the branch of the last review (or --review ID) into main. The review must be a PASS, or
a fix-cycle-limit decision to merge, and the branch must be where the review saw it. In one
transaction: main moves (a merge commit, --no-ff, unless merge_no_ff is false in .baton/config or
--ff is given and main can fast-forward), the checkout of main shows the merged files, the
review's features are marked passing, the branch is deleted, and the merge commit is recorded on
the review and on the fixes of those features.
A conflict leaves main as it was, names the paths, and sets the next step to FIX on the branch
(exit 5). Uncommitted changes in the checkout of main refuse the merge before anything changes.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			out, err := a.app.ReviewsMerge(c.Context(), a.caller(), o)
			if err != nil {
				return err
			}
			return a.emit(out, func(w io.Writer) { writeMerge(w, out) })
		},
	}
	c.Flags().Var(reviewIDFlag(&o.Review), "review", "review whose branch to merge: 3 or R3 (default: the last review)")
	c.Flags().BoolVar(&o.FF, "ff", false, "fast-forward main when it can, without a merge commit")
	return c
}

func (a *App) newReviewsRejectCmd() *cobra.Command {
	var o app.RejectInput
	c := &cobra.Command{
		Use:   "reject",
		Short: "Reject the work of a review: delete its branch, requeue its features (REVIEW)",
		Long: `Reject the work of the last review (or --review ID): its branch is deleted (only if it is
where the review saw it), its features go back to the queue (passes: false), and the next phase
is computed as after a REJECT. A review that was merged cannot be rejected.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			out, err := a.app.ReviewsReject(c.Context(), a.caller(), o)
			if err != nil {
				return err
			}
			return a.emit(out, func(w io.Writer) {
				printf(w, "SUCCESS: Rejected the work of review R%d", out.ReviewID)
				if out.BranchDeleted {
					printf(w, "DELETED: branch %s (was %s)", out.Branch, out.BranchHead)
				}
				for _, d := range out.Detached {
					printf(w, "DETACHED: %s had %s checked out; it is now on a detached HEAD at %s, files unchanged", d, out.Branch, out.BranchHead)
				}
				if len(out.Requeued) > 0 {
					printf(w, "REQUEUED: %s", strings.Join(out.Requeued, ", "))
				}
				printf(w, "NEXT: %s — %s", out.Phase, out.Reason)
			})
		},
	}
	c.Flags().Var(reviewIDFlag(&o.Review), "review", "review whose work to reject: 3 or R3 (default: the last review)")
	return c
}

func writeMerge(w io.Writer, out app.MergeResult) {
	if out.Queued {
		printf(w, "SUCCESS: Queued %s for landing on %s (review R%d at %s): main moves when the launcher lands it", out.Branch, out.Into, out.ReviewID, out.BranchHead)
		return
	}
	how := "merge commit"
	if out.FastForward {
		how = "fast-forward"
	}
	printf(w, "SUCCESS: Merged %s into %s at %s (%s, review R%d)", out.Branch, out.Into, out.MergeCommit, how, out.ReviewID)
	if len(out.Passed) > 0 {
		printf(w, "PASSING: %s", strings.Join(out.Passed, ", "))
	}
	if len(out.FixesMerged) > 0 {
		printf(w, "FIXES MERGED: %s", strings.Join(out.FixesMerged, ", "))
	}
	printf(w, "DELETED: branch %s (was %s)", out.Branch, out.BranchHead)
	for _, d := range out.Switched {
		printf(w, "SWITCHED: %s had %s checked out; it is now on %s at %s", d, out.Branch, out.Into, out.MergeCommit)
	}
	for _, d := range out.Detached {
		printf(w, "DETACHED: %s had %s checked out; it is now on a detached HEAD at %s, files unchanged", d, out.Branch, out.BranchHead)
	}
}
