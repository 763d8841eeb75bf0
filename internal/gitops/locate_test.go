package gitops

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A .git directory that holds no HEAD (only info/exclude, say) is not a
// repository: Locate passes over it, as git does, instead of taking its
// parent for the top of a worktree.
func TestLocatePassesOverAGitDirWithoutHead(t *testing.T) {
	top := t.TempDir()
	inner := filepath.Join(top, "project")
	if err := os.MkdirAll(filepath.Join(top, ".git", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(top, ".git", "info", "exclude"), []byte("/.baton/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	if loc, err := Locate(inner); !errors.Is(err, ErrNoRepository) {
		t.Fatalf("Locate under a .git without HEAD = %+v, %v; want ErrNoRepository", loc, err)
	}
	if err := os.WriteFile(filepath.Join(top, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	loc, err := Locate(inner)
	if err != nil || loc.Top != top {
		t.Fatalf("Locate under a repository = %+v, %v; want top %s", loc, err, top)
	}
}
