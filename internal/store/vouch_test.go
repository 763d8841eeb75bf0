package store

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/baton-cli/baton/internal/errs"
)

// newBig is a store tracking a small and a large file (above copyLimit),
// both written and logged by a first transaction.
func newBig(t *testing.T) (*Store, []byte) {
	t.Helper()
	s := New(t.TempDir())
	s.Create = true
	s.Tracked = []string{"small.json", "big.json"}
	big := append(append([]byte(`{"x": "`), bytes.Repeat([]byte("a"), copyLimit+10)...), "\"}\n"...)
	if err := s.Update(context.Background(), func(tx *Tx) error {
		tx.Write("small.json", []byte("{\"a\": 1}\n"))
		tx.Write("big.json", big)
		tx.Log(Event{Type: "task"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return s, big
}

// restore replaces name by a copy of the same content: another identity,
// as a file restored from git has, which no stamp vouches for.
func restore(t *testing.T, s *Store, name string) {
	t.Helper()
	b, err := os.ReadFile(s.Path(name))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(s.Path(name))
	if err := os.WriteFile(s.Path(name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// driftOnly runs a transaction that checks drift, reads the files and
// writes nothing; during runs after the drift check.
func driftOnly(t *testing.T, s *Store, during func(tx *Tx)) []Drift {
	t.Helper()
	var d []Drift
	err := s.Update(context.Background(), func(tx *Tx) error {
		var err error
		if d, err = tx.Drift(); err != nil {
			return err
		}
		if during != nil {
			during(tx)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func stampOf(s *Store, name string) (stamp, bool) {
	sf, ok := s.loadStamps()
	st, found := sf.Files[s.key(name)]
	return st, ok && found
}

// A restored file that holds what the last event recorded is stamped by the
// transaction that read it: the next drift check takes the large one
// unread (by its hash only: readers still validate it), and the small one
// is trusted with the facts the transaction validated it with.
func TestVouchRestoredFiles(t *testing.T) {
	s, _ := newBig(t)
	restore(t, s, "big.json")
	restore(t, s, "small.json")
	d := driftOnly(t, s, func(tx *Tx) {
		if _, _, ok, _ := tx.ReadTrusted("small.json"); ok {
			t.Error("a restored file was trusted")
		}
		tx.Validated("small.json", []byte(`{"k":{"count":1}}`))
	})
	if len(d) != 0 {
		t.Fatalf("restored as recorded: drift %v", d)
	}
	fi, _ := os.Stat(s.Path("big.json"))
	st, ok := stampOf(s, "big.json")
	if !ok || st.ID != identity(fi) || !st.HashOnly || st.Facts != nil {
		t.Fatalf("big.json's stamp after the transaction: %+v (found %v), want its identity, hash only", st, ok)
	}
	if _, trusted := s.stamped("big.json", fi, nil); trusted {
		t.Error("a hash-only stamp let a reader skip validation")
	}
	fi, _ = os.Stat(s.Path("small.json"))
	if _, trusted := s.stamped("small.json", fi, nil); trusted {
		t.Error("facts no event vouches for were trusted by a reader")
	}
	driftOnly(t, s, func(tx *Tx) {
		if _, read := tx.read["big.json"]; read {
			t.Error("the next drift check read big.json again")
		}
		if _, _, ok, _ := tx.ReadTrusted("big.json"); ok {
			t.Error("a hash-only stamp let the transaction skip validating big.json")
		}
		// no event recorded those facts: a writer validates again
		if _, _, ok, _ := tx.ReadTrusted("small.json"); ok {
			t.Error("facts no event vouches for were trusted by a writer")
		}
		tx.Validated("small.json", []byte(`{"k":{"count":1}}`))
	})
	// a transaction that logs an event records the facts it validated
	if err := s.Update(context.Background(), func(tx *Tx) error {
		if _, err := tx.Drift(); err != nil {
			return err
		}
		tx.Validated("small.json", []byte(`{"k":{"count":1}}`))
		tx.Log(Event{Type: "task"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	driftOnly(t, s, func(tx *Tx) {
		if _, facts, ok, _ := tx.ReadTrusted("small.json"); !ok || string(facts) != `{"k":{"count":1}}` {
			t.Errorf("after an event: small.json trusted %v, facts %s", ok, facts)
		}
	})
	fi, _ = os.Stat(s.Path("small.json"))
	if facts, trusted := New(s.Dir).stamped("small.json", fi, nil); !trusted || string(facts) != `{"k":{"count":1}}` {
		t.Errorf("after an event: a reader takes small.json as stamped %v, with facts %s", trusted, facts)
	}
}

// A file changed after the drift check read it keeps the stamp of the
// version read, which the changed one does not match: the next drift
// check reads it and reports the change. A file that differs from the
// record, or one restored while the stamps are stale, is never vouched for.
func TestVouchNeverCoversAChange(t *testing.T) {
	s, big := newBig(t)
	restore(t, s, "big.json")
	edited := bytes.Replace(big, []byte(`"aaa`), []byte(`"bbb`), 1)
	driftOnly(t, s, func(*Tx) {
		if err := os.WriteFile(s.Path("big.json"), edited, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	d := driftOnly(t, s, nil)
	if len(d) != 1 || d[0].File != "big.json" {
		t.Fatalf("edited after the drift check read it: drift %v, want big.json", d)
	}
	if st, _ := stampOf(s, "big.json"); st.HashOnly {
		fi, _ := os.Stat(s.Path("big.json"))
		if st.ID == identity(fi) {
			t.Fatal("the edited version was stamped")
		}
	}

	s, _ = newBig(t)
	restore(t, s, "small.json")
	os.WriteFile(s.Path("small.json"), []byte("{\"a\": 2}\n"), 0o644)
	if d := driftOnly(t, s, func(tx *Tx) { tx.Validated("small.json", []byte(`{}`)) }); len(d) != 1 {
		t.Fatalf("edited: drift %v", d)
	}
	fi, _ := os.Stat(s.Path("small.json"))
	if _, trusted := s.stamped("small.json", fi, nil); trusted {
		t.Fatal("a file that differs from the record was stamped")
	}
}

// A reader holding a version's content hashes it instead of reading the
// file again, only while the file has that version's identity: a copy
// restored over it since is read and reported.
func TestReplacedReadHashesHeldContent(t *testing.T) {
	s, _ := newBig(t)
	restore(t, s, "small.json") // no stamp vouches for it: it is compared
	held, err := os.ReadFile(s.Path("small.json"))
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(s.Path("small.json"))
	if d, err := s.ReplacedRead("small.json", fi, held); d != nil || err != nil {
		t.Fatalf("the recorded version: %v %v", d, err)
	}
	if d, _ := s.ReplacedRead("small.json", fi, []byte("{\"a\": 9}\n")); d == nil {
		t.Fatal("the held content was not what was hashed") // only a test can hold other bytes under that identity
	}
	os.Remove(s.Path("small.json"))
	os.WriteFile(s.Path("small.json"), []byte("{\"a\": 2}\n"), 0o644)
	if d, _ := s.ReplacedRead("small.json", fi, held); d == nil || d.File != "small.json" {
		t.Fatalf("replaced since the read: %v, want it reported from the file as it is", d)
	}
}

// Content hashed in the background (Hold) is compared as content hashed
// in the foreground: the same hash, the same verdicts.
func TestReplacedHeldHashesInBackground(t *testing.T) {
	s, _ := newBig(t)
	restore(t, s, "small.json")
	data, err := os.ReadFile(s.Path("small.json"))
	if err != nil {
		t.Fatal(err)
	}
	h := Hold(data)
	if h.Sum() != HashContent(data) || h.Sum() != HashContent(data) {
		t.Fatal("the background hash is not the content's")
	}
	fi, _ := os.Stat(s.Path("small.json"))
	if d, err := s.ReplacedHeld("small.json", fi, Hold(data)); d != nil || err != nil {
		t.Fatalf("the recorded version: %v %v", d, err)
	}
	other := Hold([]byte("{\"a\": 9}\n"))
	if d, _ := s.ReplacedHeld("small.json", fi, other); d == nil {
		t.Fatal("the held content was not what was hashed")
	}
	other.Wait()
	var none *Held
	none.Wait() // nothing held: nothing to wait for
	if d, _ := s.ReplacedHeld("small.json", fi, nil); d != nil {
		t.Fatalf("nothing held: the file is read and hashed, found %v", d)
	}
}

// A copy of the stamped version under a new identity (restored from git,
// put back from a backup) is vouched for by its hash: the same bytes, not
// the same size or a look-alike; a stamp that vouches only for a hash
// vouches for nothing here.
func TestVouchedContentByHash(t *testing.T) {
	s, _ := newBig(t)
	restore(t, s, "big.json")
	fi, _ := os.Stat(s.Path("big.json"))
	if _, ok := s.stamped("big.json", fi, nil); ok {
		t.Fatal("the restored copy is stamped by identity")
	}
	data, err := os.ReadFile(s.Path("big.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.VouchedContent("big.json", Hold(data)); !ok {
		t.Fatal("a byte-for-byte copy of the stamped version is not vouched for")
	}
	other := bytes.Clone(data)
	other[len(other)-4] = 'b'
	for what, h := range map[string]*Held{"other bytes of the same size": Hold(other), "a shorter copy": Hold(data[:len(data)-1]), "nothing": Hold(nil)} {
		if _, ok := s.VouchedContent("big.json", h); ok {
			t.Errorf("%s is vouched for", what)
		}
		h.Wait()
	}
	if _, ok := s.VouchedContent("unknown.json", held(data)); ok {
		t.Error("a file without a stamp is vouched for")
	}
	// a stamp the log's head does not vouch for vouches for nothing: one
	// forged for other content and resealed, or marked hash-only
	sf, ok := s.loadStamps()
	if !ok {
		t.Fatal("no stamps")
	}
	genuine := sf.Files[s.key("big.json")]
	forged := genuine
	forged.Hash = HashContent(other)
	sf.Files[s.key("big.json")] = forged
	s.writeStamps(sf.Event, sf.Files)
	if _, ok := s.VouchedContent("big.json", held(other)); ok {
		t.Error("a forged stamp vouches for other content")
	}
	hashOnly := genuine
	hashOnly.HashOnly = true
	sf.Files[s.key("big.json")] = hashOnly
	s.writeStamps(sf.Event, sf.Files)
	if _, ok := s.VouchedContent("big.json", held(data)); ok {
		t.Error("a hash-only stamp vouches for the content's validity")
	}
	sf.Files[s.key("big.json")] = genuine
	s.writeStamps(sf.Event, sf.Files)
	if _, ok := s.VouchedContent("big.json", held(data)); !ok {
		t.Error("the genuine stamp, written again, no longer vouches for its version")
	}
}

func TestSizeIs(t *testing.T) {
	for _, tt := range []struct {
		id   string
		n    int
		want bool
	}{
		{"2049:131:30:1700000000000000000:1700000000.5", 30, true},
		{"2049:30:31:1700000000000000000:1700000000.5", 30, false},
		{"30:1700000000000000000", 30, true},
		{"31:30", 30, false},
		{"", 0, false},
		{"30", 30, false},
	} {
		if got := sizeIs(tt.id, tt.n); got != tt.want {
			t.Errorf("sizeIs(%q, %d) = %v", tt.id, tt.n, got)
		}
	}
}

// A large file the drift check takes on its identity but no stamp the log
// vouches for covers (a hash-only stamp, or one from before the stamps'
// digests) is vouched for by the transaction that reads it whole, when the
// bytes hash to what the log recorded: its facts are stamped with the next
// event, and the writes after it take the file as baton's instead of
// reading and validating it whole every time. An edited copy is not.
func TestLargeFileReadWholeIsVouched(t *testing.T) {
	s, _ := newBig(t)
	restore(t, s, "big.json")
	driftOnly(t, s, nil) // stamps it hash-only
	if st, _ := stampOf(s, "big.json"); !st.HashOnly {
		t.Fatalf("big.json's stamp: %+v, want hash-only", st)
	}
	validate := func() {
		t.Helper()
		if err := s.Update(context.Background(), func(tx *Tx) error {
			if _, err := tx.Drift(); err != nil {
				return err
			}
			if _, _, ok, err := tx.ReadTrusted("big.json"); ok || err != nil {
				t.Errorf("a hash-only stamp was trusted (%v) or the read failed: %v", ok, err)
			}
			tx.Validated("big.json", []byte(`{"k":{"count":1}}`))
			tx.Log(Event{Type: "task"})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	validate()
	driftOnly(t, s, func(tx *Tx) {
		if _, facts, ok, _ := tx.ReadTrusted("big.json"); !ok || string(facts) != `{"k":{"count":1}}` {
			t.Errorf("after a transaction validated it: big.json trusted %v, facts %s", ok, facts)
		}
	})
}

// A large file edited outside baton under the identity its stamp records
// (the stamp rewritten with the edit) is taken by the drift check unread;
// the transaction that then reads it whole finds bytes the log did not
// record and is refused, rather than write the edit back as baton's.
func TestLargeFileEditUnderStampedIdentityIsRefused(t *testing.T) {
	s, big := newBig(t)
	restore(t, s, "big.json")
	driftOnly(t, s, nil) // stamps it hash-only, under the copy's identity
	edited := bytes.Replace(big, []byte(`"aaa`), []byte(`"bbb`), 1)
	if err := os.WriteFile(s.Path("big.json"), edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.PointStamp("big.json"); err != nil {
		t.Fatal(err)
	}
	err := s.Update(context.Background(), func(tx *Tx) error {
		if _, err := tx.Drift(); err != nil {
			return err
		}
		data, _, _, err := tx.ReadTrusted("big.json")
		if err != nil {
			return err
		}
		tx.Write("big.json", data)
		tx.Log(Event{Type: "task"})
		return nil
	})
	if errs.KindOf(err) != errs.Invalid {
		t.Fatalf("an edit under the stamped identity: %v, want a refusal (invalid state)", err)
	}
}
