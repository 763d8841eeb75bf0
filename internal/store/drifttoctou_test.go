package store

import (
	"bytes"
	"context"
	"os"
	"testing"
)

// An edit landing between the drift check's read and the transaction's
// own read (a window that includes the git subprocess) must not be taken
// as the file's content and written back as baton's: the transaction uses
// the bytes the drift check hashed, and the edit is left for the next
// drift check to find.
func TestEditBetweenDriftAndRead(t *testing.T) {
	s := newTracked(t)
	evil := []byte("{\"who\": \"EVIL\"}\n")
	err := s.Update(context.Background(), func(tx *Tx) error {
		if d, err := tx.Drift(); err != nil || len(d) != 0 {
			t.Fatalf("drift %v, %v before the edit", d, err)
		}
		if err := os.WriteFile(s.Path("state.json"), evil, 0o644); err != nil {
			t.Fatal(err)
		}
		old, err := tx.Read("state.json")
		if err != nil {
			return err
		}
		if bytes.Contains(old, []byte("EVIL")) {
			t.Errorf("the transaction read the edit made after its drift check: %s", old)
		}
		tx.Write("state.json", append(bytes.Clone(old), ' '))
		tx.Log(Event{Type: "task"})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ev, _, _ := s.lastEvent()
	if ev.Metadata.Files["state.json"] == HashContent(append(bytes.Clone(evil), ' ')) {
		t.Fatal("the log records the edit as baton's content")
	}
}
