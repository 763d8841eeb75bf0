package store

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/baton-cli/baton/internal/errs"
)

// TestLogGap: a write chains to the log only while no anchor is ahead of
// it. The log deleted, its tail truncated, or an entry rewritten at the
// anchored sequence refuse the write (exit 6, nothing appended, the anchor
// kept); an anchor behind the log (a kill between the append and the
// anchor's write) is no gap; AllowLogGap lets a person's write through.
func TestLogGap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, s *Store)
		gap   bool
	}{
		{"intact", func(*testing.T, *Store) {}, false},
		{"log deleted", func(t *testing.T, s *Store) { must(t, os.Remove(s.EventsPath())) }, true},
		{"tail truncated", func(t *testing.T, s *Store) { dropLastLines(t, s.EventsPath(), 1) }, true},
		{"last entry rewritten", func(t *testing.T, s *Store) {
			dropLastLines(t, s.EventsPath(), 1)
			logOne(t, s, true) // a new entry at the anchored sequence
		}, true},
		{"anchors behind the log", func(t *testing.T, s *Store) {
			head, err := os.ReadFile(s.anchorFile())
			must(t, err)
			logOne(t, s, false)
			for _, p := range []string{s.anchorFile(), s.AnchorPath} { // as a kill before the anchor's write leaves them
				must(t, os.WriteFile(p, head, 0o644))
			}
		}, false},
		{"anchor behind a rewritten log", func(t *testing.T, s *Store) {
			head, err := os.ReadFile(s.anchorFile())
			must(t, err)
			dropLastLines(t, s.EventsPath(), 1)
			logOne(t, s, true)
			logOne(t, s, true)
			for _, p := range []string{s.anchorFile(), s.AnchorPath} {
				must(t, os.WriteFile(p, head, 0o644))
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTracked(t)
			s.AnchorPath = filepath.Join(t.TempDir(), "outside", "anchor.json")
			logOne(t, s, false)
			logOne(t, s, false)
			tc.spoil(t, s)
			before, _ := os.ReadFile(s.EventsPath())
			anchored, _ := os.ReadFile(s.AnchorPath)
			gap, err := s.LogGap()
			must(t, err)
			if (gap != nil) != tc.gap {
				t.Fatalf("LogGap: %+v, want a gap: %v", gap, tc.gap)
			}
			err = s.Update(context.Background(), func(tx *Tx) error { tx.Log(Event{Type: "task"}); return nil })
			if !tc.gap {
				must(t, err)
				return
			}
			if errs.Code(err) != 6 {
				t.Fatalf("write over a gap: %v (exit %d), want exit 6", err, errs.Code(err))
			}
			after, _ := os.ReadFile(s.EventsPath())
			if now, _ := os.ReadFile(s.AnchorPath); !bytes.Equal(before, after) || !bytes.Equal(anchored, now) {
				t.Fatal("a refused write changed the log or the outside anchor")
			}
			s.AllowLogGap = true
			must(t, s.Update(context.Background(), func(tx *Tx) error { tx.Log(Event{Type: "reconcile"}); return nil }))
			s.AllowLogGap = false
			if gap, err := s.LogGap(); err != nil || gap != nil {
				t.Fatalf("after the person's write: gap %+v, %v", gap, err)
			}
		})
	}
}

func (s *Store) anchorFile() string { return filepath.Join(s.BatonDir(), HeadName) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// logOne appends one entry; with bypass, as a writer that ignores anchors
// (and leaves them as they were).
func logOne(t *testing.T, s *Store, bypass bool) {
	t.Helper()
	var saved [][]byte
	paths := []string{s.anchorFile(), s.AnchorPath}
	if bypass {
		for _, p := range paths {
			b, _ := os.ReadFile(p)
			saved = append(saved, b)
		}
		s.AllowLogGap = true
		defer func() { s.AllowLogGap = false }()
	}
	typ := "task"
	if bypass {
		typ = "forged" // never the same entry as the one it replaces
	}
	must(t, s.Update(context.Background(), func(tx *Tx) error { tx.Log(Event{Type: typ}); return nil }))
	for i, b := range saved {
		must(t, os.WriteFile(paths[i], b, 0o644))
	}
}

func dropLastLines(t *testing.T, path string, n int) {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	lines := bytes.SplitAfter(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	must(t, os.WriteFile(path, bytes.Join(lines[:len(lines)-n], nil), 0o644))
}
