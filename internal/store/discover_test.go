package store_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/store"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// tempDir returns a fresh directory with symlinks resolved, so that paths
// git writes compare equal to the ones the test builds.
func tempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// git runs the git CLI in dir with an isolated configuration.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	home := t.TempDir()
	cmd.Env = append(os.Environ(),
		"HOME="+home, "GIT_CONFIG_GLOBAL="+filepath.Join(home, "gitconfig"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com",
	)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func mkdirs(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// newRepo makes a git repository with one commit and a subdirectory.
func newRepo(t *testing.T, dir string) {
	t.Helper()
	mkdirs(t, filepath.Join(dir, "src", "deep"))
	git(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "README")
	git(t, dir, "commit", "-q", "-m", "init")
}

func TestDiscoverOrder(t *testing.T) {
	all := map[string]string{"BATON_STATE_DIR": "/env/baton", "AGENT_STATE_DIR": "/env/agent"}
	tests := []struct {
		name      string
		loc       store.Locate
		dir, from string
	}{
		{"flag beats everything", store.Locate{StateDir: "/flag", File: "/f/progress.json", Getenv: env(all), Cwd: "/cwd"}, "/flag", store.FromFlag},
		{"relative flag is under cwd", store.Locate{StateDir: "state", Getenv: env(nil), Cwd: "/cwd"}, "/cwd/state", store.FromFlag},
		{"flag is cleaned", store.Locate{StateDir: "/a/b/../c/", Getenv: env(nil), Cwd: "/cwd"}, "/a/c", store.FromFlag},
		{"--file beats the environment", store.Locate{File: "/f/progress.json", Getenv: env(all), Cwd: "/cwd"}, "/f", store.FromFileFlag},
		{"relative --file", store.Locate{File: "sub/reviews.json", Getenv: env(nil), Cwd: "/cwd"}, "/cwd/sub", store.FromFileFlag},
		{"bare --file name", store.Locate{File: "progress.json", Getenv: env(nil), Cwd: "/cwd"}, "/cwd", store.FromFileFlag},
		{"BATON_STATE_DIR beats AGENT_STATE_DIR", store.Locate{Getenv: env(all), Cwd: "/cwd"}, "/env/baton", store.FromBatonEnv},
		{"AGENT_STATE_DIR", store.Locate{Getenv: env(map[string]string{"AGENT_STATE_DIR": "/env/agent"}), Cwd: "/cwd"}, "/env/agent", store.FromAgentEnv},
		{"relative env is under cwd", store.Locate{Getenv: env(map[string]string{"BATON_STATE_DIR": "../s"}), Cwd: "/cwd/x"}, "/cwd/s", store.FromBatonEnv},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, from := store.Discover(tt.loc)
			if dir != tt.dir || from != tt.from {
				t.Errorf("Discover = %q from %q, want %q from %q", dir, from, tt.dir, tt.from)
			}
		})
	}
}

func TestDiscoverCwdFallback(t *testing.T) {
	cwd := mkdirs(t, filepath.Join(tempDir(t), "plain", "sub"))
	if top := store.MainWorktree(cwd); top != "" {
		t.Skipf("the temp directory is inside a git repository (%s)", top)
	}
	dir, from := store.Discover(store.Locate{Getenv: env(nil), Cwd: cwd})
	if dir != cwd || from != store.FromCwd {
		t.Errorf("Discover = %q from %q, want the cwd", dir, from)
	}
}

func TestDiscoverMainWorktree(t *testing.T) {
	root := tempDir(t)
	main := filepath.Join(root, "main")
	newRepo(t, main)
	for _, cwd := range []string{main, filepath.Join(main, "src"), filepath.Join(main, "src", "deep")} {
		dir, from := store.Discover(store.Locate{Getenv: env(nil), Cwd: cwd})
		if dir != main || from != store.FromGitTop {
			t.Errorf("from %s: Discover = %q from %q, want %q from the main worktree", cwd, dir, from, main)
		}
	}
	// The environment still wins inside a repository.
	if dir, from := store.Discover(store.Locate{Getenv: env(map[string]string{"AGENT_STATE_DIR": "/s"}), Cwd: main}); dir != "/s" || from != store.FromAgentEnv {
		t.Errorf("env in a repo: %q from %q", dir, from)
	}
}

// An agent working in a linked worktree shares the main worktree's state.
func TestDiscoverFromLinkedWorktree(t *testing.T) {
	root := tempDir(t)
	main := filepath.Join(root, "main")
	newRepo(t, main)
	wt := filepath.Join(root, "wt-feature")
	git(t, main, "worktree", "add", "-q", "-b", "feature/x", wt)
	if fi, err := os.Stat(filepath.Join(wt, ".git")); err != nil || fi.IsDir() {
		t.Fatalf("linked worktree has no .git file: %v", err)
	}
	for _, cwd := range []string{wt, filepath.Join(wt, "src", "deep")} {
		dir, from := store.Discover(store.Locate{Getenv: env(nil), Cwd: cwd})
		if dir != main || from != store.FromGitTop {
			t.Errorf("from %s: Discover = %q from %q, want %q", cwd, dir, from, main)
		}
	}

	// git also reads a relative gitdir (git worktree add with
	// worktree.useRelativePaths writes one); so must baton.
	rel, err := filepath.Rel(wt, filepath.Join(main, ".git", "worktrees", filepath.Base(wt)))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+rel+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, wt, "status", "--short") // git accepts the layout
	if got := store.MainWorktree(filepath.Join(wt, "src")); got != main {
		t.Errorf("with a relative gitdir: MainWorktree = %q, want %q", got, main)
	}
}

// A .git file that is not a linked worktree (a separate git dir, as
// `git init --separate-git-dir` or a submodule makes) is its own top.
func TestDiscoverSeparateGitDir(t *testing.T) {
	root := tempDir(t)
	repo := mkdirs(t, filepath.Join(root, "repo", "sub"))
	repo = filepath.Dir(repo)
	git(t, repo, "init", "-q", "--separate-git-dir", filepath.Join(root, "elsewhere.git"))
	if got := store.MainWorktree(filepath.Join(repo, "sub")); got != repo {
		t.Errorf("MainWorktree = %q, want %q", got, repo)
	}
}

func TestMainWorktreeOutsideRepo(t *testing.T) {
	d := tempDir(t)
	if store.MainWorktree(d) != "" {
		t.Skip("the temp directory is inside a git repository")
	}
	// Walking up from a subdirectory finds no repository either.
	if got := store.MainWorktree(mkdirs(t, filepath.Join(d, "a", "b"))); got != "" {
		t.Errorf("MainWorktree = %q outside a repository", got)
	}
}
