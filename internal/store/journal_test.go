package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/errs"
)

// writeA commits content as a.json, with an audit entry.
func writeA(s *Store, content string) error {
	return s.Update(context.Background(), func(tx *Tx) error {
		tx.Write("a.json", []byte(content))
		tx.Log(Event{Type: "task"})
		return nil
	})
}

// stoppedAt is a store whose second transaction stopped at step (the
// fault hook fails it there, as a writer killed or stopped there leaves
// it): {"a": 1} committed, {"a": 2} in flight.
func stoppedAt(t *testing.T, step string) *Store {
	t.Helper()
	s := New(t.TempDir())
	s.Create = true
	s.Tracked = []string{"a.json"}
	if err := writeA(s, "{\"a\": 1}\n"); err != nil {
		t.Fatal(err)
	}
	SetFaultHook(func(st string) error {
		if st == step {
			return errors.New("killed")
		}
		return nil
	})
	_ = writeA(s, "{\"a\": 2}\n")
	SetFaultHook(nil)
	return s
}

// leaveJournal is a store whose last transaction committed and was killed
// before its journal was removed: the next command recovers it.
func leaveJournal(t *testing.T) *Store {
	t.Helper()
	s := stoppedAt(t, StepJournalRemove)
	if !exists(s.journalPath()) {
		t.Fatal("no journal left")
	}
	return s
}

// A writer stopped after its commit point, at any step before its journal
// is removed, leaves a reader the committed state to read: the staged file
// (or the file, once renamed), the audit entry appended or not, and no
// drift between them.
func TestReaderReadsThroughACommittedJournal(t *testing.T) {
	for _, step := range []string{StepRename, StepAppend, StepApplySync, StepJournalRemove} {
		t.Run(step, func(t *testing.T) {
			s := stoppedAt(t, step)
			if !exists(s.journalPath()) {
				t.Fatal("no journal left")
			}
			data, err := s.readCommitted("a.json")
			if err != nil || string(data) != "{\"a\": 2}\n" {
				t.Fatalf("read %q, %v: want the committed content", data, err)
			}
			if d, err := s.Replaced("a.json", data); d != nil || err != nil {
				t.Errorf("the committed content read as replaced: %+v, %v", d, err)
			}
			if d, _, err := s.CheckDrift(); len(d) != 0 || err != nil {
				t.Errorf("drift %+v, %v: want none", d, err)
			}
			events, err := s.ReadEvents()
			if err != nil || len(events) != 2 || len(CheckChain(events)) != 0 {
				t.Errorf("the log read as %d entries (%v), chain %v: want both, chained", len(events), err, CheckChain(events))
			}
			// the next command finishes it, once
			if err := s.RecoverIfNeeded(context.Background()); err != nil {
				t.Fatal(err)
			}
			if exists(s.journalPath()) {
				t.Error("the journal is left after recovery")
			}
			if events, _ := s.ReadEvents(); len(events) != 2 {
				t.Errorf("%d entries after recovery, want 2", len(events))
			}
		})
	}
}

// A writer stopped before its commit point leaves the last committed
// state, and nothing a reader would read through.
func TestFailureBeforeCommitPointLeavesNothing(t *testing.T) {
	for _, step := range []string{StepEvent, StepTemp, StepSyncTemps, StepJournal, StepJournalRename, StepJournalSync} {
		t.Run(step, func(t *testing.T) {
			s := stoppedAt(t, step)
			if exists(s.journalPath()) {
				t.Fatal("a journal was left")
			}
			if data, _ := s.readCommitted("a.json"); string(data) != "{\"a\": 1}\n" {
				t.Errorf("read %q, want the content before", data)
			}
			if tmps, _ := filepath.Glob(filepath.Join(s.Dir, ".*"+tempSuffix)); len(tmps) != 0 {
				t.Errorf("temp files left: %v", tmps)
			}
			if events, _ := s.ReadEvents(); len(events) != 1 {
				t.Errorf("%d entries, want 1", len(events))
			}
		})
	}
}

// A write to a state file that is a symbolic link replaces the file it
// leads to, beside itself, and leaves the link a link.
func TestWriteThroughSymlink(t *testing.T) {
	s := New(t.TempDir())
	s.Create = true
	s.Tracked = []string{"a.json"}
	real := filepath.Join(t.TempDir(), "elsewhere.json")
	if err := os.WriteFile(real, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, s.Path("a.json")); err != nil {
		t.Fatal(err)
	}
	if err := writeA(s, "{\"a\": 1}\n"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(s.Path("a.json")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("a.json is no longer a link: %v", err)
	}
	if b, _ := os.ReadFile(real); string(b) != "{\"a\": 1}\n" {
		t.Errorf("the file the link leads to holds %q", b)
	}
}

// A failed transaction's temp files, and a dead one's, are removed by the
// next transaction; temps of another kind are left alone.
func TestStaleTempsRemoved(t *testing.T) {
	s := leaveJournal(t)
	stale := []string{filepath.Join(s.Dir, ".a.json.123"+tempSuffix), filepath.Join(s.BatonDir(), ".journal.9.tmp")}
	keep := filepath.Join(s.Dir, ".a.json.5.tmp")
	for _, p := range append(stale, keep) {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeA(s, "{\"a\": 3}\n"); err != nil {
		t.Fatal(err)
	}
	for _, p := range stale {
		if exists(p) {
			t.Errorf("%s left", p)
		}
	}
	if !exists(keep) {
		t.Errorf("%s removed", keep)
	}
}

// The version replaced is kept in .baton/backup; the version recorded is
// kept in .baton/recorded, and an edit made outside baton since is shown
// against it.
func TestBackupAndRecordedCopy(t *testing.T) {
	s := New(t.TempDir())
	s.Create = true
	s.Tracked = []string{"a.json"}
	for _, c := range []string{"{\"a\": 1}\n", "{\"a\": 2}\n"} {
		if err := writeA(s, c); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(s.BackupPath("a.json")); string(b) != "{\"a\": 1}\n" {
		t.Errorf("backup %q, want the version before", b)
	}
	if b, _ := os.ReadFile(s.recordedPath("a.json")); string(b) != "{\"a\": 2}\n" {
		t.Errorf("recorded copy %q, want the version recorded", b)
	}
	if err := os.WriteFile(s.Path("a.json"), []byte("{\"a\": 9}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, _, _ := s.CheckDrift()
	if len(d) != 1 || !strings.Contains(d[0].Difference, `now "{\"a\": 9}"`) {
		t.Errorf("drift %+v, want the line difference", d)
	}
}

// TestReaderRecoveryFollowsNoLockLink: a reader that finds a journal to
// recover does not open a link planted at the lock file (which would
// create the file it leads to): it refuses (exit 6), as a writer does.
func TestReaderRecoveryFollowsNoLockLink(t *testing.T) {
	s := leaveJournal(t)
	target := filepath.Join(t.TempDir(), "planted")
	p := filepath.Join(s.BatonDir(), "lock")
	os.Remove(p)
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	if err := s.RecoverIfNeeded(context.Background()); errs.KindOf(err) != errs.Invalid {
		t.Errorf("a reader's recovery: %v, want a refusal (invalid state)", err)
	}
	if _, err := os.Stat(target); err == nil {
		t.Errorf("%s was created through the link at .baton/lock", target)
	}
}
