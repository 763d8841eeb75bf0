package store

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// A reader's check of the anchors against the log (LogAhead) beside a
// writer that appends to the log and then moves the anchors never sees a
// gap: it reads the anchors first.
func TestLogAheadBesideWrites(t *testing.T) {
	s := newTracked(t)
	s.AnchorPath = filepath.Join(t.TempDir(), "outside", "anchor.json")
	logOne(t, s, false)
	var stop atomic.Bool
	done := make(chan int)
	go func() {
		n := 0
		for !stop.Load() {
			if err := s.Update(context.Background(), func(tx *Tx) error { tx.Log(Event{Type: "task"}); return nil }); err != nil {
				t.Error(err)
				break
			}
			n++
		}
		done <- n
	}()
	gaps, reads := 0, 0
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		r := New(s.Dir)
		r.AnchorPath = s.AnchorPath
		g, err := r.LogAhead()
		reads++
		if err == nil && g != nil {
			gaps++
			if gaps < 4 {
				t.Logf("spurious gap: log at %d, %s at %d", g.Seq, filepath.Base(g.Path), g.Anchor.Seq)
			}
		}
	}
	stop.Store(true)
	n := <-done
	t.Logf("writes %d reads %d spurious gaps %d", n, reads, gaps)
	if gaps > 0 {
		t.Fail()
	}
}
