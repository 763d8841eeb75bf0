package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/workflow"
)

// ---- branch create

// BranchCreateInput is what branch create takes.
type BranchCreateInput struct {
	Name string `json:"name"`
	From string `json:"from,omitempty"` // commit, branch or tag to start at (default: main's head)
}

// BranchCreated is the branch made, where, and from what.
type BranchCreated struct {
	Branch string `json:"branch"`
	At     string `json:"at"`
	From   string `json:"from"`
}

// branchStart resolves where a new branch starts: --from, else main.
func (a *App) branchStart(r gitops.Repo, st *state, from string) (at, label string, err error) {
	if strings.TrimSpace(from) == "" {
		name, head, err := mainOf(r, st.cfg)
		if err != nil {
			return "", "", fmt.Errorf("%w; or give --from REV", err)
		}
		return head, name, nil
	}
	at, err = a.resolveRev(r, "--from", strings.TrimSpace(from))
	return at, strings.TrimSpace(from), err
}

// BranchCreate creates a work branch at main (or in.From); IMPLEMENT creates feature branches, FIX only refactor/ branches.
func (a *App) BranchCreate(ctx context.Context, c Caller, in BranchCreateInput) (BranchCreated, error) {
	if a.remote != nil {
		return forward[BranchCreated](ctx, a, c, "branch.create", in)
	}
	var out BranchCreated
	err := a.as(c).runBranchCreate(ctx, "baton branch create", in, &out)
	return out, err
}

func (a *App) runBranchCreate(ctx context.Context, cmdPath string, o BranchCreateInput, dst *BranchCreated) error {
	r, err := a.needRepo("branch create")
	if err != nil {
		return err
	}
	name := strings.TrimSpace(o.Name)
	action := workflow.BranchAction(name)
	var out BranchCreated
	err = a.update(ctx, cmdPath, "", func(st *state) error {
		if _, err := st.require(action); err != nil {
			return err
		}
		at, from, err := a.branchStart(r, st, o.From)
		if err != nil {
			return err
		}
		if cur, err := r.Branch(name); err == nil {
			return errs.New(errs.Conflict, "branch %s already exists (at %s): pick another name, or switch to it with 'git switch %s'", name, gitops.Short(cur), name)
		}
		if err := st.intend(gitIntent{Op: "create-branch", Repo: r.Top(), Branch: name, BranchHead: at}); err != nil {
			return err
		}
		if err := r.CreateBranch(name, at); err != nil {
			if errors.Is(err, gitops.ErrUnknownRevision) || errors.Is(err, gitops.ErrRefMoved) {
				return gitErr(err, "creating %s", name) // a ref locked by git: exit 5
			}
			if errors.Is(err, gitops.ErrBranchNameTaken) {
				return errs.New(errs.Conflict, "branch %s cannot be created: %v: pick another name", name, err)
			}
			if errors.Is(err, gitops.ErrBadBranchName) {
				return errs.New(errs.Usage, "NAME: %v (see 'git check-ref-format --help')", err)
			}
			return gitErr(err, "creating %s", name) // the file system's failure: nothing was created
		}
		out = BranchCreated{Branch: name, At: gitops.Short(at), From: from}
		st.summary = fmt.Sprintf("created branch %s at %s (from %s)", name, out.At, from)
		st.logAlways()
		return nil
	})
	if err != nil {
		return a.withUndone(err)
	}
	*dst = out
	return nil
}
