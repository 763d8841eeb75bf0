package store_test

import (
	"testing"

	"github.com/baton-cli/baton/internal/errs"
)

func TestLoadConfigGit(t *testing.T) {
	got, err := withConfig(t, []byte(`{"main_branch": "trunk", "merge_no_ff": false}`)).LoadConfig()
	if err != nil || got.MainBranch != "trunk" || got.MergeNoFF {
		t.Fatalf("LoadConfig = %+v, %v", got, err)
	}
	for _, bad := range []string{"-main", "refs/heads/main", "ma in", "main~1", "a..b", "x:y"} {
		_, err := withConfig(t, []byte(`{"main_branch": "`+bad+`"}`)).LoadConfig()
		if errs.KindOf(err) != errs.Invalid {
			t.Errorf("main_branch %q: err = %v, want an invalid config", bad, err)
		}
	}
}
