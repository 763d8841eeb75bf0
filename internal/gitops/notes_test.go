package gitops_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
)

const notesRef = "refs/notes/baton"

// TestNotesAsGitReadsThem: the notes baton writes are git's ('git notes
// show' prints them, a second note keeps the first, a note replaced is
// replaced), and baton reads the notes git writes, fanned out or flat.
func TestNotesAsGitReadsThem(t *testing.T) {
	r := newGitRepo(t)
	c1 := r.commit("a.txt", "one")
	c2 := r.commit("a.txt", "two")
	c3 := r.commit("a.txt", "three")
	who := gitops.Signature{Name: "t", Email: "t@example.test"}
	add := func(obj, text string) {
		t.Helper()
		if err := gitops.AddNote(r.open(), notesRef, obj, []byte(text), who); err != nil {
			t.Fatal(err)
		}
	}
	add(c1, "first\n")
	add(c2, "second\n")
	add(c1, "first, again\n")
	if got := r.git("notes", "--ref=baton", "show", c1); got != "first, again" {
		t.Errorf("git notes show %s = %q", c1, got)
	}
	if got := r.git("notes", "--ref=baton", "show", c2); got != "second" {
		t.Errorf("git notes show %s = %q", c2, got)
	}
	if n := r.git("rev-list", "--count", notesRef); n != "3" {
		t.Errorf("the notes ref has %s commits, want one per note written", n)
	}
	if log := r.git("reflog", "show", "--format=%gs", notesRef); !strings.Contains(log, "Notes added by 'baton'") {
		t.Errorf("the notes ref's reflog: %q", log)
	}
	r.git("notes", "--ref=baton", "add", "-m", "by git", c3)
	// a fanned-out tree, as git makes for many notes: c2's note under ab/cdef...
	blob := r.git("rev-parse", "refs/notes/baton:"+c2)
	sub := mktree(t, r, "100644 blob "+blob+"\t"+c2[2:]+"\n")
	flat := strings.Split(r.git("ls-tree", "refs/notes/baton"), "\n")
	var entries []string
	for _, e := range flat {
		if !strings.HasSuffix(e, c2) {
			entries = append(entries, e)
		}
	}
	root := mktree(t, r, strings.Join(append(entries, "040000 tree "+sub+"\t"+c2[:2]), "\n")+"\n")
	fanned := r.git("commit-tree", "-p", notesRef, "-m", "fan out", root)
	r.git("update-ref", notesRef, fanned)
	if got := r.git("notes", "--ref=baton", "show", c2); got != "second" {
		t.Fatalf("the fanned-out tree is not one git reads: %q", got)
	}
	notes, err := gitops.Notes(r.open(), notesRef)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{c1: "first, again\n", c2: "second\n", c3: "by git\n"}
	if len(notes) != len(want) {
		t.Errorf("Notes = %d notes, want %d: %q", len(notes), len(want), notes)
	}
	for obj, text := range want {
		if string(notes[obj]) != text {
			t.Errorf("note of %s = %q, want %q", gitops.Short(obj), notes[obj], text)
		}
	}
	add(c2, "replaced\n") // the fanned-out note goes, the new one is flat
	if got := r.git("notes", "--ref=baton", "show", c2); got != "replaced" {
		t.Errorf("after replacing the fanned-out note: %q", got)
	}
	if got := r.git("notes", "--ref=baton", "list"); strings.Count(got, c2) != 1 {
		t.Errorf("git notes list names %s %d times:\n%s", gitops.Short(c2), strings.Count(got, c2), got)
	}
	r.git("fsck", "--strict", "--no-dangling")
}

// TestNoteUnderGitsLock: while baton writes a note it holds git's lock of
// the notes ref, so a git writer cannot move it in between.
func TestNoteUnderGitsLock(t *testing.T) {
	r := newGitRepo(t)
	c1 := r.commit("a.txt", "one")
	g := r.open()
	who := gitops.Signature{Name: "t", Email: "t@example.test"}
	if err := gitops.AddNote(g, notesRef, c1, []byte("x\n"), who); err != nil {
		t.Fatal(err)
	}
	restore := gitops.SetAfterStep(func(step string) {
		if step == "locked" {
			cmd := exec.Command("git", "notes", "--ref=baton", "add", "-f", "-m", "git's", c1)
			cmd.Dir = r.dir
			if out, err := cmd.CombinedOutput(); err == nil {
				t.Errorf("git wrote the notes ref while baton held its lock: %s", out)
			}
		}
	})
	defer restore()
	if err := gitops.AddNote(g, notesRef, c1, []byte("y\n"), who); err != nil {
		t.Fatalf("with git refused by the lock, baton's write goes through: %v", err)
	}
	restore()
	if got := r.git("notes", "--ref=baton", "show", c1); got != "y" {
		t.Errorf("note = %q", got)
	}
}

func mktree(t *testing.T, r *gitRepo, entries string) string {
	t.Helper()
	cmd := exec.Command("git", "mktree")
	cmd.Dir = r.dir
	cmd.Stdin = strings.NewReader(entries)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git mktree: %v", err)
	}
	return strings.TrimSpace(string(out))
}
