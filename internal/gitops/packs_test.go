package gitops_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/gitops"
)

// Packed repositories are read through the pack index read in place; the
// answers must be git's, for packed and loose objects alike, and short
// hashes must resolve from either.
func TestPackedRepository(t *testing.T) {
	r := featureHistory(t, 4)
	r.git("repack", "-adq")
	r.git("prune-packed")
	if packs, _ := filepath.Glob(filepath.Join(r.dir, ".git", "objects", "pack", "*.idx")); len(packs) != 1 {
		t.Fatalf("want one pack, found %v", packs)
	}
	loose := r.commit("a.txt", "after the repack") // a loose object beside the pack
	g := r.open()
	checkRange(t, r, g, "main", "feature/2")
	checkRange(t, r, g, "feature/0", "main")
	checkRange(t, r, g, "", "main")
	checkAncestry(t, r, g, "feature/1", "main")
	checkAncestry(t, r, g, "feature/2", "main")
	checkMergeBase(t, r, g, "main", "feature/2")
	for _, rev := range []string{r.git("rev-parse", "--short", "feature/2~2"), loose[:8], "main~3", "feature/1"} {
		got, err := gitops.ResolveCommit(g, rev)
		if want := r.git("rev-parse", rev); err != nil || got != want {
			t.Errorf("ResolveCommit(%s) = %s, %v; git says %s", rev, got, err, want)
		}
	}
	if _, err := gitops.ResolveCommit(g, "0000000"); err == nil {
		t.Error("a hash that is in no pack and not loose resolved")
	}
	// a three-way merge of packed history, checked against git's own
	res, err := g.Merge(gitops.MergeOptions{Branch: "feature/2", Into: "main", Message: "m", Signature: sig()})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(r.git("merge-tree", "--write-tree", res.Previous, "feature/2"))[0]
	if got := r.git("rev-parse", res.Commit+"^{tree}"); got != want {
		t.Fatalf("merged tree %s, git's %s", got, want)
	}
	if st := r.git("status", "--porcelain"); st != "" {
		t.Fatalf("checkout not clean after merging packed history:\n%s", st)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "f2.txt")); err != nil {
		t.Fatal("merged file missing from the checkout")
	}
}

// A loose object is read from its file directly; one that is not what git
// writes there (cut short, not zlib) resolves to an error, never to
// another object or a crash, and the objects beside it still read.
func TestLooseObjectDamaged(t *testing.T) {
	r := featureHistory(t, 1)
	bad := r.commit("b.txt", "to be damaged")
	good := r.git("rev-parse", "main~1")
	p := filepath.Join(r.dir, ".git", "objects", bad[:2], bad[2:])
	for _, content := range [][]byte{nil, []byte("not zlib at all"), {0x78, 0x01, 0x4b}} {
		os.Chmod(p, 0o644)
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		g := r.open()
		if h, err := gitops.ResolveCommit(g, bad); err == nil {
			t.Errorf("a damaged loose commit (%q) resolved to %s", content, h)
		}
		if h, err := gitops.ResolveCommit(g, good); err != nil || h != good {
			t.Errorf("the commit beside a damaged one: %s, %v", h, err)
		}
	}
}
