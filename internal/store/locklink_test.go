package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/baton-cli/baton/internal/errs"
)

// leaveJournal is a store whose last transaction committed and was killed
// before its journal was removed: the next command recovers it.
func leaveJournal(t *testing.T) *Store {
	t.Helper()
	s := New(t.TempDir())
	s.Create = true
	s.Tracked = []string{"a.json"}
	write := func(content string) error {
		return s.Update(context.Background(), func(tx *Tx) error {
			tx.Write("a.json", []byte(content))
			tx.Log(Event{Type: "task"})
			return nil
		})
	}
	if err := write("{\"a\": 1}\n"); err != nil {
		t.Fatal(err)
	}
	SetFaultHook(func(step string) error {
		if step == StepJournalRemove {
			return errors.New("killed")
		}
		return nil
	})
	_ = write("{\"a\": 2}\n")
	SetFaultHook(nil)
	if !exists(s.journalPath()) {
		t.Fatal("no journal left")
	}
	return s
}

// TestReaderRecoveryFollowsNoLockLink: a reader that finds a journal to
// recover does not open a link planted at either lock file (which would
// create the file it leads to): it refuses (exit 6), as a writer does.
func TestReaderRecoveryFollowsNoLockLink(t *testing.T) {
	for _, lock := range []string{"lock", applyLockName} {
		t.Run(lock, func(t *testing.T) {
			s := leaveJournal(t)
			target := filepath.Join(t.TempDir(), "planted")
			p := filepath.Join(s.BatonDir(), lock)
			os.Remove(p)
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			if err := s.RecoverIfNeeded(context.Background()); errs.KindOf(err) != errs.Invalid {
				t.Errorf("a reader's recovery: %v, want a refusal (invalid state)", err)
			}
			if s.applying() {
				t.Error("a link at a lock file was taken for a writer applying")
			}
			if _, err := os.Stat(target); err == nil {
				t.Errorf("%s was created through the link at .baton/%s", target, lock)
			}
		})
	}
}

// TestVouchReadRefusesAChangeDuringTheRead: a large file the drift check
// took on its stamp's identity, changed by an outsider after the check and
// again while the transaction reads it whole, is refused — the bytes read
// are not the version the stamp and the log vouch for.
func TestVouchReadRefusesAChangeDuringTheRead(t *testing.T) {
	s, big := newBig(t)
	edited := bytes.Replace(big, []byte(`"x"`), []byte(`"z"`), 1)
	err := s.Update(context.Background(), func(tx *Tx) error {
		if _, err := tx.Drift(); err != nil {
			return err
		}
		if err := os.WriteFile(s.Path("big.json"), edited, 0o644); err != nil {
			t.Fatal(err)
		}
		f, fi, err := OpenRegular(s.Path("big.json"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		data, err := readAll(f, fi.Size())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.Path("big.json"), append(edited, ' '), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := tx.vouchRead("big.json", f, fi, data); errs.KindOf(err) != errs.Invalid {
			t.Errorf("edited bytes whose file changed during the read: %v, want a refusal", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPendingJournalRewrittenDuringTheRead: a reader whose read of the
// journal overlaps its file's reuse for a later commit (retired, then
// rewritten in place) does not take those bytes as the committed journal.
func TestPendingJournalRewrittenDuringTheRead(t *testing.T) {
	s := leaveJournal(t)
	if s.pendingJournal() == nil {
		t.Fatal("the journal left is not read")
	}
	defer func(f func(string)) { afterJournalRead = f }(afterJournalRead)
	afterJournalRead = func(path string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("\n"))
		f.Close()
	}
	if j := s.pendingJournal(); j != nil {
		t.Fatal("a journal rewritten during the read was taken as committed")
	}
}

// A journal retired during the read (its file renamed away, as it is once
// applied) is not taken as the committed one, even when its identity holds
// (times too coarse to show a rewrite in place).
func TestPendingJournalRetiredDuringTheRead(t *testing.T) {
	s := leaveJournal(t)
	defer func(f func(string)) { afterJournalRead = f }(afterJournalRead)
	afterJournalRead = func(path string) {
		if err := os.Rename(path, path+".spare"); err != nil {
			t.Fatal(err)
		}
	}
	if j := s.pendingJournal(); j != nil {
		t.Fatal("a journal retired during the read was taken as committed")
	}
}

// A journal's line read with another journal's data of the same lengths
// (a file rewritten in place under a reader) does not decode.
func TestJournalDataMatchesItsLine(t *testing.T) {
	j := journal{Patches: []patchEntry{{Dst: "/x", Off: 3, Data: []byte("abcdef"), Size: 9}}}
	data := bytes.Join(journalPieces(j), nil)
	if _, err := decodeJournal(data); err != nil {
		t.Fatalf("a journal's own file: %v", err)
	}
	mixed := bytes.Replace(data, []byte("abcdef"), []byte("uvwxyz"), 1)
	if _, err := decodeJournal(mixed); err == nil {
		t.Fatal("a journal's line with other data of the same length decoded")
	}
}
