package store

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/baton-cli/baton/internal/errs"
)

// TestSameContentNewIdentityIsNotRefused: a large file restored from git
// (the same bytes under a new identity) between the drift check and the
// transaction's read holds the log's content: it is not refused.
func TestSameContentNewIdentityIsNotRefused(t *testing.T) {
	s, _ := newBig(t)
	err := s.Update(context.Background(), func(tx *Tx) error {
		if _, err := tx.Drift(); err != nil {
			return err
		}
		restore(t, s, "big.json")
		_, _, _, err := tx.ReadTrusted("big.json")
		return err
	})
	t.Logf("err=%v kind=%v", err, errs.KindOf(err))
	if errs.KindOf(err) == errs.Invalid {
		t.Errorf("same bytes as the log refused as changed outside: %v", err)
	}
}

// twoArrays is a file of two record arrays shaped like reviews.json, with
// the facts of the last records of each.
func twoArrays(nA, nB int) ([]byte, []byte) {
	var b bytes.Buffer
	b.WriteString(`{"reviews": [`)
	a := 0
	for i := 0; i < nA; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		a = b.Len()
		fmt.Fprintf(&b, `{"r": %d, "pad": "%s"}`, i, bytes.Repeat([]byte("r"), 100))
	}
	b.WriteString(`], "fixes": [`)
	bb := 0
	for i := 0; i < nB; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		bb = b.Len()
		fmt.Fprintf(&b, `{"f": %d, "pad": "%s"}`, i, bytes.Repeat([]byte("f"), 100))
	}
	b.WriteString("]}\n")
	facts := fmt.Sprintf(`{"reviews": {"count": %d, "last": [%d, 0]}, "fixes": {"count": %d, "last": [%d, 0]}}`, nA, a, nB, bb)
	return b.Bytes(), []byte(facts)
}

// TestCheckedBaseKeepsItsHeldMids: a write on a base the drift check hashed
// keeps every saved state that holds against its content (the reviews'
// and the fixes' last records), so that the next append to either array
// resumes hashing instead of hashing the file whole.
func TestCheckedBaseKeepsItsHeldMids(t *testing.T) {
	s := New(t.TempDir())
	s.Create = true
	s.Tracked = []string{"r.json"}
	write := func(nA, nB int, drift bool) {
		data, facts := twoArrays(nA, nB)
		if err := s.Update(context.Background(), func(tx *Tx) error {
			if drift {
				if _, err := tx.Drift(); err != nil {
					return err
				}
			}
			if _, _, _, err := tx.ReadTrusted("r.json"); err != nil {
				return err
			}
			tx.WriteSegments("r.json", [][]byte{data}, facts)
			tx.Log(Event{Type: "task"})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		sf, _ := s.loadStamps()
		var at []int64
		for _, m := range sf.Files[s.key("r.json")].Mids {
			at = append(at, m.At)
		}
		t.Logf("nA=%d nB=%d drift=%v mids at %v (facts %s)", nA, nB, drift, at, facts)
	}
	write(10, 10, true)
	write(10, 11, true) // append a fix: checked base
	sf, _ := s.loadStamps()
	if n := len(sf.Files[s.key("r.json")].Mids); n < 2 {
		t.Errorf("after a fix appended on a checked base, %d saved states (want 2: the reviews' and the fixes')", n)
	}
}
