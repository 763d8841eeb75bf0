package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
)

// TestGateProblems holds each recorded merge, from the landing queue's
// first use on, to a passing gate run on exactly its tree.
func TestGateProblems(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		c := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.test"}, args...)...)
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("commit", "-q", "--allow-empty", "-m", "one")
	first := git("rev-parse", "HEAD")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "a.txt")
	git("commit", "-q", "-m", "two")
	merge := git("rev-parse", "HEAD")
	tree := git("rev-parse", "HEAD^{tree}")
	r, err := gitops.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	pass := &GateRun{Command: "make test", Tree: tree, ExitCode: 0}
	for _, tc := range []struct {
		name       string
		gate       string
		queuedFrom int
		m          logMerge
		want       string
	}{
		{"a passing run on the merge's tree", "make test", 3, logMerge{seq: 5, commit: merge, review: 2, gate: pass}, ""},
		{"no gate configured", "", 3, logMerge{seq: 5, commit: merge, review: 2}, ""},
		{"a merge before the queue was used", "make test", 3, logMerge{seq: 2, commit: first, review: 1}, ""},
		{"a merge with no gate run", "make test", 3, logMerge{seq: 5, commit: merge, review: 2}, "with no gate run"},
		{"a failing gate run", "make test", 3, logMerge{seq: 5, commit: merge, review: 2, gate: &GateRun{Tree: tree, ExitCode: 2}}, "exited 2"},
		{"a timed-out gate run", "make test", 3, logMerge{seq: 5, commit: merge, review: 2, gate: &GateRun{Tree: tree, TimedOut: true, ExitCode: -1}}, "exited -1"},
		{"a run on another tree", "make test", 3, logMerge{seq: 5, commit: first, review: 2, gate: pass}, "is not the tree"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lr := logRecords{read: true, queuedFrom: tc.queuedFrom, merges: []logMerge{tc.m}}
			got := gateProblems(r, lr, tc.gate)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("problems %v, want none", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0].Message, tc.want)):
				t.Errorf("problems %v, want one saying %q", got, tc.want)
			}
		})
	}
}
