package app

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/store"
)

// A state file cut outside baton while a read-only command reads it from
// its mapping (a page past the new end faults) ends the read with an
// invalid-state error, not the process.
func TestReadMappedCutWhileRead(t *testing.T) {
	dir := t.TempDir()
	s := store.New(dir)
	s.Create = true
	s.Tracked = []string{progress.FileName}
	sessions := "[" + strings.Repeat(`{"pad":"`+strings.Repeat("x", 1000)+`"},`, 200) + `{"id":1}]`
	content := []byte(`{"sessions": ` + sessions + `, "status": {"current_phase": "IMPLEMENT"}}`)
	at := bytes.IndexByte(content, '[')
	facts := jsondoc.Facts{"sessions": {Count: 201, Span: [2]int{at, at + len(sessions)}}}
	if err := s.Update(context.Background(), func(tx *store.Tx) error {
		tx.WriteSegments(progress.FileName, [][]byte{content}, factsJSON(facts))
		tx.Log(store.Event{Type: "task"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	a := New(Env{Getenv: func(string) string { return "" }, Cwd: dir, Now: time.Now}, &Options{StateDir: dir}, &warnings{})
	read := func(cut bool) (gjson.Result, error) {
		return a.readMapped(context.Background(), progress.FileName, "", progress.Validate, func(m *mapped) (gjson.Result, error) {
			if cut {
				if err := os.Truncate(s.Path(progress.FileName), 0); err != nil {
					t.Fatal(err)
				}
			}
			v, err := m.member("status")
			return gjson.Parse(strings.Clone(v.Raw)), err
		})
	}
	if v, err := read(false); err != nil || v.Get("current_phase").String() != "IMPLEMENT" {
		t.Fatalf("the read before the cut: %v %v", v, err)
	}
	if _, err := read(true); errs.Code(err) != errs.ExitInvalid || !strings.Contains(err.Error(), "cut outside baton") {
		t.Fatalf("a read of a file cut meanwhile: %v (exit %d)", err, errs.Code(err))
	}
}
