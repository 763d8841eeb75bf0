package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// Where the state directory came from, for `baton status` and messages.
const (
	FromFlag     = "--state-dir"
	FromBatonEnv = "BATON_STATE_DIR"
	FromAgentEnv = "AGENT_STATE_DIR"
	FromFileFlag = "--file"
	FromGitTop   = "main worktree"
	FromCwd      = "current directory"
)

// Locate is the input to Discover: the flag value, the environment and the
// working directory, read once at the composition root.
type Locate struct {
	StateDir string
	File     string
	Getenv   func(string) string
	Cwd      string
}

// Discover returns the state directory, in the order DESIGN.md gives: the
// flag, $BATON_STATE_DIR, $AGENT_STATE_DIR, the directory of --file, the top
// of the main worktree of the enclosing git repository (so that linked
// worktrees share one state), else the current directory.
func Discover(l Locate) (dir, source string) {
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(l.Cwd, p)
	}
	switch {
	case l.StateDir != "":
		return abs(l.StateDir), FromFlag
	case l.File != "":
		return filepath.Dir(abs(l.File)), FromFileFlag
	case l.Getenv("BATON_STATE_DIR") != "":
		return abs(l.Getenv("BATON_STATE_DIR")), FromBatonEnv
	case l.Getenv("AGENT_STATE_DIR") != "":
		return abs(l.Getenv("AGENT_STATE_DIR")), FromAgentEnv
	}
	if top := MainWorktree(l.Cwd); top != "" {
		return top, FromGitTop
	}
	return l.Cwd, FromCwd
}

// MainWorktree returns the top of the main worktree of the repository that
// encloses dir, or "" outside a repository. It reads .git files directly:
// a linked worktree's .git file names its git dir, whose commondir names the
// main repository's .git.
func MainWorktree(dir string) string {
	for d := dir; ; {
		gitPath := filepath.Join(d, ".git")
		if fi, err := os.Stat(gitPath); err == nil {
			if fi.IsDir() {
				return d
			}
			return fromGitFile(d, gitPath)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

func fromGitFile(worktree, gitFile string) string {
	b, err := os.ReadFile(gitFile)
	if err != nil {
		return worktree
	}
	gitDir := strings.TrimSpace(strings.TrimPrefix(string(bytes.TrimSpace(b)), "gitdir:"))
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(worktree, gitDir)
	}
	c, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return worktree // a submodule or a plain gitdir link: its own top
	}
	common := strings.TrimSpace(string(c))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitDir, common)
	}
	common = filepath.Clean(common)
	if filepath.Base(common) == ".git" {
		return filepath.Dir(common)
	}
	return worktree
}
