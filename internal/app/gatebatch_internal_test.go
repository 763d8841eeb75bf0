package app

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/store"
)

// TestGateProblemsOfBatches: a merge landed inside a gated batch is held
// to the batch's gate run, which must have passed on exactly the tree of
// a later merge that main reached from it; anything less is reported.
func TestGateProblemsOfBatches(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@x")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	commit := func(file string) string {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", file)
		git("commit", "-q", "-m", file)
		return git("rev-parse", "HEAD")
	}
	commit("base")
	first, second := commit("one"), commit("two")
	git("switch", "-q", "-c", "side", first)
	aside := commit("other")
	r, err := gitops.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tree := func(c string) string {
		tr, err := r.TreeOf(c)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	batch := &GateRun{Command: "make test", Tree: tree(second), Batch: []int{1, 2}}
	failed := &GateRun{Command: "make test", Tree: tree(second), Batch: []int{1, 2}, ExitCode: 1}
	for _, tc := range []struct {
		name   string
		merges []logMerge
		want   string // "" for none
	}{
		{"a batch whose last merge has the gated tree", []logMerge{{seq: 2, commit: first, review: 1, gate: batch}, {seq: 3, commit: second, review: 2, gate: batch}}, ""},
		{"main never reached the gated tree", []logMerge{{seq: 2, commit: first, review: 1, gate: batch}}, "is not the tree"},
		{"the later merge does not descend from it", []logMerge{{seq: 2, commit: aside, review: 1, gate: batch}, {seq: 3, commit: second, review: 2, gate: batch}}, "is not the tree"},
		{"a review outside the batch", []logMerge{{seq: 2, commit: first, review: 7, gate: batch}, {seq: 3, commit: second, review: 2, gate: batch}}, "is not the tree"},
		{"no batch named", []logMerge{{seq: 2, commit: first, review: 1, gate: &GateRun{Tree: tree(second)}}, {seq: 3, commit: second, review: 2, gate: batch}}, "is not the tree"},
		{"the later merge's own run failed", []logMerge{{seq: 2, commit: first, review: 1, gate: batch}, {seq: 3, commit: second, review: 2, gate: failed}}, "exited 1"},
		{"the later merge came first", []logMerge{{seq: 3, commit: second, review: 2, gate: batch}, {seq: 4, commit: first, review: 1, gate: batch}}, "is not the tree"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := gateProblems(r, logRecords{read: true, merges: tc.merges, queuedFrom: 1}, "make test")
			var msgs []string
			for _, p := range got {
				msgs = append(msgs, p.Message)
			}
			all := strings.Join(msgs, "\n")
			if (tc.want == "") != (len(got) == 0) || !strings.Contains(all, tc.want) {
				t.Errorf("problems:\n%s\nwant one saying %q", all, tc.want)
			}
		})
	}
}

// TestLandingMergesAreBatons: a merge commit the landing queue wrote is
// baton's, held to its signature as 'reviews merge”s are; a fast-forward
// wrote no commit, and a merge adopted from an agent is the agent's.
func TestLandingMergesAreBatons(t *testing.T) {
	entry := func(command string, ff bool) store.Event {
		p, _ := json.Marshal(map[string]any{"command": command, "record": map[string]any{"merge_commit": "abc", "into": "main", "review_id": 1, "fast_forward": ff}})
		return store.Event{Seq: 1, Payload: p}
	}
	for _, tc := range []struct {
		command string
		ff      bool
		written bool
	}{
		{"baton land", false, true},
		{"baton reviews merge", false, true},
		{"baton land", true, false},
		{"baton progress add-session", false, false},
	} {
		lr := logRecordsOf([]store.Event{entry(tc.command, tc.ff)})
		if len(lr.merges) != 1 || lr.merges[0].written != tc.written {
			t.Errorf("%s (fast-forward %v): merges %+v, want one written=%v", tc.command, tc.ff, lr.merges, tc.written)
		}
	}
}
