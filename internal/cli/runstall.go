package cli

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// stallWatch ends an agent that has written nothing for its limit: a
// stalled agent (no output, no exit) is caught long before --timeout.
type stallWatch struct {
	limit  time.Duration
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once

	mu      sync.Mutex
	last    time.Time
	stalled bool
}

// watchStall is ctx cancelled when the agent stalls for o's stall timeout
// (--stall-timeout, else "stall_timeout" in .baton/config, else 10m).
func (a *App) watchStall(ctx context.Context, o runOpts) (context.Context, *stallWatch) {
	limit := o.StallTimeout
	if limit <= 0 {
		l, _ := a.app.RunSettings()
		limit = l.Stall
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &stallWatch{limit: limit, cancel: cancel, done: make(chan struct{}), last: time.Now()}
	if limit > 0 {
		go w.watch()
	}
	return ctx, w
}

func (w *stallWatch) watch() {
	t := time.NewTicker(max(w.limit/10, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-t.C:
			w.mu.Lock()
			quiet := time.Since(w.last) >= w.limit
			w.stalled = w.stalled || quiet
			w.mu.Unlock()
			if quiet {
				w.cancel()
				return
			}
		}
	}
}

// touch records output from the agent.
func (w *stallWatch) touch() {
	w.mu.Lock()
	w.last = time.Now()
	w.mu.Unlock()
}

// stop ends the watch (the agent has exited).
func (w *stallWatch) stop() {
	w.once.Do(func() { close(w.done); w.cancel() })
}

// fired says whether the agent was ended as stalled.
func (w *stallWatch) fired() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stalled
}

// stalledFailure is the failure signature of a stalled session.
func (a *App) stalledFailure(st step, w *stallWatch) *failureSignature {
	a.notice("[baton run] %s session %d stalled: no output for %s; the agent was killed", st.Role, st.Session, w.limit)
	return &failureSignature{Code: "stalled", Message: fmt.Sprintf("the agent wrote nothing for %s (the stall timeout) and was killed", w.limit), StageID: st.Role, Severity: "error"}
}
