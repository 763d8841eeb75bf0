package store

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"testing"
)

// TestLogBefore: entries staged with LogBefore are appended before the
// transaction's own event, in order, chained to the log and to each other,
// each signed with its key; a transaction that fails appends none of them.
func TestLogBefore(t *testing.T) {
	s := newTracked(t)
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	other := ed25519.NewKeyFromSeed([]byte("another key's seed, 32 bytes...."))
	pub := key.Public().(ed25519.PublicKey)
	err := s.Update(context.Background(), func(tx *Tx) error {
		tx.Write("state.json", []byte("{\"a\": 2}\n"))
		for _, ts := range []string{"2025-01-01T10:00:00Z", "2025-01-02T10:00:00Z"} {
			tx.LogBefore(Event{Type: "imported", Timestamp: ts, Payload: json.RawMessage(`{"x":1}`)}, "person:k", key)
		}
		tx.LogSigned(Event{Type: "task"}, "person:k", key)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(key, make([]byte, len(key))) {
		t.Error("the signing key given to the transaction is not zeroed after it")
	}
	events, err := s.ReadEvents()
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 4 {
		t.Fatalf("got %d events, want 4 (the first, two imported, the transaction's)", len(events))
	}
	if p := CheckChain(events); len(p) > 0 {
		t.Fatalf("chain broken: %+v", p)
	}
	for i, want := range []string{"task", "imported", "imported", "task"} {
		e := events[i]
		if e.Type != want || e.Seq != i+1 {
			t.Errorf("event %d: type %s seq %d, want %s seq %d", i, e.Type, e.Seq, want, i+1)
		}
		if i > 0 && !EventSigned(pub, e.Hash, e.Sig) {
			t.Errorf("event %d: the signature does not check with its key", i)
		}
		if i > 0 && EventSigned(other.Public().(ed25519.PublicKey), e.Hash, e.Sig) {
			t.Errorf("event %d: the signature checks with another key", i)
		}
		if i > 1 && EventSigned(pub, events[i-1].Hash, e.Sig) {
			t.Errorf("event %d: its signature checks for another entry", i)
		}
	}
	if events[1].Timestamp != "2025-01-01T10:00:00Z" || events[2].Timestamp != "2025-01-02T10:00:00Z" {
		t.Errorf("imported entries keep their own times: %s, %s", events[1].Timestamp, events[2].Timestamp)
	}
	if events[3].Metadata.Files["state.json"] != HashContent([]byte("{\"a\": 2}\n")) {
		t.Errorf("the transaction's event records the file it wrote: %v", events[3].Metadata.Files)
	}

	boom := errors.New("boom")
	err = s.Update(context.Background(), func(tx *Tx) error {
		tx.LogBefore(Event{Type: "imported"}, "person:k", key)
		tx.LogSigned(Event{Type: "task"}, "person:k", key)
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want the transaction's error", err)
	}
	if after, _ := s.ReadEvents(); len(after) != 4 {
		t.Errorf("a failed transaction appended %d entries", len(after)-4)
	}
}

// The cost of checking one entry's signature, which verify pays per
// entry. (go test -run='^$' -bench=EventSigned ./internal/store)
func BenchmarkEventSigned(b *testing.B) {
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	hash := "3f1c0ab2d4e5f60718293a4b5c6d7e8f3f1c0ab2d4e5f60718293a4b5c6d7e8f"
	sig, pub := SignEvent(key, hash), key.Public().(ed25519.PublicKey)
	for b.Loop() {
		if !EventSigned(pub, hash, sig) {
			b.Fatal("signature does not check")
		}
	}
}
