package cli

import (
	"context"
	"os"
	"os/signal"

	"github.com/spf13/cobra"
)

// Interrupts. A command runs with a context that SIGINT cancels, so that a
// command that may change something stops at a safe point and exits 130
// with what it did and did not do.

// trapInterrupt gives c a context SIGINT cancels (when the process's
// signals are this App's: see Main); the returned function ends the trap
// and notes whether it fired.
func (a *App) trapInterrupt(c *cobra.Command) func() {
	if !a.trapSignals {
		return func() {}
	}
	ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt)
	c.SetContext(ctx)
	return func() {
		if ctx.Err() != nil {
			a.sigintSeen = true
		}
		stop()
	}
}

// wasInterrupted says whether the command was interrupted: its trap fired,
// or the context it was given ended.
func (a *App) wasInterrupted(ctx context.Context) bool {
	return a.sigintSeen || ctx.Err() != nil
}
