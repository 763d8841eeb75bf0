package cli_test

import (
	"bytes"
	"strings"
	"syscall"
	"testing"

	"github.com/baton-cli/baton/internal/store"
)

// TestFaultAtEachCommitStepFix is TestFaultAtEachCommitStep for add-fix:
// before the commit point reviews.json does not change, after it it does,
// and either way the fix-cycle limit counts the fix exactly once.
func TestFaultAtEachCommitStepFix(t *testing.T) {
	defer store.SetFaultHook(nil)
	for _, step := range store.CommitSteps {
		t.Run(step, func(t *testing.T) {
			dir := t.TempDir()
			mustIn(t, dir, "init")
			mustIn(t, dir, asPerson("features", "append", "-e", `[{"id":"F001","name":"Health"}]`, "-s", "spec")...)
			mustIn(t, dir, asPerson("reviews", "add-review", "-a", "REVIEW", "--feature-id", "F001", "-b", "feature/health", "-v", "REQUEST_CHANGES",
				"-s", "round 1", "--issues", `{"major":[{"description":"no error handling"}]}`)...)
			before := readState(t, dir)
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
				mustIn(t, dir, asPerson("reviews", "add-fix", "-r", "1")...) // the caller retries
			} else if code != 0 {
				t.Fatalf("fault after the commit point: exit %d, want 0\n%s", code, out)
			}
			mustIn(t, dir, "verify") // the next command finishes a committed change
			// the fix counts once: two more reach the limit, the next is refused
			mustIn(t, dir, asPerson("reviews", "add-fix", "-r", "1")...)
			mustIn(t, dir, asPerson("reviews", "add-fix", "-r", "1")...)
			if code, out := batonIn(dir, asPerson("reviews", "add-fix", "-r", "1")...); code != 3 || !strings.Contains(out, "3 of 3 fixes recorded") {
				t.Fatalf("a fourth fix: exit %d, want 3 at the limit\n%s", code, out)
			}
		})
	}
}
