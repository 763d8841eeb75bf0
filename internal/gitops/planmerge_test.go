package gitops_test

import (
	"errors"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
)

// TestPlanMerge: the commits PlanMerge writes have the trees and parents
// the landing's merges will have, chained one onto another, and move no
// ref; a conflict is a *ConflictError.
func TestPlanMerge(t *testing.T) {
	r := newGitRepo(t)
	r.commit("a.txt", "base")
	for _, b := range []string{"one", "two", "clash"} {
		r.git("checkout", "-q", "-b", "feature/"+b, "main")
		file := b + ".txt"
		if b == "clash" {
			file = "one.txt"
		}
		r.commit(file, b)
	}
	r.git("checkout", "-q", "main")
	main := r.git("rev-parse", "main")
	one, two, clash := r.git("rev-parse", "feature/one"), r.git("rev-parse", "feature/two"), r.git("rev-parse", "feature/clash")
	g := r.open()

	// main is an ancestor of feature/one: a fast-forward when allowed
	c1, t1, err := g.PlanMerge(main, one, true)
	if err != nil || c1 != one {
		t.Fatalf("fast-forward plan: %s, %v; want feature/one itself", c1, err)
	}
	if want, _ := g.TreeOf(one); t1 != want {
		t.Fatalf("fast-forward tree %s, want %s", t1, want)
	}
	// without it, a merge commit of main and feature/one
	nc, nt, err := g.PlanMerge(main, one, false)
	if err != nil || nc == one || nt != t1 {
		t.Fatalf("no-ff plan: %s %s %v", nc, nt, err)
	}
	if p := r.git("rev-list", "--parents", "-n1", nc); p != nc+" "+main+" "+one {
		t.Fatalf("no-ff plan's parents: %s", p)
	}
	// feature/two onto the planned merge: git's merge engine, both files
	c2, t2, err := g.PlanMerge(c1, two, true)
	if err != nil {
		t.Fatal(err)
	}
	if want, err := g.CleanMergeTree(c1, two); err != nil || t2 != want {
		t.Fatalf("chained tree %s, want %s (%v)", t2, want, err)
	}
	if files := r.git("ls-tree", "--name-only", c2); files != "a.txt\none.txt\ntwo.txt" {
		t.Fatalf("chained plan holds %q", files)
	}
	if got := r.git("rev-parse", "main"); got != main {
		t.Fatalf("main moved to %s", got)
	}
	// feature/clash changes one.txt as feature/one did
	_, _, err = g.PlanMerge(c2, clash, true)
	var ce *gitops.ConflictError
	if !errors.As(err, &ce) || len(ce.Paths) != 1 || ce.Paths[0] != "one.txt" {
		t.Fatalf("conflicting plan: %v", err)
	}
}
