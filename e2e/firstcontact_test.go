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

// TestFirstContactNote: a large state file baton did not write (a copy of
// the version it recorded) is validated in full by the first reader, which notes it in
// .baton/validated.json; the next reader of that version reads it on that
// note, and any other version (here, one cut short) is validated again and
// refused.
func TestFirstContactNote(t *testing.T) {
	dir := newProject(t)
	st, err := gen.Write(dir, gen.Size{Sessions: 1000, Reviews: 200, Fixes: 100, Features: 100}, 1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, progressName)
	if fi, err := os.Stat(path); err != nil || fi.Size() < 256<<10 {
		t.Fatalf("the generated progress.json is too small to be noted: %v", err)
	}
	// a state baton did not record is refused to readers as to writers:
	// a person records it, and a copy of that version is what a checkout
	// or a restore from backup puts back
	if r := baton(t, dir, "progress", "get-session", "-1", "--field", "summary"); r.code != 6 || r.stdout != "" || !strings.Contains(r.stderr, "it was not read") {
		t.Fatalf("a state baton did not record: %v", r)
	}
	mustBaton(t, dir, "--as", "HUMAN", "--reason", "a generated state", "reconcile")
	for _, n := range []string{progressName, "reviews.json", "feature_list.json"} {
		p := filepath.Join(dir, n)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first := mustBaton(t, dir, "progress", "get-session", "-1", "--field", "summary")
	note, err := os.ReadFile(filepath.Join(dir, ".baton", "validated.json"))
	if err != nil || !strings.Contains(string(note), `"progress.json"`) {
		t.Fatalf("no note of the validation: %v %s", err, note)
	}
	if again := mustBaton(t, dir, "progress", "get-session", "-1", "--field", "summary"); again != first {
		t.Fatalf("the read on the note printed %q, the first %q", again, first)
	}
	cut := st.Progress[:len(st.Progress)-40]
	if err := os.WriteFile(path, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := baton(t, dir, "progress", "get-session", "-1", "--field", "summary"); r.code != 6 || r.stdout != "" {
		t.Fatalf("a file cut short after the note: %v", r)
	}
}

// TestFirstContactBlocks: a copy of a state file larger than 1 MiB, put
// back under a new identity, is read checking only the blocks the read
// takes against the sums the log's head vouches for: the member beside
// the arrays and the last record. A copy edited elsewhere still answers
// those reads as the recorded version would (nothing it reads differs),
// and is noted nowhere; a read that needs the edited part, a read of an
// edited part and a write refuse it.
func TestFirstContactBlocks(t *testing.T) {
	dir := newProject(t)
	st, err := gen.Write(dir, gen.Size{Sessions: 2000, Reviews: 20, Fixes: 10, Features: 20}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Progress) <= 1<<20 {
		t.Fatalf("the generated progress.json has %d bytes: too small to be read by blocks", len(st.Progress))
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
		if note, _ := os.ReadFile(filepath.Join(dir, ".baton", "validated.json")); bytes.Contains(note, []byte(progressName)) {
			t.Fatalf("%s: a read of some blocks noted the file as validated: %s", what, note)
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
	reads("a copy edited in an old session")
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
