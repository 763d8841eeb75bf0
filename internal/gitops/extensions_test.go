package gitops_test

import (
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
)

// TestOpenExtensionsAsGit: a repository opens when git opens it, for the
// extensions baton can read (worktreeConfig, preciousObjects, noop, any
// extension git ignores in format version 0), and one git opens with an
// extension baton cannot read (another hash, a partial clone) is refused
// saying which; a merge works in one with per-worktree config.
func TestOpenExtensionsAsGit(t *testing.T) {
	cases := []struct {
		version string
		ext     [][2]string
		refused string // what baton's refusal names, "" when it opens
	}{
		{"1", [][2]string{{"worktreeConfig", "true"}}, ""},
		{"0", [][2]string{{"preciousObjects", "true"}}, ""},
		{"1", [][2]string{{"preciousObjects", "true"}, {"noop", "true"}}, ""},
		{"0", [][2]string{{"somethingNew", "true"}}, ""},
		{"1", [][2]string{{"somethingNew", "true"}}, "unknown extension: somethingnew"},
		{"1", [][2]string{{"objectFormat", "sha256"}}, "baton reads SHA-1 repositories only"},
		{"1", [][2]string{{"partialClone", "origin"}}, "partial clone"},
	}
	for _, c := range cases {
		r := newGitRepo(t)
		r.files("base", "a", "a\n")
		r.git("checkout", "-q", "-b", "feature/x")
		r.files("b", "b", "b\n")
		r.git("checkout", "-q", "main")
		r.files("m", "m", "m\n")
		r.git("config", "core.repositoryformatversion", c.version)
		for _, e := range c.ext {
			r.git("config", "extensions."+e[0], e[1])
		}
		_, gitErr := r.gitMaybe("status", "--porcelain")
		g, err := gitops.Open(r.dir)
		switch {
		case c.refused != "":
			if err == nil || !strings.Contains(err.Error(), c.refused) {
				t.Errorf("%v: %v, want a refusal naming %q", c.ext, err, c.refused)
			}
		case err != nil || gitErr != nil:
			t.Errorf("%v (format %s): baton %v, git %v", c.ext, c.version, err, gitErr)
		default:
			if c.ext[0][0] == "worktreeConfig" {
				r.git("config", "--worktree", "user.name", "Per Worktree")
			}
			if _, err := g.Merge(gitops.MergeOptions{Branch: "feature/x", Into: "main", Message: "m\n", Signature: sig()}); err != nil {
				t.Errorf("%v: merge: %v", c.ext, err)
			}
			if st := r.git("status", "--porcelain"); st != "" {
				t.Errorf("%v: status:\n%s", c.ext, st)
			}
		}
	}
}
