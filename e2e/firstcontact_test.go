package e2e

import (
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
