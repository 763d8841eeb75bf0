package store

import (
	"path/filepath"

	"github.com/baton-cli/baton/internal/gitops"
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
// flag, the directory of --file, $BATON_STATE_DIR, $AGENT_STATE_DIR, the top
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
// encloses dir, or "" outside a repository: a linked worktree's common
// directory is the main repository's .git, whose parent is that top.
func MainWorktree(dir string) string {
	loc, err := gitops.Locate(dir)
	if err != nil {
		return ""
	}
	if loc.CommonDir != loc.GitDir && filepath.Base(loc.CommonDir) == ".git" {
		return filepath.Dir(loc.CommonDir)
	}
	return loc.Top
}
