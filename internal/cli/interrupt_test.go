package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/spf13/cobra"
)

// TestTrapReleased: a trap relays a SIGINT to its command, and its
// release says whether one came.
func TestTrapReleased(t *testing.T) {
	guard := make(chan os.Signal, 4)
	signal.Notify(guard, os.Interrupt)
	defer signal.Stop(guard)
	for _, fire := range []bool{true, false} {
		a := newApp(Env{Getenv: func(string) string { return "" }})
		a.trapSignals = true
		c := &cobra.Command{Use: "add-session"}
		c.SetContext(context.Background())
		release := a.trapInterrupt(c)
		if fire {
			if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			<-guard
			<-c.Context().Done() // the trap relays it
		}
		release()
		if a.sigintSeen != fire {
			t.Errorf("SIGINT %v: sigintSeen %v", fire, a.sigintSeen)
		}
	}
}
