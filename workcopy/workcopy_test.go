package workcopy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := git(context.Background(), dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func commit(t *testing.T, dir, file string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "add", file)
	run(t, dir, "commit", "-qm", "add "+file)
	return run(t, dir, "rev-parse", "HEAD")
}

func newMain(t *testing.T) string {
	t.Helper()
	for k, v := range map[string]string{"GIT_CONFIG_NOSYSTEM": "1", "HOME": t.TempDir(), "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.test",
		"GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.test"} {
		t.Setenv(k, v)
	}
	main := filepath.Join(t.TempDir(), "main")
	run(t, "", "init", "-q", "-b", "main", main)
	commit(t, main, "a")
	return main
}

func TestImportsTheSessionBranchOnly(t *testing.T) {
	ctx := context.Background()
	main := newMain(t)
	mainHead := run(t, main, "rev-parse", "main")
	c, err := Make(ctx, main, filepath.Join(t.TempDir(), "w"), "feature/f1", "main")
	if err != nil {
		t.Fatal(err)
	}
	if got := run(t, c.Dir, "branch", "--show-current"); got != "feature/f1" {
		t.Fatalf("the clone is on %q", got)
	}
	head := commit(t, c.Dir, "b")
	run(t, c.Dir, "branch", "other")
	run(t, c.Dir, "update-ref", "refs/heads/main", head)
	got, err := c.Import(ctx)
	if err != nil || got != head {
		t.Fatalf("Import = %q, %v; want %s", got, err, head)
	}
	if run(t, main, "rev-parse", "feature/f1") != head {
		t.Error("the session's branch did not come back")
	}
	if run(t, main, "rev-parse", "main") != mainHead {
		t.Error("main moved")
	}
	if _, err := git(ctx, main, "rev-parse", "--verify", "--quiet", "refs/heads/other"); err == nil {
		t.Error("another branch came back")
	}
	if got, err := c.Import(ctx); got != "" || err != nil {
		t.Errorf("a second import with nothing new: %q, %v", got, err)
	}
	// a rewrite of the recorded branch is refused; main's branch stays
	run(t, c.Dir, "reset", "-q", "--hard", "HEAD~1")
	commit(t, c.Dir, "c")
	if _, err := c.Import(ctx); !errors.Is(err, ErrNotFastForward) {
		t.Errorf("a rewritten branch: %v, want ErrNotFastForward", err)
	}
	if run(t, main, "rev-parse", "feature/f1") != head {
		t.Error("the rewrite reached the main repository")
	}
}

func TestExistingBranchAndNoBranch(t *testing.T) {
	ctx := context.Background()
	main := newMain(t)
	run(t, main, "branch", "feature/x")
	run(t, main, "checkout", "-q", "feature/x")
	x := commit(t, main, "x")
	run(t, main, "checkout", "-q", "main")
	c, err := Make(ctx, main, filepath.Join(t.TempDir(), "w"), "feature/x", "main")
	if err != nil {
		t.Fatal(err)
	}
	if run(t, c.Dir, "rev-parse", "HEAD") != x {
		t.Error("the clone does not start at the branch's head")
	}
	r, err := Make(ctx, main, filepath.Join(t.TempDir(), "r"), "", "main")
	if err != nil {
		t.Fatal(err)
	}
	commit(t, r.Dir, "y")
	if got, err := r.Import(ctx); got != "" || err != nil {
		t.Errorf("a copy without a branch imported %q, %v", got, err)
	}
	if _, err := Make(ctx, main, filepath.Join(t.TempDir(), "bad"), "--upload-pack=x", "main"); err == nil {
		t.Error("an option as a branch name was taken")
	}
}
