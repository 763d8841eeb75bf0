//go:build unix

package store

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// overwrite writes only a regular file of one link, in place; anything
// else is refused with nothing written.
func TestOverwrite(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		make   func(p string)
		wantOK bool
	}{
		{"regular, longer before", func(p string) { write(p, "a much longer old content") }, true},
		{"regular, shorter before", func(p string) { write(p, "x") }, true},
		{"missing", func(string) {}, false},
		{"directory", func(p string) { os.Mkdir(p, 0o755) }, false},
		{"fifo", func(p string) { syscall.Mkfifo(p, 0o644) }, false},
		{"symbolic link", func(p string) { os.Symlink(outside, p) }, false},
		{"hard link", func(p string) { os.Link(outside, p) }, false},
	} {
		write(outside, "outside")
		p := filepath.Join(dir, "f")
		os.RemoveAll(p)
		tc.make(p)
		err := overwrite(p, []byte("new content"))
		if (err == nil) != tc.wantOK {
			t.Errorf("%s: overwrite error %v, want ok %v", tc.name, err, tc.wantOK)
		}
		if b, _ := os.ReadFile(outside); string(b) != "outside" {
			t.Errorf("%s: wrote through to another file: %q", tc.name, b)
		}
		if tc.wantOK {
			if b, _ := os.ReadFile(p); string(b) != "new content" {
				t.Errorf("%s: file holds %q", tc.name, b)
			}
		}
	}
}

// The recorded copy of a small file is rewritten in place (no new inode
// per write) and always holds, and is checked as, the version the last
// event recorded; a copy that is a link to another file is replaced, never
// written through.
func TestRecordedCopyInPlace(t *testing.T) {
	s, _ := newBig(t)
	rec := s.recordedPath("small.json")
	ino := inodeOf(t, rec)
	outside := filepath.Join(t.TempDir(), "outside")
	for i, link := range []string{"", "hard", "symbolic"} {
		os.WriteFile(outside, []byte("outside"), 0o644)
		switch link {
		case "hard":
			os.Remove(rec)
			os.Link(outside, rec)
		case "symbolic":
			os.Remove(rec)
			os.Symlink(outside, rec)
		}
		content := bytes.Repeat([]byte("b"), 10+i)
		if err := s.Update(context.Background(), func(tx *Tx) error {
			tx.Write("small.json", content)
			tx.Log(Event{Type: "task"})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(outside); string(b) != "outside" {
			t.Fatalf("%s link: the recorded copy was written through: %q", link, b)
		}
		last, _, _ := s.lastEvent()
		if got, ok := s.Recorded("small.json", last.Metadata.Files["small.json"]); !ok || !bytes.Equal(got, content) {
			t.Fatalf("%s link: recorded copy %q (kept %v), want %q", link, got, ok, content)
		}
		if fi, err := os.Lstat(rec); err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("%s link: recorded copy is not a regular file: %v", link, err)
		}
		if link == "" && inodeOf(t, rec) != ino {
			t.Error("the recorded copy was replaced, not rewritten in place")
		}
	}
}

// firstLine returns the first line whatever the page size, or what it read
// of a file without one, up to its limit.
func TestFirstLine(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		content string
		max     int
		want    string
	}{
		{"", 100, ""},
		{"one\ntwo\n", 100, "one"},
		{"no newline", 100, "no newline"},
		{strings.Repeat("a", 10000) + "\nb", 64 << 10, strings.Repeat("a", 10000)},
		{strings.Repeat("a", 5000) + "\n", 4096, strings.Repeat("a", 4096)},
	} {
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(firstLine(f, tc.max)); got != tc.want {
			t.Errorf("firstLine of %d bytes (max %d) = %d bytes, want %d", len(tc.content), tc.max, len(got), len(tc.want))
		}
		f.Close()
	}
}

// A transaction removes what a killed writer or reader left (staged files,
// journal and note temps) and nothing else, the journal's spare files
// included.
func TestStaleTempsRemoved(t *testing.T) {
	s, _ := newBig(t)
	bd := s.BatonDir()
	stale := []string{filepath.Join(s.Dir, ".progress.json.123.baton-tx"), filepath.Join(bd, ".sessions.json.9.baton-tx"),
		filepath.Join(bd, ".journal.77.tmp"), filepath.Join(bd, "."+validatedName+".5.tmp")}
	kept := []string{filepath.Join(s.Dir, "notes.baton-tx"), filepath.Join(s.Dir, ".journal.7.tmp"), filepath.Join(bd, ".journal.tmp"),
		filepath.Join(bd, "journal.ready"), filepath.Join(bd, "journal.spare"), filepath.Join(bd, "stamps.json.tmp")}
	for _, p := range append(append([]string{}, stale...), kept...) {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	driftOnly(t, s, nil)
	for _, p := range stale {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was left", p)
		}
	}
	for _, p := range kept {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed", p)
		}
	}
}
