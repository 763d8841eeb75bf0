package cli

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/internal/lazy"
)

// Interrupts. A command that may change something runs with a context that
// SIGINT cancels, so that it stops at a safe point and exits 130 with what
// it did and did not do. A command that only reads the state files sets up
// no signal handling: an interrupt ends it at once, which loses nothing,
// and it does not pay for the goroutines and threads os/signal starts
// (about a tenth of a Go process's start). The list is of reads only; a
// command missing from it is treated as a write.

// readOnly are the command paths that only read the state files.
var readOnly = lazy.Value[map[string]bool]{Build: func() map[string]bool {
	return map[string]bool{
		"baton progress get-status": true, "baton progress get-session": true, "baton progress get-review-type": true,
		"baton progress next-session-id": true, "baton progress list": true,
		"baton reviews get-review": true, "baton reviews get-last": true, "baton reviews get-fix-count": true,
		"baton reviews show-issues": true, "baton reviews list": true, "baton reviews next-review-id": true,
		"baton features next": true, "baton features next-candidates": true, "baton features get": true,
		"baton features list": true, "baton features stats": true, "baton features next-id": true,
		"baton features debt-count": true,
	}
}}

// trapInterrupt gives c, unless it only reads, a context SIGINT cancels
// (when the process's signals are this App's: see Main); the returned
// function ends the trap and notes whether it fired.
func (a *App) trapInterrupt(c *cobra.Command) func() {
	if !a.trapSignals || readOnly.Get()[c.CommandPath()] {
		return func() {}
	}
	if a.env.OneShot {
		return a.trapOneShot(c)
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

// trapOneShot is trapInterrupt in a process that exits once the command
// returns. Ending the trap unregisters nothing: signal.Reset (and Stop)
// hand the change to the runtime's signal thread and wait for its answer,
// two wake-ups across threads that cost a write more CPU than the rest of
// the trap (on cores that concurrent writers keep busy). The trap's own
// goroutine gives SIGINT its default action back instead, only when one
// arrives after the trap ended, and raises it again: the process ends by
// the signal, as it would have without any trap.
func (a *App) trapOneShot(c *cobra.Command) func() {
	ctx, cancel := context.WithCancel(c.Context())
	c.SetContext(ctx)
	var ended atomic.Bool
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt)
	go func() {
		for range ch {
			if ended.Load() {
				signal.Reset(os.Interrupt)
				if p, err := os.FindProcess(os.Getpid()); err == nil {
					_ = p.Signal(os.Interrupt)
				}
				return
			}
			cancel()
		}
	}()
	return func() {
		ended.Store(true)
		if ctx.Err() != nil {
			a.sigintSeen = true
		}
	}
}

// wasInterrupted says whether the command was interrupted: its trap fired,
// or the context it was given ended.
func (a *App) wasInterrupted(ctx context.Context) bool {
	return a.sigintSeen || ctx.Err() != nil
}
