package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Lock-free readers against a writer that replaces progress.json: real
// processes, readers asking one field of the last session and of the
// status again and again while sessions are appended. Every read exits 0
// with a whole answer — never a torn file or a drift taken for an edit
// (exit 6) — and the last session's id never goes back.
func TestReadersDuringWrites(t *testing.T) {
	dir := newProject(t)
	inflateSessions(t, dir, 1500)
	mustBaton(t, dir, "progress", "add-session", "-a", "IMPLEMENT", "-s", "before the readers", "-o", "SUCCESS")
	const writes = 30
	done := make(chan struct{})
	var wg sync.WaitGroup
	errc := make(chan string, 64)
	reads := make([]int, 2)
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			last := 0
			for {
				select {
				case <-done:
					return
				default:
				}
				res := baton(t, dir, "progress", "get-session", "-1", "--field", "session_id")
				id, err := strconv.Atoi(strings.TrimSpace(res.stdout))
				if res.code != 0 || err != nil || id < last {
					errc <- fmt.Sprintf("reader %d after id %d: %v", r, last, res)
					return
				}
				last = id
				if st := baton(t, dir, "progress", "get-status", "--field", "current_phase"); st.code != 0 || strings.TrimSpace(st.stdout) == "" {
					errc <- fmt.Sprintf("reader %d: %v", r, st)
					return
				}
				reads[r]++
			}
		}(r)
	}
	for i := 0; i < writes; i++ {
		mustBaton(t, dir, "progress", "add-session", "-a", "IMPLEMENT", "-s", fmt.Sprintf("written %d", i), "-o", "SUCCESS")
	}
	close(done)
	wg.Wait()
	close(errc)
	for e := range errc {
		t.Error(e)
	}
	mustBaton(t, dir, "verify")
	t.Logf("%d and %d reads during %d appends", reads[0], reads[1], writes)
}
