package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/baton-cli/baton/internal/errs"
)

// termSignals watches SIGTERM and SIGHUP for a command that must stop its
// children on them as on Ctrl-C (the bridge loop): the context is
// cancelled, and the command exits 128+signal, as a shell reports it.
type termSignals struct {
	ch   chan os.Signal
	mu   sync.Mutex
	got  syscall.Signal
	stop func()
}

func withTermSignals(ctx context.Context) (context.Context, *termSignals) {
	ctx, cancel := context.WithCancel(ctx)
	t := &termSignals{ch: make(chan os.Signal, 1)}
	signal.Notify(t.ch, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-t.ch:
			t.mu.Lock()
			t.got, _ = s.(syscall.Signal)
			t.mu.Unlock()
			cancel()
		case <-done:
		}
	}()
	t.stop = func() {
		signal.Stop(t.ch)
		close(done)
		cancel()
	}
	return ctx, t
}

// exitFor gives err the exit status of the signal that stopped the
// command (143 for SIGTERM, 129 for SIGHUP), if one did.
func (t *termSignals) exitFor(err error) error {
	t.mu.Lock()
	s := t.got
	t.mu.Unlock()
	if s == 0 || err == nil {
		return err
	}
	return &errs.Error{Kind: errs.Interrupted, Msg: fmt.Sprintf("stopped by %s: %v", signalName(s), err), Err: err, Exit: 128 + int(s)}
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}
