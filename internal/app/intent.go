package app

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/store"
)

// The git half of a transaction. A command that moves a ref records, in
// the transaction's intent, exactly what it is about to change — before it
// changes it; the commit of the state files removes the intent. A command
// that fails before its commit point, and the next command after one that
// was killed, undo the change with compare-and-swap (undoIntent), so that
// a merge, a rejection or a new branch is in git exactly when it is in the
// state files.

// gitIntent is one outside change: full object ids, as git has them.
type gitIntent struct {
	Op         string `json:"op"` // merge, delete-branch, create-branch
	Repo       string `json:"repo"`
	Into       string `json:"into,omitempty"`
	Previous   string `json:"previous,omitempty"` // where Into was
	Commit     string `json:"commit,omitempty"`   // where Into moves
	Branch     string `json:"branch"`
	BranchHead string `json:"branch_head"` // where Branch was (or is created)
}

// intend records the intent in the transaction before the change is made.
func (st *state) intend(in gitIntent) error {
	b, _ := json.Marshal(in)
	return st.tx.Intent(b)
}

// undoIntent puts back what an uncommitted intent changed, if it is still
// as the intent left it (compare-and-swap), and says what it did in
// a.undone for the command's message.
func (a *App) undoIntent(data []byte) error {
	var in gitIntent
	if err := json.Unmarshal(data, &in); err != nil {
		return errs.New(errs.Invalid, "the intent of an unfinished git change is unreadable (%v), so it cannot be undone; nothing was written. A person must look at it (see 'baton verify')", err)
	}
	r, err := gitops.Open(in.Repo)
	if err != nil {
		return fmt.Errorf("undoing an unfinished %s of %s: opening %s: %w", in.Op, in.Branch, in.Repo, err)
	}
	switch in.Op {
	case "merge":
		return a.undoMergeIntent(r, in)
	case "delete-branch":
		return a.restoreBranch(r, in)
	case "create-branch":
		if main, err := gitops.MainBranch(r, ""); err == nil && in.Branch == main {
			return errs.New(errs.Invalid, "the intent of an unfinished git change records the creation of %s, but baton never creates main: the intent is not one baton wrote, and nothing was undone. Stop and report it to a person", in.Branch)
		}
		cur, err := r.Branch(in.Branch)
		if errors.Is(err, gitops.ErrNoBranch) || (err == nil && cur != in.BranchHead) {
			return nil // never created, or no longer the one created
		}
		if err != nil {
			return err
		}
		a.undone = fmt.Sprintf("%s was not created", in.Branch)
		return r.DeleteBranch(in.Branch, in.BranchHead)
	}
	return errs.New(errs.Invalid, "unknown intent %q of an unfinished git change", in.Op)
}

// undoMergeIntent moves Into back from the merge commit (and its checkout
// with it) and recreates the branch.
func (a *App) undoMergeIntent(r gitops.Repo, in gitIntent) error {
	// a merge moves Into forward: an "undo" never moves it onto new work
	if fwd, err := r.IsAncestor(in.Previous, in.Commit); err != nil || !fwd || in.Previous == in.Commit {
		return errs.New(errs.Invalid, "the intent of an unfinished git change records a merge into %s from %s to %s, which is not a merge baton made (it would not move %s forward): nothing was undone. Stop and report it to a person", in.Into, gitops.Short(in.Previous), gitops.Short(in.Commit), in.Into)
	}
	cur, err := r.Branch(in.Into)
	if err != nil {
		return err
	}
	switch cur {
	case in.Commit:
		res := gitops.MergeResult{Commit: in.Commit, Previous: in.Previous, BranchHead: in.BranchHead, Worktree: "checkout"}
		if err := gitops.UndoMerge(r, in.Into, res); err != nil {
			return fmt.Errorf("moving %s back from %s to %s failed: %w; the next baton command that writes tries again", in.Into, gitops.Short(in.Commit), gitops.Short(in.Previous), err)
		}
		a.undone = fmt.Sprintf("the merge was undone: %s is back at %s", in.Into, gitops.Short(in.Previous))
	case in.Previous:
		// main never moved, or moved back before its checkout was
		if err := gitops.ResetCheckout(r, in.Into, in.Commit, in.Previous); err != nil {
			return fmt.Errorf("putting the checkout of %s back to %s failed: %w; the next baton command that writes tries again", in.Into, gitops.Short(in.Previous), err)
		}
		a.undone = fmt.Sprintf("nothing was merged: %s is still at %s", in.Into, gitops.Short(in.Previous))
	default:
		if after, err := r.IsAncestor(in.Commit, cur); err != nil || !after {
			// the merge never moved it (another process did): nothing to undo
			a.undone = fmt.Sprintf("nothing was merged: %s is at %s", in.Into, gitops.Short(cur))
			break
		}
		return errs.New(errs.Conflict, "an unfinished merge of %s into %s moved %s to %s, and %s has moved since (to %s): it cannot be undone safely, and nothing more was changed. A person must look at %s (see 'baton verify')", in.Branch, in.Into, in.Into, gitops.Short(in.Commit), in.Into, gitops.Short(cur), in.Into)
	}
	if err := a.restoreBranch(r, in); err != nil {
		return err
	}
	return nil
}

// restoreBranch recreates a branch an uncommitted change deleted.
func (a *App) restoreBranch(r gitops.Repo, in gitIntent) error {
	if _, err := r.Branch(in.Branch); err == nil {
		return nil
	}
	if err := gitops.RestoreBranch(r, in.Branch, in.BranchHead); err != nil {
		return fmt.Errorf("recreating %s at %s failed: %w ('git branch %s %s')", in.Branch, gitops.Short(in.BranchHead), err, in.Branch, in.BranchHead)
	}
	if a.undone == "" {
		a.undone = fmt.Sprintf("%s is restored at %s", in.Branch, gitops.Short(in.BranchHead))
	} else {
		a.undone += fmt.Sprintf(" and %s is restored", in.Branch)
	}
	return nil
}

// committedWarning turns a failure after a transaction's commit point into
// a warning: the change is made (the next command finishes it), so the
// command succeeds and a caller does not retry it.
func (a *App) committedWarning(err error) error {
	var ce *store.CommittedError
	if errors.As(err, &ce) {
		a.warn("%v", ce)
		return nil
	}
	return err
}
