package gitops_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
)

func TestTrailers(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		want      []string
	}{
		{"baton's merge", "Merge branch 'feature/a' into main (F001)\n\nBaton-Review: R1\nBaton-Feature: F001\nBaton-Log: seq 9 abc\n", []string{"seq 9 abc"}},
		{"key case and spaces", "s\n\nbaton-log:   seq 1 x  \n", []string{"seq 1 x"}},
		{"only the last paragraph", "s\n\nBaton-Log: seq 1 old\n\nbody\n", nil},
		{"a subject alone", "Baton-Log: seq 1 x", nil},
		{"two values", "s\n\nBaton-Log: a\nBaton-Log: b", []string{"a", "b"}},
		{"none", "s\n\nSigned-off-by: x\n", nil},
	} {
		if got := gitops.Trailers(tc.msg, "Baton-Log"); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Trailers = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestTrailersAsGitLog: Trailers reads what git log reads with
// %(trailers:key=Baton-Log,valueonly,unfold), over messages that put the
// trailer among prose, after git's own trailers, folded, misspelled,
// before comment lines, in the subject.
func TestTrailersAsGitLog(t *testing.T) {
	r := newGitRepo(t)
	r.commit("a", "a")
	tree := r.git("rev-parse", "HEAD^{tree}")
	for _, m := range []string{
		"Subject\n\nBody\n\nBaton-Log: 12\n", "Subject\n\nBaton-Log: 12\n", "Baton-Log: 12\n",
		"Subject\n\nprose line\nBaton-Log: 12\n", "Subject\n\nSigned-off-by: a <b@c>\nBaton-Log: 12\n",
		"Subject\n\nprose\nmore prose\nSigned-off-by: a <b@c>\nBaton-Log: 12\n", "Subject\n\nBaton-Log: 12\n  continued\n",
		"Subject\n\nBaton-Log : 12\n", "Subject\n\nbaton-log: 12\n", "Subject\n\nBaton-Log: 12\n\n# comment\n",
		"Subject\n\nBaton-Log: 12\n---\npatch\n", "Subject\n\nBaton-Log:12\n", "Subject\n\nBaton Log: 12\n",
		"Subject\n\nBaton-Log: 1\nBaton-Log: 2\n", "Subject\n\n(cherry picked from commit abc)\nBaton-Log: 3\nnot one\nnor this\n",
		"Subject\n\nBaton-Log: 1\nFixes #12\n", "Subject\n\n  indented first\nBaton-Log: 4\n", "Subject\n\nBätön-Log: 5\nBaton-Log: 6\n",
	} {
		cmd := exec.Command("git", "commit-tree", "-F", "-", tree)
		cmd.Dir, cmd.Stdin = r.dir, strings.NewReader(m)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+r.dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		c := strings.TrimSpace(string(out))
		raw := r.git("log", "-1", "--format=%B", c)
		want := r.git("log", "-1", "--format=%(trailers:key=Baton-Log,valueonly,unfold,separator=|)", c)
		if got := strings.Join(gitops.Trailers(raw+"\n", "Baton-Log"), "|"); got != want {
			t.Errorf("%q: Trailers %q, git log %q", m, got, want)
		}
	}
}
