package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/internal/app"
)

func (a *App) newReconcileCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "reconcile",
		Short: "Person only: accept the files as they are after a change made outside baton",
		Long: `When a state or control file was changed outside baton, every write is refused (exit 6) until a
person has looked at the change. 'baton reconcile --as HUMAN --reason "..."' checks that the files
are valid and records, as an event of its own, each changed file with its hash before and after and
a summary of the difference; baton then carries on from the files as they are. It is also how a
person changes a control file (.baton/config, .baton/git.json, .baton/prompts/): edit it, then
reconcile. Restore a file from .baton/recorded/ (the version the last event recorded) instead to
undo a change.

When entries of the audit log were removed (the log deleted, truncated or rewritten, so that the
head anchored outside the project is gone), every write is refused, since it would overwrite that
anchor. Restore the log from .baton/backup/ if you can; otherwise reconcile records the loss (the
anchored head and where the log now ends) as its own entry and the log continues from there.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			res, err := a.app.Reconcile(c.Context(), a.caller())
			if err != nil {
				return err
			}
			return a.emit(res, func(w io.Writer) {
				if g := res.LogGap; g != nil {
					printf(w, "RECONCILED: the audit log ended at entry %d, but %s anchored entry %d: the loss is recorded", g.Seq, g.Path, g.Anchor.Seq)
				}
				if len(res.Reconciled) == 0 && res.LogGap == nil {
					printf(w, "NOTHING: every file matches the last event")
				}
				for _, d := range res.Reconciled {
					printf(w, "RECONCILED: %s (%s → %s): %s", d.File, app.Short(d.Recorded), app.Short(d.Now), d.Difference)
				}
				if res.Attested > 0 {
					printf(w, "ATTESTED: wrote the missing attestation of %d landing(s) in %s", res.Attested, app.NotesRef)
				}
			})
		},
	}
}
