package gitops_test

import (
	"os/exec"
	"testing"
)

// TestResolveMatchesGit resolves revisions of every form baton accepts —
// hashes full and abbreviated, branches, tags (light and annotated, peeled
// to their commit), full reference names, HEAD and @, ~N and ^N steps in
// any order — in a history with merges, packed and loose, and compares
// each with `git rev-parse REV^{commit}`; a revision git cannot resolve
// must not resolve either.
func TestResolveMatchesGit(t *testing.T) {
	r := featureHistory(t, 3)
	r.git("tag", "light", "main~1")
	r.git("tag", "-a", "-m", "annotated", "v1", "main~1^2")
	head := r.git("rev-parse", "HEAD")
	revs := []string{
		"HEAD", "@", "main", "refs/heads/main", "heads/main", "feature/2", "light", "v1", "refs/tags/v1",
		head, head[:7], head[:12], head[:9],
		"HEAD~1", "HEAD~", "HEAD^", "HEAD^1", "HEAD^2", "HEAD^0", "HEAD~1^2", "HEAD~1^2~1", "HEAD~3^2", "main~3", "v1~1", "@~1", "HEAD~~^",
		"HEAD^3", "HEAD~100", "nosuch", "feature", "0000000", "light^2",
	}
	for _, packed := range []bool{false, true} {
		if packed {
			r.git("gc", "-q")
		}
		g := r.open()
		for _, rev := range revs {
			cmd := exec.Command("git", "rev-parse", "-q", "--verify", rev+"^{commit}")
			cmd.Dir = r.dir
			out, gitErr := cmd.Output()
			want := string(out)
			if len(want) > 0 {
				want = want[:len(want)-1]
			}
			got, err := g.Resolve(rev)
			switch {
			case gitErr != nil && err == nil:
				t.Errorf("packed %v: Resolve(%q) = %s, git resolves nothing", packed, rev, got)
			case gitErr == nil && err != nil:
				t.Errorf("packed %v: Resolve(%q): %v, git: %s", packed, rev, err, want)
			case gitErr == nil && got != want:
				t.Errorf("packed %v: Resolve(%q) = %s, git: %s", packed, rev, got, want)
			}
		}
	}
}
