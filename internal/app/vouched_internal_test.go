package app

import (
	"context"
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/store"
)

// A first read of a byte-for-byte copy of the version baton stamped takes
// that version's facts and validates nothing; any other content, even of
// the same size, is validated.
func TestVouchedOrValid(t *testing.T) {
	s := store.New(t.TempDir())
	s.Create = true
	s.Tracked = []string{"progress.json"}
	content := []byte("{\n  \"status\": {},\n  \"sessions\": []\n}\n")
	facts := jsondoc.Facts{"sessions": {Count: 0, Span: [2]int{32, 34}}}
	if err := s.Update(context.Background(), func(tx *store.Tx) error {
		tx.WriteSegments("progress.json", [][]byte{content}, factsJSON(facts))
		tx.Log(store.Event{Type: "task"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	os.Remove(s.Path("progress.json")) // a copy restored under a new identity
	if err := os.WriteFile(s.Path("progress.json"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	validated := 0
	refuse := errors.New("validated")
	validate := func([]byte) (jsondoc.Facts, error) { validated++; return nil, refuse }
	h := store.Hold(content)
	got, err := vouchedOrValid(s, "progress.json", h, validate)
	if err != nil || validated != 0 || !reflect.DeepEqual(got, facts) {
		t.Fatalf("the stamped version: facts %+v, error %v, validated %d times", got, err, validated)
	}
	edited := []byte("{\n  \"status\": {},\n  \"sessions\": {}\n}\n")
	h = store.Hold(edited)
	if _, err := vouchedOrValid(s, "progress.json", h, validate); err != refuse || validated != 1 {
		t.Fatalf("other content of the same size: error %v, validated %d times", err, validated)
	}
	h.Wait()
}
