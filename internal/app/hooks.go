package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/store"
)

// installHooks writes the git hooks that guard main into the repository's
// hooks directory (core.hooksPath when set). Hooks baton did not write
// refuse the install, exit 5, naming them.
func (a *App) installHooks(cfg store.Config) (dir string, written []string, err error) {
	r, err := a.needRepo("init --hooks")
	if err != nil {
		return "", nil, err
	}
	main, _, err := mainOf(r, cfg)
	if err != nil {
		// an empty repository: guard the branch its first commit will make
		if main = cfg.MainBranch; main == "" {
			main = "main"
		}
	}
	if dir, err = gitops.HooksDir(r); err != nil {
		return "", nil, gitErr(err, "finding the hooks directory")
	}
	written, err = gitops.InstallHooks(dir, main)
	var fe *gitops.ForeignHooksError
	switch {
	case errors.As(err, &fe):
		return dir, nil, errs.New(errs.Conflict, "init --hooks: %v", err)
	case err != nil:
		return dir, written, errs.New(errs.Unexpected, "init --hooks: writing hooks into %s: %v", dir, err)
	}
	return dir, written, nil
}

// staleHooksNote is verify's note of git hooks an earlier baton installed
// ("" when there are none, or no repository).
func (a *App) staleHooksNote(cfg store.Config) string {
	r := a.repo()
	if r == nil {
		return ""
	}
	main, _, err := mainOf(r, cfg)
	if err != nil {
		return ""
	}
	dir, err := gitops.HooksDir(r)
	if err != nil {
		return ""
	}
	if stale := gitops.StaleHooks(dir, main); len(stale) > 0 {
		return fmt.Sprintf("the git hooks %s were installed by an earlier baton and guard main differently from this one's: a person runs 'baton init --hooks' to replace them", strings.Join(stale, ", "))
	}
	return ""
}
