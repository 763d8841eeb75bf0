package gitops_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/baton-cli/baton/internal/gitops"
)

// TestParseDateMatchesGit: each date form reads to the instant and zone
// git's commit-tree records for it in GIT_COMMITTER_DATE.
func TestParseDateMatchesGit(t *testing.T) {
	r := newGitRepo(t)
	r.files("base", "a", "a\n")
	tree := r.git("rev-parse", "HEAD^{tree}")
	for _, s := range []string{
		"1700000000 +0530", "@1700000000 -0000", "@1700000000 +0000", "1700000000 -0330",
		"2025-01-29T10:00:00Z", "2025-01-29T10:00:00+05:30", "2025-01-29T10:00:00-0800", "2025-01-29 10:00:00 +0530",
		"2025-01-29 10:00:00 -0000", "Wed, 29 Jan 2025 10:00:00 +0100", "Wed Jan 29 10:00:00 2025 +1400",
	} {
		cmd := exec.Command("git", "commit-tree", "-m", "x", tree)
		cmd.Dir = r.dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+r.dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x", "GIT_AUTHOR_DATE="+s, "GIT_COMMITTER_DATE="+s)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git commit-tree with %q: %v %s", s, err, out)
		}
		want := r.git("log", "-1", "--format=%ct %cd", "--date=format:%z", strings.TrimSpace(string(out)))
		got, ok := gitops.ParseDate(s)
		if !ok {
			t.Errorf("ParseDate(%q) not read; git reads %s", s, want)
			continue
		}
		if g := got.Format("-0700"); strconv.FormatInt(got.Unix(), 10)+" "+g != want {
			t.Errorf("ParseDate(%q) = %d %s, git reads %s", s, got.Unix(), g, want)
		}
	}
	if _, ok := gitops.ParseDate("next tuesday-ish"); ok {
		t.Error("a date git's strict forms do not hold was read")
	}
}

// TestMergeCommitAsGitReadsIt: the merge commit baton writes parses with
// git (fsck --strict) and reads back as given: author and committer apart,
// their zones, names with characters git strips, a non-ASCII name, a
// message with trailers or none.
func TestMergeCommitAsGitReadsIt(t *testing.T) {
	for _, msg := range []string{"Merge feature/a\n\nBaton-Review: R1\nBaton-Log: 12\n", "", "Ünïcödé merge — ok\n"} {
		r := featureRepo(t)
		author := gitops.Signature{Name: " <Ann> Ö'Brien\n.", Email: "<ann@example.test>", When: time.Date(2025, 1, 2, 3, 4, 5, 0, time.FixedZone("", 5*3600+30*60))}
		committer := gitops.Signature{Name: "baton", Email: "b@example.test", When: time.Date(2025, 1, 2, 3, 4, 6, 0, time.FixedZone("", -8*3600))}
		res, err := r.open().Merge(gitops.MergeOptions{Branch: "feature/a", Into: "main", Message: msg, Signature: author, Committer: committer})
		if err != nil {
			t.Fatal(err)
		}
		r.git("fsck", "--strict", "--no-progress")
		want := "Ann Ö'Brien|ann@example.test|1735767245 +0530|baton|b@example.test|1735815846 -0800"
		if got := r.git("log", "-1", "--format=%an|%ae|%ad|%cn|%ce|%cd", "--date=raw", res.Commit); got != want {
			t.Errorf("git reads\n%s\nwant\n%s", got, want)
		}
		if got := r.git("log", "-1", "--format=%B", res.Commit); got != strings.TrimSpace(msg) {
			t.Errorf("message %q, want %q", got, msg)
		}
		if strings.Contains(msg, "Baton-Log") {
			if got := r.git("log", "-1", "--format=%(trailers:key=Baton-Log,valueonly)", res.Commit); got != "12" {
				t.Errorf("trailer as git reads it: %q", got)
			}
		}
	}
}
