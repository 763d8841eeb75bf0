package gitops_test

import (
	"crypto/sha1"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestResolveMatchesGit resolves revisions of every form baton accepts —
// hashes full and abbreviated, branches, tags (light and annotated, peeled
// to their commit), full reference names, HEAD and @, ~N and ^N steps in
// any order; a ref named like an abbreviated hash — in a history with merges, packed and loose, and compares
// each with `git rev-parse REV^{commit}`; a revision git cannot resolve
// must not resolve either.
func TestResolveMatchesGit(t *testing.T) {
	r := featureHistory(t, 3)
	r.git("tag", "light", "main~1")
	r.git("tag", "-a", "-m", "annotated", "v1", "main~1^2")
	head := r.git("rev-parse", "HEAD")
	other := r.git("rev-parse", "feature/2")
	r.git("tag", other[:8], "main~2")                                 // a tag named like another commit's abbreviation: git takes the tag
	r.git("branch", head[:10], "main~3")                              // and a branch named like one
	r.git("update-ref", "refs/remotes/"+other[:11]+"/HEAD", "main~1") // and a remote's HEAD
	revs := []string{
		"HEAD", "@", "main", "refs/heads/main", "heads/main", "feature/2", "light", "v1", "refs/tags/v1",
		head, head[:7], head[:12], head[:9], head[:10], other[:8], other[:9], other[:11], other[:10],
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

// TestResolveAmbiguousAbbreviation: an abbreviation two commits share is
// refused, as git refuses it, not resolved to one of them; one shorter
// than git's four digits resolves nothing.
func TestResolveAmbiguousAbbreviation(t *testing.T) {
	r := newGitRepo(t)
	r.commit("a", "a")
	tree := r.git("rev-parse", "HEAD^{tree}")
	seen := map[string]string{}
	var prefix string
	for i := 0; prefix == ""; i++ {
		body := fmt.Sprintf("tree %s\nauthor t <t@x> 0 +0000\ncommitter t <t@x> 0 +0000\n\n%d\n", tree, i)
		h := fmt.Sprintf("%x", sha1.Sum([]byte(fmt.Sprintf("commit %d\x00%s", len(body), body))))
		if prev, ok := seen[h[:4]]; ok {
			prefix = h[:4]
			for _, b := range []string{prev, body} {
				cmd := exec.Command("git", "hash-object", "-t", "commit", "-w", "--stdin")
				cmd.Dir, cmd.Stdin = r.dir, strings.NewReader(b)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%v %s", err, out)
				}
			}
		}
		seen[h[:4]] = body
	}
	if _, err := r.gitMaybe("rev-parse", "--verify", "-q", prefix+"^{commit}"); err == nil {
		t.Fatalf("git resolves %s", prefix)
	}
	if h, err := r.open().Resolve(prefix); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("Resolve(%s) = %q, %v; want ambiguous", prefix, h, err)
	}
	head := r.git("rev-parse", "HEAD")
	if h, err := r.open().Resolve(head[:3]); err == nil {
		t.Errorf("Resolve(%s) = %s: git reads no 3-digit hash", head[:3], h)
	}
}
