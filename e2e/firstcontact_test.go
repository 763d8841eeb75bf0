package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-cli/baton/bench/gen"
)

// TestFirstContactCopy: a copy of a large state file put back under a new
// identity (a checkout, a restore) is read when it holds the bytes the log
// recorded; edited anywhere — in an old session the read does not return,
// in the part it returns, a status written in front of the real one — or
// cut short, every read, every write and verify refuse it.
func TestFirstContactCopy(t *testing.T) {
	dir := newProject(t)
	st, err := gen.Write(dir, gen.Size{Sessions: 2000, Reviews: 20, Fixes: 10, Features: 20}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Progress) <= 1<<20 {
		t.Fatalf("the generated progress.json has %d bytes: want a large one", len(st.Progress))
	}
	mustBaton(t, dir, "--as", "HUMAN", "--reason", "a generated state", "reconcile")
	mustBaton(t, dir, "--as", "HUMAN", "--reason", "a generated state", "progress", "add-session", "-a", "IMPLEMENT", "-s", "the last one", "-o", "SUCCESS")
	path := filepath.Join(dir, progressName)
	recorded, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	branch := mustBaton(t, dir, "progress", "get-status", "--field", "current_phase")
	putBack := func(b []byte) {
		t.Helper()
		if err := os.WriteFile(path+".copy", b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".copy", path); err != nil {
			t.Fatal(err)
		}
	}
	edited := func(old, new string) []byte {
		t.Helper()
		i := bytes.Index(recorded, []byte(old))
		if i < 0 || len(old) != len(new) {
			t.Fatalf("no %q to edit in the recorded file", old)
		}
		return append(append(append([]byte(nil), recorded[:i]...), new...), recorded[i+len(old):]...)
	}
	reads := func(what string) {
		t.Helper()
		if got := mustBaton(t, dir, "progress", "get-status", "--field", "current_phase"); got != branch {
			t.Fatalf("%s: get-status printed %q, the recorded version %q", what, got, branch)
		}
		if got := mustBaton(t, dir, "progress", "get-session", "-1", "--field", "summary"); got != "the last one\n" {
			t.Fatalf("%s: get-session -1 printed %q", what, got)
		}
	}
	refused := func(what string, args ...string) {
		t.Helper()
		if r := baton(t, dir, args...); r.code != 6 || r.stdout != "" {
			t.Fatalf("%s: %v", what, r)
		}
	}
	putBack(recorded)
	reads("the same bytes")

	far := edited(`"session_id": 500,`, `"session_id": 5OO,`)
	putBack(far)
	refused("the last session, of a copy edited in an old session", "progress", "get-session", "-1", "--field", "summary")
	refused("the status, of a copy edited in an old session", "progress", "get-status", "--field", "current_phase")
	refused("that session read", "progress", "get-session", "499", "--field", "summary")
	refused("a write", "--as", "HUMAN", "--reason", "x", "progress", "add-session", "-a", "IMPLEMENT", "-s", "more", "-o", "SUCCESS")
	if r := baton(t, dir, "verify"); r.code == 0 || !strings.Contains(r.stdout+r.stderr, progressName) {
		t.Fatalf("verify did not report a copy edited in an old session: %v", r)
	}

	putBack(edited(`"summary": "the last one"`, `"summary": "the last two"`))
	refused("the last session edited", "progress", "get-session", "-1", "--field", "summary")
	putBack(edited(`"current_phase": `+strings.TrimSpace(strconvQuote(branch)), `"current_phase": `+strings.TrimSpace(strconvQuote(strings.ToLower(branch)))))
	refused("the status edited", "progress", "get-status", "--field", "current_phase")
	// a status written over the project member, in front of the real one
	// (the first of equal keys is the one a reader finds)
	i := bytes.Index(recorded, []byte(`"project": {`))
	j := i + bytes.IndexByte(recorded[i:], '}') + 1
	forged := []byte(`"status": {"current_phase": "FORGED"}`)
	if i < 0 || len(forged) > j-i {
		t.Fatalf("no project member to write over: %d %d", i, j)
	}
	forged = append(forged, bytes.Repeat([]byte(" "), j-i-len(forged))...)
	putBack(append(append(append([]byte(nil), recorded[:i]...), forged...), recorded[j:]...))
	refused("a status written in front of the recorded one", "progress", "get-status", "--field", "current_phase")
	putBack(recorded[:len(recorded)-40])
	refused("a copy cut short", "progress", "get-status", "--field", "current_phase")

	putBack(recorded)
	reads("the recorded bytes again")
	if r := baton(t, dir, "verify"); strings.Contains(r.stdout+r.stderr, progressName) {
		t.Fatalf("verify reports the recorded bytes put back: %v", r) // the generated reviews are its other findings
	}
}

// strconvQuote is s without its line end, as a JSON string.
func strconvQuote(s string) string {
	b, _ := json.Marshal(strings.TrimSuffix(s, "\n"))
	return string(b)
}
