package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLineDifference(t *testing.T) {
	for _, c := range []struct{ old, now, want string }{
		{"a\nb\nc\n", "a\nB\nc\n", `line 2 was "b", now "B"`},
		{"a\nb\n", "a\nb\nc\n", `line 3 was (nothing), now "c"`},
		{"a\nb\nc\nd\n", "a\nd\n", `line 2 was "b", now (nothing) (2 lines removed, 0 added)`},
		{"x", "y", `line 1 was "x", now "y"`},
	} {
		if got := lineDifference([]byte(c.old), []byte(c.now)); got != c.want {
			t.Errorf("lineDifference(%q, %q) = %q, want %q", c.old, c.now, got, c.want)
		}
	}
}

func TestListingDifference(t *testing.T) {
	got := listingDifference(map[string]string{"A.md": "1", "B.md": "2"}, map[string]string{"B.md": "3", "C.md": "4"})
	if want := "A.md removed, B.md changed, C.md added"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if listingHash(nil) != "" || listingHash(map[string]string{"a": "1"}) == listingHash(map[string]string{"a": "2"}) {
		t.Error("listingHash: empty must be \"\", and a changed file must change the hash")
	}
}

// newTracked is a store with one tracked file and a logged first event.
func newTracked(t testing.TB) *Store {
	t.Helper()
	s := New(t.TempDir())
	s.Create = true
	s.Tracked = []string{"state.json", "prompts/"}
	if err := s.Update(context.Background(), func(tx *Tx) error {
		tx.Write("state.json", []byte("{\"a\": 1}\n"))
		tx.Log(Event{Type: "task"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCheckDrift(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(s *Store)
		file   string
		diff   string
	}{
		{"nothing", func(*Store) {}, "", ""},
		{"edited", func(s *Store) { os.WriteFile(s.Path("state.json"), []byte("{\"a\": 2}\n"), 0o644) }, "state.json", `line 1 was "{\"a\": 1}", now "{\"a\": 2}"`},
		{"edited in place, size and time kept", func(s *Store) {
			p := s.Path("state.json")
			fi, _ := os.Stat(p)
			f, _ := os.OpenFile(p, os.O_WRONLY, 0)
			f.WriteAt([]byte("3"), 6)
			f.Close()
			os.Chtimes(p, fi.ModTime(), fi.ModTime())
		}, "state.json", `line 1 was "{\"a\": 1}", now "{\"a\": 3}"`},
		{"deleted", func(s *Store) { os.Remove(s.Path("state.json")) }, "state.json", "it was deleted"},
		{"a file in a tracked directory", func(s *Store) {
			os.MkdirAll(s.Path("prompts/"), 0o755)
			os.WriteFile(filepath.Join(s.Path("prompts/"), "REVIEW.md"), []byte("x"), 0o644)
		}, "prompts/", "REVIEW.md added"},
		{"log deleted", func(s *Store) { os.Remove(s.EventsPath()) }, ".baton/events.jsonl", "the audit log is gone"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newTracked(t)
			c.change(s)
			d, _, err := s.CheckDrift()
			if err != nil {
				t.Fatal(err)
			}
			if c.file == "" {
				if len(d) != 0 {
					t.Fatalf("drift %+v, want none", d)
				}
				return
			}
			if len(d) != 1 || d[0].File != c.file || !strings.Contains(d[0].Difference, c.diff) {
				t.Fatalf("drift %+v, want %s: %s", d, c.file, c.diff)
			}
		})
	}
}
