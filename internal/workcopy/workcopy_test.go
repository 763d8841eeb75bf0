package workcopy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
	run(t, main, "config", "user.name", "Main Identity")
	if err := os.MkdirAll(filepath.Join(main, "src", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	commit(t, main, "src/deep/a")
	return main
}

// source reads the main repository as the launcher does.
func source(t *testing.T, main string) Source {
	t.Helper()
	src := Source{Top: main, CommonDir: filepath.Join(main, ".git"), Heads: map[string]string{}}
	for _, line := range strings.Split(run(t, main, "for-each-ref", "--format=%(refname:lstrip=2) %(objectname)", "refs/heads/"), "\n") {
		name, h, _ := strings.Cut(line, " ")
		src.Heads[name] = h
	}
	src.Name = run(t, main, "config", "user.name")
	return src
}

func TestImportsTheSessionBranchOnly(t *testing.T) {
	ctx := context.Background()
	main := newMain(t)
	mainHead := run(t, main, "rev-parse", "main")
	c, err := Make(ctx, source(t, main), filepath.Join(t.TempDir(), "w"), "feature/f1", "main")
	if err != nil {
		t.Fatal(err)
	}
	if got := run(t, c.Dir, "branch", "--show-current"); got != "feature/f1" {
		t.Fatalf("the clone is on %q", got)
	}
	if got := run(t, c.Dir, "status", "--porcelain"); got != "" {
		t.Fatalf("a fresh clone is not clean: %q", got)
	}
	if got := run(t, c.Dir, "config", "user.name"); got != "Main Identity" {
		t.Errorf("the clone commits as %q, not as the main repository", got)
	}
	for _, ref := range []string{"origin/main", "main"} {
		if got := run(t, c.Dir, "rev-parse", ref); got != mainHead {
			t.Errorf("%s is %q in the clone, want %s", ref, got, mainHead)
		}
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
	// a rewrite of this session's own commits (an amend) is taken
	run(t, c.Dir, "commit", "-q", "--amend", "-m", "amended")
	amended := run(t, c.Dir, "rev-parse", "HEAD")
	if got, err := c.Import(ctx); err != nil || got != amended {
		t.Errorf("an amended commit of this session: %q, %v", got, err)
	}
	if run(t, main, "rev-parse", "feature/f1") != amended {
		t.Error("the amended commit did not come back")
	}
}

func TestExistingBranchAndNoBranch(t *testing.T) {
	ctx := context.Background()
	main := newMain(t)
	run(t, main, "branch", "feature/x")
	run(t, main, "checkout", "-q", "feature/x")
	x := commit(t, main, "x")
	run(t, main, "checkout", "-q", "main")
	c, err := Make(ctx, source(t, main), filepath.Join(t.TempDir(), "w"), "feature/x", "main")
	if err != nil {
		t.Fatal(err)
	}
	if run(t, c.Dir, "rev-parse", "HEAD") != x {
		t.Error("the clone does not start at the branch's head")
	}
	// dropping a commit the branch had when the session began is refused
	run(t, c.Dir, "reset", "-q", "--hard", "HEAD~1")
	commit(t, c.Dir, "c")
	if _, err := c.Import(ctx); !errors.Is(err, ErrNotFastForward) {
		t.Errorf("a rewritten branch: %v, want ErrNotFastForward", err)
	}
	if run(t, main, "rev-parse", "feature/x") != x {
		t.Error("the rewrite reached the main repository")
	}
	r, err := Make(ctx, source(t, main), filepath.Join(t.TempDir(), "r"), "", "main")
	if err != nil {
		t.Fatal(err)
	}
	commit(t, r.Dir, "y")
	if got, err := r.Import(ctx); got != "" || err != nil {
		t.Errorf("a copy without a branch imported %q, %v", got, err)
	}
	if _, err := Make(ctx, source(t, main), filepath.Join(t.TempDir(), "bad"), "--upload-pack=x", "main"); err == nil {
		t.Error("an option as a branch name was taken")
	}
}

// TestLinksAndFIFOsAreNotRead: the launcher reads the clone's HEAD and
// refs with the person's rights; a ref the agent made a link to a secret
// (which reads like a SHA-256 hash) or a FIFO is not read.
func TestLinksAndFIFOsAreNotRead(t *testing.T) {
	ctx := context.Background()
	main := newMain(t)
	c, err := Make(ctx, source(t, main), filepath.Join(t.TempDir(), "w"), "feature/f1", "main")
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(secret, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(c.Dir, ".git", "refs", "heads", "feature", "f1")
	if err := os.Remove(ref); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, ref); err != nil {
		t.Fatal(err)
	}
	if h, _ := c.Head(); h != "" {
		t.Errorf("HEAD through a link reads %q", h)
	}
	if got, err := c.Import(ctx); got != "" || err != nil {
		t.Errorf("an import through a link: %q, %v", got, err)
	}
	if err := os.Remove(ref); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(ref, 0o644); err != nil {
		t.Fatal(err)
	}
	if h, _ := c.Head(); h != "" { // returns at once: a FIFO is not opened for reading
		t.Errorf("HEAD through a FIFO reads %q", h)
	}
}
