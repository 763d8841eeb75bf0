package features_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/jsondoc"
)

func TestDependsOn(t *testing.T) {
	f := mustParse(t, `{"features": [{"id": "F001", "passes": false}, {"id": "F002", "passes": false, "depends_on": ["F001"], "x": 1}]}`)
	got, err := f.Get("F002")
	if err != nil || strings.Join(got.DependsOn, ",") != "F001" {
		t.Fatalf("F002 = %+v, %v", got, err)
	}
	if _, err := f.SetPasses([]string{"F001"}, true, "2025-01-29T10:00:00Z", ""); err != nil {
		t.Fatal(err)
	}
	if g := mustParse(t, string(f.Bytes())); strings.Join(g.All()[1].DependsOn, ",") != "F001" {
		t.Errorf("a rewrite lost depends_on:\n%s", f.Bytes())
	}
}

func TestDependsOnInvalidFile(t *testing.T) {
	for _, tc := range []struct{ list, msg string }{
		{`[{"id": "F001", "depends_on": ["F009"]}]`, "F001 depends on F009, which is not in the feature list"},
		{`[{"id": "F001", "depends_on": ["F001"]}]`, "F001 depends on itself"},
		{`[{"id": "F001", "depends_on": ["F002"]}, {"id": "F002", "depends_on": ["F003"]}, {"id": "F003", "depends_on": ["F001"]}]`, "depends_on runs in a cycle: F001 -> F002 -> F003 -> F001"},
		{`[{"id": "F001", "depends_on": "F002"}, {"id": "F002"}]`, "depends_on must be a list of ids"},
		{`[{"id": "F001", "depends_on": [""]}]`, "depends_on must be a list of ids"},
		{`[{"id": "F001", "depends_on": [2]}]`, "depends_on must be a list of ids"},
	} {
		_, err := features.Parse([]byte(`{"features": ` + tc.list + `}`))
		var ie *jsondoc.InvalidError
		if !errors.As(err, &ie) || !strings.Contains(ie.Path, "depends_on") || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want an invalid depends_on: %s", tc.list, err, tc.msg)
		}
	}
	if _, err := features.Parse([]byte(`{"features": [{"id": "F001", "depends_on": null}, {"id": "F002", "depends_on": []}, {"id": "F003", "depends_on": ["F001", "F002"]}]}`)); err != nil {
		t.Errorf("sound depends_on refused: %v", err)
	}
}

func TestDependsOnAppend(t *testing.T) {
	base := `{"features": [{"id": "F001", "passes": false}]}`
	for _, tc := range []struct {
		entries []string
		msg     string
	}{
		{[]string{`{"id": "F002", "depends_on": ["F009"]}`}, "entry 0: F002 depends on F009, which is not in the feature list"},
		{[]string{`{"id": "F002"}`, `{"id": "F003", "depends_on": ["F003"]}`}, "entry 1: F003 depends on itself"},
		{[]string{`{"id": "F002", "depends_on": ["F003"]}`, `{"id": "F003", "depends_on": ["F002"]}`}, "depends_on runs in a cycle: F002 -> F003 -> F002"},
		{[]string{`{"name": "no id", "depends_on": {"F001": true}}`}, "entry 0: depends_on must be a list of ids"},
	} {
		f := mustParse(t, base)
		var raws [][]byte
		for _, e := range tc.entries {
			raws = append(raws, []byte(e))
		}
		_, err := f.Append(raws, "spec.md")
		if errs.KindOf(err) != errs.Usage || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%v: %v, want a usage error: %s", tc.entries, err, tc.msg)
		}
		if len(f.All()) != 1 {
			t.Errorf("%v: a refused append changed the list", tc.entries)
		}
	}
	f := mustParse(t, base)
	added, err := f.Append([][]byte{[]byte(`{"id": "F003", "depends_on": ["F002", "F001"]}`), []byte(`{"id": "F002", "depends_on": ["F001"]}`)}, "spec.md")
	if err != nil || len(added) != 2 {
		t.Fatalf("depends_on on a later entry: %v %v", added, err)
	}
}

func TestReadyFirst(t *testing.T) {
	f := mustParse(t, `{"features": [{"id": "F003", "depends_on": ["F002"]}, {"id": "F001", "passes": true}, {"id": "F002", "depends_on": ["F001"]}, {"id": "F004"}]}`)
	var got []string
	for _, it := range f.ReadyFirst("") {
		got = append(got, it.ID)
	}
	if strings.Join(got, ",") != "F002,F004,F003" {
		t.Errorf("ReadyFirst = %v, want the ready ones first, in file order", got)
	}
}
