package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Lock-free readers against a writer that patches progress.json in place:
// real processes, readers asking one field of the last session and of the
// status again and again while sessions are appended. Every read exits 0
// with a whole answer — never a torn file (exit 6), never a fault — and the
// last session's id never goes back.
func TestReadersDuringInPlacePatches(t *testing.T) {
	dir := newProject(t)
	inflateSessions(t, dir, 1500) // large enough to be patched in place
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
		mustBaton(t, dir, "progress", "add-session", "-a", "IMPLEMENT", "-s", fmt.Sprintf("patched %d", i), "-o", "SUCCESS")
	}
	close(done)
	wg.Wait()
	close(errc)
	for e := range errc {
		t.Error(e)
	}
	if patches := strings.Count(string(readState(t, dir, ".baton/backup/.progress.json.patch")), `"patch"`); patches != 1 {
		t.Errorf("progress.json was not patched in place (no backup record of a patch)")
	}
	mustBaton(t, dir, "verify")
	t.Logf("%d and %d reads during %d in-place appends", reads[0], reads[1], writes)
}

// A progress.json in the predecessor's order (project, status, sessions)
// is rewritten once in baton's (sessions, then status, last) by its next
// write (replaced, or, being under 1 MiB, patched from the status on); the
// writes after it patch only its tail in place (same inode), and the
// backup is the version before each.
func TestOldLayoutRewrittenOnceThenPatched(t *testing.T) {
	dir := newProject(t)
	inflateSessions(t, dir, 1500) // written in the predecessor's order
	path := filepath.Join(dir, progressName)
	old := readState(t, dir, progressName)
	if bytes.Index(old, []byte(`"status"`)) > bytes.Index(old, []byte(`"sessions"`)) {
		t.Fatal("the generated file is not in the predecessor's order")
	}
	inode := func() uint64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	mustBaton(t, dir, "progress", "add-session", "-a", "IMPLEMENT", "-s", "reorders", "-o", "SUCCESS")
	first := readState(t, dir, progressName)
	if i, j := bytes.LastIndex(first, []byte(`"sessions": [`)), bytes.LastIndex(first, []byte(`"status": {`)); i < 0 || j < i {
		t.Fatalf("not rewritten in baton's order:\n%s", head(first, 400))
	}
	rewritten := inode()
	prev := first
	for i := 0; i < 3; i++ {
		mustBaton(t, dir, "progress", "add-session", "-a", "IMPLEMENT", "-s", fmt.Sprintf("patched %d", i), "-o", "SUCCESS")
		if inode() != rewritten {
			t.Fatalf("write %d replaced the file instead of patching it", i)
		}
		if b := readState(t, dir, ".baton/backup/"+progressName); !bytes.Equal(b, prev) {
			t.Fatalf("write %d: the backup is not the version before", i)
		}
		prev = readState(t, dir, progressName)
	}
	var doc struct {
		Sessions []struct{ Summary string } `json:"sessions"`
	}
	if err := json.Unmarshal(prev, &doc); err != nil || doc.Sessions[len(doc.Sessions)-1].Summary != "patched 2" || len(doc.Sessions) != 1504 {
		t.Fatalf("after the patches: %d sessions, %v", len(doc.Sessions), err)
	}
	mustBaton(t, dir, "verify")
}
