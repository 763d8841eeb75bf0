package gitops_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
)

// gitRepo is a real repository in a temp directory, driven by the git CLI
// with commit times that advance one minute per commit.
type gitRepo struct {
	t    *testing.T
	dir  string
	tick int
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	r := &gitRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	return r
}

func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	date := fmt.Sprintf("2025-01-01T%02d:%02d:00Z", r.tick/60, r.tick%60)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+r.dir,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.test", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.test",
		"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit makes a commit touching file on the current branch.
func (r *gitRepo) commit(file, msg string) string {
	r.t.Helper()
	r.tick++
	if err := os.WriteFile(filepath.Join(r.dir, file), []byte(fmt.Sprintf("%s %d\n", msg, r.tick)), 0o644); err != nil {
		r.t.Fatal(err)
	}
	r.git("add", file)
	r.git("commit", "-q", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

func (r *gitRepo) merge(branch, msg string) string {
	r.t.Helper()
	r.tick++
	r.git("merge", "-q", "--no-ff", "-m", msg, branch)
	return r.git("rev-parse", "HEAD")
}

func (r *gitRepo) open() gitops.Repo {
	r.t.Helper()
	g, err := gitops.Open(r.dir)
	if err != nil {
		r.t.Fatal(err)
	}
	return g
}

// featureHistory is main with three feature branches of n commits each
// branched off it in turn, main moving on after each; feature/0 and
// feature/1 are merged back, feature/2 is open.
func featureHistory(t *testing.T, n int) *gitRepo {
	r := newGitRepo(t)
	r.commit("a.txt", "base")
	for f := 0; f < 3; f++ {
		b := fmt.Sprintf("feature/%d", f)
		r.git("checkout", "-q", "-b", b)
		for i := 0; i < n; i++ {
			r.commit(fmt.Sprintf("f%d.txt", f), fmt.Sprintf("%s-%d", b, i))
		}
		r.git("checkout", "-q", "main")
		r.commit("a.txt", fmt.Sprintf("main moves %d", f))
		if f < 2 {
			r.merge(b, "merge "+b)
		}
	}
	return r
}

// checkRange compares Range(from, to) with `git rev-list from..to`.
func checkRange(t *testing.T, r *gitRepo, g gitops.Repo, from, to string) {
	t.Helper()
	spec := to
	if from != "" {
		spec = from + ".." + to
	}
	want := r.git("rev-list", "--reverse", "--topo-order", spec)
	got, err := g.Range(resolve(t, r, from), resolve(t, r, to))
	if err != nil {
		t.Fatal(err)
	}
	wantSet := map[string]bool{}
	for _, h := range strings.Fields(want) {
		wantSet[h] = true
	}
	if len(got) != len(wantSet) {
		t.Fatalf("Range(%s) has %d commits, git rev-list has %d\ngot  %v\nwant %v", spec, len(got), len(wantSet), hashesOf(got), strings.Fields(want))
	}
	seen := map[string]int{}
	for i, c := range got {
		if !wantSet[c.Hash] {
			t.Fatalf("Range(%s) lists %s, which git rev-list does not", spec, c.Hash)
		}
		seen[c.Hash] = i
	}
	for _, c := range got { // oldest first: every parent in the range comes before its child
		for _, p := range c.Parents {
			if i, ok := seen[p]; ok && i > seen[c.Hash] {
				t.Fatalf("Range(%s) lists %s before its parent %s", spec, c.Hash, p)
			}
		}
	}
}

func hashesOf(cs []gitops.Commit) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Hash)
	}
	return out
}

func resolve(t *testing.T, r *gitRepo, rev string) string {
	if rev == "" {
		return ""
	}
	return r.git("rev-parse", rev)
}

func checkAncestry(t *testing.T, r *gitRepo, g gitops.Repo, a, b string) {
	t.Helper()
	cmd := exec.Command("git", "merge-base", "--is-ancestor", a, b)
	cmd.Dir = r.dir
	want := cmd.Run() == nil
	got, err := g.IsAncestor(resolve(t, r, a), resolve(t, r, b))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("IsAncestor(%s, %s) = %v, git says %v", a, b, got, want)
	}
}

func checkMergeBase(t *testing.T, r *gitRepo, g gitops.Repo, a, b string) {
	t.Helper()
	all := strings.Fields(r.git("merge-base", "--all", a, b))
	got, err := g.MergeBase(resolve(t, r, a), resolve(t, r, b))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range all {
		if got == w {
			return
		}
	}
	t.Errorf("MergeBase(%s, %s) = %s, git merge-base --all says %v", a, b, got, all)
}

func TestWalksMatchGit(t *testing.T) {
	t.Run("linear", func(t *testing.T) {
		r := newGitRepo(t)
		for i := 0; i < 12; i++ {
			r.commit("a.txt", fmt.Sprintf("c%d", i))
		}
		g := r.open()
		checkRange(t, r, g, "HEAD~5", "HEAD")
		checkRange(t, r, g, "", "HEAD")
		checkRange(t, r, g, "HEAD", "HEAD~3")
		checkRange(t, r, g, "HEAD", "HEAD")
		checkAncestry(t, r, g, "HEAD~7", "HEAD")
		checkAncestry(t, r, g, "HEAD", "HEAD~7")
		checkMergeBase(t, r, g, "HEAD", "HEAD~4")
	})
	t.Run("feature branches and merges", func(t *testing.T) {
		r := featureHistory(t, 3)
		g := r.open()
		checkRange(t, r, g, "main", "feature/2")
		checkRange(t, r, g, "feature/2", "main")
		checkRange(t, r, g, "main~2", "main")
		checkRange(t, r, g, "feature/0", "main")
		checkRange(t, r, g, "", "main")
		checkAncestry(t, r, g, "feature/0", "main")
		checkAncestry(t, r, g, "feature/2", "main")
		checkAncestry(t, r, g, "main~3", "feature/2")
		checkMergeBase(t, r, g, "main", "feature/2")
		checkMergeBase(t, r, g, "feature/1", "feature/2")
	})
	t.Run("criss-cross", func(t *testing.T) {
		r := newGitRepo(t)
		r.commit("a.txt", "root")
		r.git("checkout", "-q", "-b", "x")
		r.commit("x.txt", "x1")
		r.git("checkout", "-q", "main")
		r.commit("m.txt", "m1")
		r.git("checkout", "-q", "x")
		r.merge("main", "x takes main")
		r.git("checkout", "-q", "main")
		r.tick++
		r.git("merge", "-q", "--no-ff", "-m", "main takes x~1", "x~1")
		r.git("checkout", "-q", "x")
		r.commit("x.txt", "x2")
		r.git("checkout", "-q", "main")
		r.commit("m.txt", "m2")
		g := r.open()
		checkRange(t, r, g, "main", "x")
		checkRange(t, r, g, "x", "main")
		checkMergeBase(t, r, g, "main", "x")
		checkAncestry(t, r, g, "x~1", "main")
	})
	t.Run("linked worktree and worktreeConfig", func(t *testing.T) {
		r := newGitRepo(t)
		r.commit("a.txt", "one")
		r.git("config", "extensions.worktreeConfig", "true")
		wt := filepath.Join(t.TempDir(), "wt")
		r.git("worktree", "add", "-q", "-b", "side", wt)
		side := &gitRepo{t: t, dir: wt, tick: r.tick}
		side.commit("b.txt", "two")
		side.commit("b.txt", "three")
		g, err := gitops.Open(wt)
		if err != nil {
			t.Fatalf("opening a linked worktree of a worktreeConfig repository: %v", err)
		}
		head, err := g.Head()
		if err != nil || head != side.git("rev-parse", "HEAD") {
			t.Fatalf("Head = %s, %v", head, err)
		}
		checkRange(t, side, g, "main", "side")
	})
}
