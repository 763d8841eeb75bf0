package store

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A committed journal replacing a file over 256 KiB, killed before its
// audit entry is appended, must be finished by recovery.
func TestReplayLongReplacedFile(t *testing.T) {
	s := New(t.TempDir())
	s.Tracked = []string{"f.json"}
	s.Create = true
	big := []byte("[\"" + strings.Repeat("x", 300<<10) + "\"]\n")
	SetFaultHook(func(step string) error {
		if step == StepAppend {
			return errors.New("killed")
		}
		return nil
	})
	err := s.Update(context.Background(), func(tx *Tx) error {
		tx.WriteSegments("f.json", [][]byte{big}, nil)
		tx.Log(Event{Type: "task"})
		return nil
	})
	SetFaultHook(nil)
	if err == nil || !exists(s.journalPath()) {
		t.Fatalf("no committed journal left: %v", err)
	}
	if err := s.Update(context.Background(), func(*Tx) error { return nil }); err != nil {
		t.Fatalf("recovery: %v", err)
	}
	head, _, _ := s.lastEvent()
	if head == nil || head.Metadata.Files["f.json"] != HashContent(big) {
		t.Fatalf("the committed transaction's audit entry was dropped by replay (head %+v)", head)
	}
	if d, _, _ := s.CheckDrift(false); len(d) != 0 {
		t.Fatalf("drift after recovery: %+v", d)
	}
}
