package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/store"
)

// TestFaultAtEachCommitStepFix is TestFaultAtEachCommitStep for add-fix,
// which writes reviews.json and its index (.baton/reviews-index) in one
// transaction: before the commit point neither changes; after it both
// do; either way the index holds the facts of the reviews.json beside it,
// and the fix-cycle limit counts the fix exactly once.
func TestFaultAtEachCommitStepFix(t *testing.T) {
	defer store.SetFaultHook(nil)
	for _, step := range store.CommitSteps {
		t.Run(step, func(t *testing.T) {
			defer patchingAt(step)()
			dir := t.TempDir()
			mustIn(t, dir, "init")
			mustIn(t, dir, asPerson("features", "append", "-e", `[{"id":"F001","name":"Health"}]`, "-s", "spec")...)
			mustIn(t, dir, asPerson("reviews", "add-review", "-a", "REVIEW", "--feature-id", "F001", "-b", "feature/health", "-v", "REQUEST_CHANGES",
				"-s", "round 1", "--issues", `{"major":[{"description":"no error handling"}]}`)...)
			before := readState(t, dir)
			idxBefore, _ := os.ReadFile(filepath.Join(dir, reviews.IndexName))
			fired := failOnce(step, syscall.EIO)
			code, out := batonIn(dir, asPerson("reviews", "add-fix", "-r", "1")...)
			store.SetFaultHook(nil)
			if !*fired {
				t.Fatalf("step %s was never reached", step)
			}
			if !afterCommitPoint[step] {
				if code != 1 || !strings.Contains(out, "injected fault") {
					t.Fatalf("fault before the commit point: exit %d, want 1 naming the fault\n%s", code, out)
				}
				for f, b := range readState(t, dir) {
					if !bytes.Equal(b, before[f]) {
						t.Errorf("%s changed although the command failed before its commit point", f)
					}
				}
				if idx, _ := os.ReadFile(filepath.Join(dir, reviews.IndexName)); !bytes.Equal(idx, idxBefore) {
					t.Errorf("the index changed although the command failed before its commit point")
				}
				mustIn(t, dir, asPerson("reviews", "add-fix", "-r", "1")...) // the caller retries
			} else if code != 0 {
				t.Fatalf("fault after the commit point: exit %d, want 0\n%s", code, out)
			}
			mustIn(t, dir, "verify") // the next command finishes a committed change
			checkIndexFile(t, dir)
			// the fix counts once: two more reach the limit, the next is refused
			mustIn(t, dir, asPerson("reviews", "add-fix", "-r", "1")...)
			mustIn(t, dir, asPerson("reviews", "add-fix", "-r", "1")...)
			if code, out := batonIn(dir, asPerson("reviews", "add-fix", "-r", "1")...); code != 3 || !strings.Contains(out, "3 of 3 fixes recorded") {
				t.Fatalf("a fourth fix: exit %d, want 3 at the limit\n%s", code, out)
			}
			checkIndexFile(t, dir)
		})
	}
}

// checkIndexFile requires .baton/reviews-index to hold, entry for entry,
// the index built from the records of reviews.json.
func checkIndexFile(t *testing.T, dir string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "reviews.json"))
	if err != nil {
		t.Fatal(err)
	}
	full, err := reviews.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	disk, err := os.ReadFile(filepath.Join(dir, reviews.IndexName))
	if err != nil {
		t.Fatal(err)
	}
	decode := func(b []byte) []any {
		var out []any
		for _, l := range bytes.Split(b, []byte("\n")) {
			var v any
			if err := json.Unmarshal(l, &v); err != nil {
				t.Fatalf("%s: %v\n%s", reviews.IndexName, err, b)
			}
			out = append(out, v)
		}
		return out
	}
	if !reflect.DeepEqual(decode(disk), decode(full.IndexBytes())) {
		t.Fatalf("%s does not hold the facts of reviews.json (%d fixes):\n%s\nwant:\n%s", reviews.IndexName, len(gjson.GetBytes(data, "fixes").Array()), disk, full.IndexBytes())
	}
}
