package cli_test

import (
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/store"
)

// verify while baton's own merge is in flight — main moved, the state
// files not yet committed, the merging command still holding the state
// lock — reports the merge in flight, named by its intent, and no
// tampering: exit 0, not "main moved outside baton". Once the merge has
// committed, verify is clean.
func TestVerifyDuringMerge(t *testing.T) {
	defer store.SetFaultHook(nil)
	dir, git := reviewedBranch(t, "PASS")
	before := git("rev-parse", "main")
	var code int
	var out string
	store.SetFaultHook(func(step string) error {
		if step == store.StepJournal && code == 0 && out == "" {
			if git("rev-parse", "main") == before {
				t.Error("main has not moved when the merge reaches its journal")
			}
			code, out = batonIn(dir, "verify")
		}
		return nil
	})
	mustIn(t, dir, asPerson("reviews", "merge")...)
	store.SetFaultHook(nil)
	if out == "" {
		t.Fatal("verify never ran inside the merge")
	}
	if code != 0 || strings.Contains(out, "outside baton") || !strings.Contains(out, "a merge is in flight") {
		t.Fatalf("verify during the merge: exit %d, want 0 with the merge in flight noted\n%s", code, out)
	}
	if out := mustIn(t, dir, "verify"); strings.Contains(out, "in flight") {
		t.Errorf("verify after the merge still reports it in flight:\n%s", out)
	}
}
