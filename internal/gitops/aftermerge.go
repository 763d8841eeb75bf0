package gitops

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// What a command needs around a merge: undoing one whose state could not be
// recorded, leaving the worktrees of a deleted branch on main or on a
// detached HEAD, and the committer's identity.

// UndoMerge moves into back from the merge res made to where it was, if it
// has not moved since (compare-and-swap), and resets the checkout the merge
// updated. It is for a merge whose record could not be written.
func UndoMerge(r Repo, into string, res MergeResult) error {
	g, ok := r.(*repo)
	if !ok || res.Commit == "" {
		return errors.New("nothing to undo")
	}
	if err := g.moveBranch(into, res.Commit, res.Previous, "reset: moving back to "+res.Previous+" (baton: merge undone)"); err != nil {
		return err
	}
	if res.Worktree == "" {
		return nil
	}
	wt, err := g.checkoutOf(into)
	if err != nil || wt == nil {
		return err
	}
	if err := wt.update(res.Commit, res.Previous); err != nil && !switched(err) {
		return fmt.Errorf("%s moved back to %s, but updating the checkout at %s failed: %w", into, Short(res.Previous), wt.top, err)
	}
	return nil
}

// ResetCheckout puts the checkout of branch (if any) back from commit from
// to commit to: the files and index entries the two differ in are written
// as they are in to. Those already as in to are left as they are, so it is
// safe to repeat, and writes nothing for an update that never ran.
func ResetCheckout(r Repo, branch, from, to string) error {
	g, ok := r.(*repo)
	if !ok {
		return errors.New("not a git repository")
	}
	wt, err := g.checkoutOf(branch)
	if err != nil || wt == nil {
		return err
	}
	if _, err := g.r.CommitObject(plumbing.NewHash(from)); err != nil {
		return nil // the merge commit was never written: nothing was checked out
	}
	if err := wt.update(from, to); !switched(err) {
		return err
	}
	return nil
}

// switched says whether err is a checkout a git command switched to
// another branch meanwhile: no longer the branch's, so none of its files
// are put back.
func switched(err error) bool {
	var sw *switchedError
	return errors.As(err, &sw)
}

// RestoreBranch recreates a branch deleted by mistake at the commit it had.
func RestoreBranch(r Repo, name, at string) error {
	if _, err := r.Branch(name); err == nil {
		return nil
	}
	return r.CreateBranch(name, at)
}

// Detach leaves every worktree that has branch checked out on a detached
// HEAD at commit at, its files and index untouched, so that the branch can
// be deleted without leaving a worktree on a branch that does not exist
// (what `git switch --detach` does). It returns the worktrees changed. A
// worktree's HEAD is read again under its lock (replaceLocked): one that a
// git command switched to another branch meanwhile is left as it is.
func Detach(r Repo, branch, at string) ([]string, error) {
	var done []string
	want := "ref: refs/heads/" + branch
	for top, head := range worktreeHeads(r) {
		b, err := os.ReadFile(head)
		if err != nil || strings.TrimSpace(string(b)) != want {
			continue
		}
		changed, err := replaceLocked(head, want, at+"\n")
		if err != nil {
			return done, err
		}
		if changed {
			done = append(done, top)
		}
	}
	return done, nil
}

// LeaveMerged leaves the worktrees that had branch checked out, once it is
// merged into into and deleted, where a person would go next: on into. The
// worktree that has it (git keeps a branch checked out in one worktree) is
// switched to into as 'git switch' switches it, when no other worktree has
// into checked out and into is still at merged: its files and index move
// from the branch's last commit at to merged, and its HEAD names into. One
// with changes of its own in the files the move writes keeps them and is
// detached instead (Detach), as is every worktree when into is checked out
// elsewhere. It returns the worktrees switched and those detached.
func LeaveMerged(r Repo, branch, at, into, merged string) (switched, detached []string, err error) {
	g, ok := r.(*repo)
	if !ok {
		return nil, nil, ErrNoRepository
	}
	c, err := g.checkoutOf(branch)
	if err != nil || c == nil {
		return nil, nil, err
	}
	if done, err := c.switchTo(into, at, merged); err != nil || done {
		if done {
			switched = []string{c.top}
		}
		return switched, nil, err
	}
	detached, err = Detach(r, branch, at)
	return nil, detached, err
}

// switchTo moves the checkout, on its deleted branch at commit at, to into
// at merged (LeaveMerged): false, with nothing changed, when into is
// checked out elsewhere or has moved, or the move would overwrite a change
// of the checkout's own.
func (c *checkout) switchTo(into, at, merged string) (bool, error) {
	if other, err := c.g.checkoutOf(into); err != nil || other != nil {
		return false, err
	}
	if cur, err := c.g.Branch(into); err != nil || cur != merged {
		return false, nil
	}
	if err := c.lockIndex(); err != nil {
		return false, err
	}
	defer c.unlockIndex()
	if c.movable(at, merged) != nil {
		return false, nil
	}
	if err := c.checkOut(at, merged); err != nil {
		return false, err
	}
	head := filepath.Join(c.gitDir, "HEAD")
	done, err := replaceLocked(head, "ref: refs/heads/"+c.branch, "ref: refs/heads/"+into+"\n")
	if done {
		c.g.appendReflog([]string{filepath.Join(c.gitDir, "logs", "HEAD")}, at, merged, "checkout: moving from "+c.branch+" to "+into)
	}
	return done, err
}

// movable refuses a checkout at commit old whose index or files differ
// from old in a path that moving to new writes: a change of its own the
// move would overwrite ('git switch' carries the others along), or an
// untracked file in its way.
func (c *checkout) movable(old, new string) error {
	changes, idx, err := c.changesAndIndex(old, new)
	if err != nil {
		return err
	}
	execBit := c.execBit()
	var dirty []string
	for _, ch := range changes {
		if ch.From.Name == "" {
			if _, err := idx.Entry(ch.To.Name); err == nil {
				dirty = append(dirty, ch.To.Name) // staged where new adds a file
			}
			continue
		}
		e, err := idx.Entry(ch.From.Name)
		if err != nil || e.Hash != ch.From.Hash || e.Mode != indexMode(ch.From.Mode) || e.Stage != 0 {
			dirty = append(dirty, ch.From.Name) // staged, or deleted from the index
			continue
		}
		if e.Mode == filemode.Submodule || e.SkipWorktree {
			continue
		}
		if changed, err := fileChanged(c.top, e, execBit); err != nil || changed {
			dirty = append(dirty, ch.From.Name)
		}
	}
	if len(dirty) > 0 && !c.gitSaysClean() {
		return c.dirtyError(uniq(dirty))
	}
	return c.untrackedInTheWay(old, new)
}

// replaceLocked replaces a file (a worktree's HEAD) holding want (spaces
// around it aside) with text, under git's lock protocol, so that a kill at
// any moment leaves the old file or the new one and no lock baton would
// not know as its own: path.lock is taken (lockAt: created exclusively and
// whole; a git process holding it makes this fail), the file is read again
// — a git process may have changed it before the lock was taken, and then
// it is left as it is (false) — and the new content is written whole
// beside path and renamed over it, and the lock is released. git writes
// the content into the lock itself, which a kill can leave empty.
func replaceLocked(path, want, text string) (bool, error) {
	unlock, err := lockAt(path, filepath.Dir(path))
	if err != nil {
		return false, fmt.Errorf("locking %s: %w (is a git command running there?)", path, err)
	}
	defer unlock()
	if b, err := os.ReadFile(path); err != nil || strings.TrimSpace(string(b)) != want {
		return false, nil
	}
	return true, placeFile(filepath.Dir(path), path, []byte(text), true, os.Rename)
}

// worktreeHeads maps each worktree's top to its HEAD file: the main
// worktree, the one baton runs in, and the linked ones that still exist.
func worktreeHeads(r Repo) map[string]string {
	out := map[string]string{}
	g, ok := r.(*repo)
	if !ok {
		return out
	}
	common := g.loc.CommonDir
	if filepath.Base(common) == ".git" {
		out[filepath.Dir(common)] = filepath.Join(common, "HEAD")
	}
	if g.loc.Top != "" {
		// the worktree baton runs in, whose .git may be a file naming a git
		// directory kept elsewhere (git init --separate-git-dir, a submodule)
		out[g.loc.Top] = filepath.Join(g.loc.GitDir, "HEAD")
	}
	linked, _ := filepath.Glob(filepath.Join(common, "worktrees", "*", "gitdir"))
	for _, gd := range linked {
		b, err := os.ReadFile(gd)
		if err != nil {
			continue
		}
		top := filepath.Dir(strings.TrimSpace(string(b)))
		if _, err := os.Stat(top); err != nil {
			continue // removed without 'git worktree prune'
		}
		out[top] = filepath.Join(filepath.Dir(gd), "HEAD")
	}
	return out
}

// Identity returns the user.name and user.email git would commit with
// (repository config over the global one); "" when unset.
func Identity(r Repo) (name, email string) {
	g, ok := r.(*repo)
	if !ok {
		return "", ""
	}
	cfg, err := g.r.ConfigScoped(config.GlobalScope)
	if err != nil {
		return "", ""
	}
	return cfg.User.Name, cfg.User.Email
}
