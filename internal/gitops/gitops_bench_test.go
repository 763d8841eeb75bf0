package gitops_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
)

// BenchmarkGitOps times the operations baton's commands run, each three
// ways: "gitops" opens the repository and runs the operation, as a baton
// process does once; "warm" runs it on a repository opened before the
// timing (the walk alone, without loading the pack index); "git" runs the
// git command doing the same as a process. It uses a generated repository
// of about 1,000 commits, or the one BATON_GITBENCH_REPO names — the main
// worktree of one bench/gitbench generated (run it with -repos DIR):
//
//	BATON_GITBENCH_REPO=DIR/large-100000-s1/main go test -run='^$' -bench=GitOps/range/gitops -cpuprofile cpu.out ./gitops
//
// The repository needs the branches main and feature/session-work; the
// session's range is the branch's last 10 commits.
func BenchmarkGitOps(b *testing.B) {
	dir := os.Getenv("BATON_GITBENCH_REPO")
	if dir == "" {
		dir = benchRepo(b, 1000)
	}
	rev := func(r string) string {
		out, err := exec.Command("git", "-C", dir, "rev-parse", "--verify", r+"^{commit}").Output()
		if err != nil {
			b.Fatalf("git rev-parse %s in %s: %v", r, dir, err)
		}
		return strings.TrimSpace(string(out))
	}
	main, head, base := rev("main"), rev("feature/session-work"), rev("feature/session-work~10")
	ops := []struct {
		name string
		op   func(gitops.Repo) error
		git  []string
		exit int // git's exit status: 1 is merge-base --is-ancestor's "no"
	}{
		{"open", func(r gitops.Repo) error { _, err := r.Head(); return err }, []string{"rev-parse", "HEAD"}, 0},
		{"resolve", func(r gitops.Repo) error { _, err := gitops.ResolveCommit(r, gitops.Short(base)); return err },
			[]string{"rev-parse", "--verify", "--quiet", gitops.Short(base) + "^{commit}"}, 0},
		{"range", func(r gitops.Repo) error {
			cs, err := r.Range(base, head)
			if err == nil && len(cs) != 10 {
				err = fmt.Errorf("Range lists %d commits, want 10", len(cs))
			}
			return err
		}, []string{"rev-list", "--reverse", "--parents", "--format=%s", base + ".." + head}, 0},
		{"ancestor-yes", func(r gitops.Repo) error { return isAncestor(r, base, head, true) },
			[]string{"merge-base", "--is-ancestor", base, head}, 0},
		{"ancestor-no", func(r gitops.Repo) error { return isAncestor(r, head, main, false) },
			[]string{"merge-base", "--is-ancestor", head, main}, 1},
		{"merge-base", func(r gitops.Repo) error { _, err := r.MergeBase(main, head); return err },
			[]string{"merge-base", main, head}, 0},
	}
	for _, o := range ops {
		b.Run(o.name+"/gitops", func(b *testing.B) {
			for b.Loop() {
				r, err := gitops.Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				if err := o.op(r); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(o.name+"/warm", func(b *testing.B) {
			r, err := gitops.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			if err := o.op(r); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := o.op(r); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(o.name+"/git", func(b *testing.B) {
			for b.Loop() {
				c := exec.Command("git", o.git...)
				c.Dir = dir
				err := c.Run()
				if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == o.exit {
					err = nil
				}
				if err != nil {
					b.Fatalf("git %s: %v", strings.Join(o.git, " "), err)
				}
			}
		})
	}
}

func isAncestor(r gitops.Repo, a, b string, want bool) error {
	ok, err := r.IsAncestor(a, b)
	if err == nil && ok != want {
		err = fmt.Errorf("IsAncestor = %v, want %v", ok, want)
	}
	return err
}

// benchRepo makes a repository of about n commits with git fast-import: a
// main line where a feature branch of four commits forks, main moves on,
// and the branch is merged back, over and over, in 200 files; then the
// open branch feature/session-work of 20 commits off main.
func benchRepo(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	if out, err := exec.Command("git", "init", "-q", "-b", "main", dir).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v: %s", err, out)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var w strings.Builder
	mark, when, commits := 0, int64(1_600_000_000), 0
	commit := func(ref string, from, merge int, files ...int) int {
		mark++
		commits++
		when += 30 + rng.Int64N(600)
		msg := fmt.Sprintf("Change %d", commits)
		fmt.Fprintf(&w, "commit %s\nmark :%d\ncommitter Bench <bench@example.test> %d +0000\ndata %d\n%s\n", ref, mark, when, len(msg), msg)
		if from > 0 {
			fmt.Fprintf(&w, "from :%d\n", from)
		}
		if merge > 0 {
			fmt.Fprintf(&w, "merge :%d\n", merge)
		}
		for _, f := range files {
			body := fmt.Sprintf("package d%d\n\n// file %d as of change %d\nvar v%d = %d\n", f%10, f, commits, f, rng.IntN(1000))
			fmt.Fprintf(&w, "M 100644 inline d%d/f%d.go\ndata %d\n%s\n", f%10, f, len(body), body)
		}
		w.WriteString("\n")
		return mark
	}
	all := make([]int, 200)
	for i := range all {
		all[i] = i
	}
	mainTip := commit("refs/heads/main", 0, 0, all...)
	some := func() []int { return []int{rng.IntN(200), rng.IntN(200)} }
	for commits < n-25 {
		fork, tip := mainTip, 0
		var touched []int
		for i := range 4 {
			from := 0
			if i == 0 {
				from = fork
			}
			f := some()
			touched = append(touched, f...)
			tip = commit("refs/heads/topic", from, 0, f...)
		}
		for range 3 {
			commit("refs/heads/main", 0, 0, some()...)
		}
		mainTip = commit("refs/heads/main", 0, tip, touched...)
	}
	for range 2 {
		mainTip = commit("refs/heads/main", 0, 0, some()...)
	}
	for i := range 20 {
		from := 0
		if i == 0 {
			from = mainTip
		}
		commit("refs/heads/feature/session-work", from, 0, some()...)
	}
	for range 3 {
		commit("refs/heads/main", 0, 0, some()...)
	}
	w.WriteString("done\n")
	git := func(stdin string, args ...string) {
		c := exec.Command("git", args...)
		c.Dir = dir
		c.Stdin = strings.NewReader(stdin)
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("git %s: %v: %s", args[0], err, out)
		}
	}
	git(w.String(), "fast-import", "--quiet", "--done")
	git("", "update-ref", "-d", "refs/heads/topic")
	git("", "reset", "-q", "--hard")
	if _, err := os.Stat(filepath.Join(dir, "d0")); err != nil {
		b.Fatalf("the generated repository has no checkout: %v", err)
	}
	return dir
}
