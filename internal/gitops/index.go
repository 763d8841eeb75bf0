package gitops

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// ErrIndexLocked means another git process holds a checkout's index lock
// (index.lock exists): baton does not write the index under it.
var ErrIndexLocked = errors.New("the index is locked by another git process")

// readIndex reads a checkout's index with go-git's decoder; there is none
// before the first file is staged.
func readIndex(path string) (*index.Index, error) {
	idx := &index.Index{Version: 2}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return idx, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil {
		idx.ModTime = fi.ModTime()
	}
	return idx, index.NewDecoder(bufio.NewReader(f)).Decode(idx)
}

// indexPath is the checkout's index file.
func (c *checkout) indexPath() string { return filepath.Join(c.gitDir, "index") }

// batonLock starts the content of every lock baton takes (of the index,
// a ref, packed-refs, a worktree's HEAD), which then names the process
// holding it (holder.go): a lock with this marker whose holder is gone was
// left by a baton process that was killed, and is removed.
const batonLock = "baton: writing the index\n"

// checkUnlocked refuses a checkout whose index another git process holds,
// before anything changes; a lock a killed baton left is removed.
func (c *checkout) checkUnlocked() error {
	lock := c.indexPath() + ".lock"
	_, err := os.Lstat(lock)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err == nil && killedLock(lock):
		if err := os.Remove(lock); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	return c.lockedError()
}

// lockedError is the refusal of a checkout whose index.lock a git process
// holds.
func (c *checkout) lockedError() error {
	return fmt.Errorf("%w: %s exists. Wait for the git command working in %s to finish and retry; if none is running, the file was left by one that crashed — remove it", ErrIndexLocked, c.indexPath()+".lock", c.top)
}

// lockIndex takes git's lock of the checkout's index (index.lock, with
// baton's marker: takeLock) and holds it until unlockIndex, as git holds
// it from before it reads the index until the new one is in place: no git
// command stages a change, or switches the checkout to another branch,
// while baton checks and updates it. HEAD is read again under the lock: a
// checkout a git command switched since checkoutOf read it is refused
// (switchedError), nothing changed.
func (c *checkout) lockIndex() error {
	if c.held != nil {
		return nil
	}
	if err := c.checkUnlocked(); err != nil {
		return err
	}
	lock := c.indexPath() + ".lock"
	if err := takeLock(lock, c.gitDir); errors.Is(err, fs.ErrExist) {
		return c.lockedError()
	} else if err != nil {
		return fmt.Errorf("locking %s: %w", c.indexPath(), err)
	}
	c.held = func() { os.Remove(lock) }
	b, err := os.ReadFile(filepath.Join(c.gitDir, "HEAD"))
	if err != nil || strings.TrimSpace(string(b)) != "ref: refs/heads/"+c.branch {
		c.unlockIndex()
		return &switchedError{top: c.top, branch: c.branch}
	}
	return nil
}

// unlockIndex releases the index.lock lockIndex took, if held.
func (c *checkout) unlockIndex() {
	if c.held != nil {
		c.held()
		c.held = nil
	}
}

// switchedError is a checkout a git command switched to another branch
// while baton was about to update it: an ErrRefMoved (retry).
type switchedError struct{ top, branch string }

func (e *switchedError) Error() string {
	return fmt.Sprintf("the checkout at %s no longer has %s checked out: a git command switched it to another branch meanwhile, and it was left as it is; retry", e.top, e.branch)
}

func (e *switchedError) Is(target error) bool { return target == ErrRefMoved }

// indexStamp identifies the checkout's index file as it is now (nil when
// there is none): git and baton replace the index by renaming a new file
// over it, so a changed index is another file.
func (c *checkout) indexStamp() os.FileInfo {
	fi, err := os.Stat(c.indexPath())
	if err != nil {
		return nil
	}
	return fi
}

// sameStamp says whether two index stamps are of the same file, unchanged.
func sameStamp(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// lockUnchanged takes the index's lock (lockIndex) for a merge from old
// to new that checked the checkout when its index was stamp, and checks
// again under the lock what may have changed since: the whole checkout
// when the index changed (a git command staged something meanwhile), else
// the files the merge writes (edited meanwhile), and the untracked files
// in its way. A checkout no longer clean is refused. On an error nothing
// is held.
func (c *checkout) lockUnchanged(stamp os.FileInfo, old, new string) error {
	if err := c.lockIndex(); err != nil {
		return err
	}
	var err error
	if sameStamp(stamp, c.indexStamp()) {
		err = c.mergedFilesClean(old, new)
	} else {
		err = clean(c)
	}
	if err == nil {
		err = c.untrackedInTheWay(old, new)
	}
	if err != nil {
		c.unlockIndex()
	}
	return err
}

// mergedFilesClean refuses a checkout in which a file the move from old
// to new writes or removes differs from its index entry (clean's test, on
// those files only).
func (c *checkout) mergedFilesClean(old, new string) error {
	changes, idx, err := c.changesAndIndex(old, new)
	if err != nil {
		return err
	}
	var dirty []string
	execBit := c.execBit()
	for _, ch := range changes {
		for _, name := range []string{ch.From.Name, ch.To.Name} {
			e, err := idx.Entry(name)
			if name == "" || err != nil || e.Mode == filemode.Submodule || e.SkipWorktree {
				continue
			}
			if changed, err := fileChanged(c.top, e, execBit); err != nil || changed {
				dirty = append(dirty, name)
			}
		}
	}
	if len(dirty) > 0 && !c.gitSaysClean() {
		return c.dirtyError(uniq(dirty))
	}
	return nil
}

// writeIndex replaces the checkout's index so that a process killed
// meanwhile leaves the old index or the new one, whole (go-git's own
// SetIndex rewrites the file in place): the new index is written and
// synced beside it, then renamed over it. The caller holds index.lock
// (lockIndex).
func (c *checkout) writeIndex(idx *index.Index) error {
	path := c.indexPath()
	old, _ := filepath.Glob(path + ".baton-*")
	for _, o := range old {
		os.Remove(o)
	}
	clearKilledLeftovers(filepath.Dir(path), false) // lock contents takeLock staged
	f, err := createTemp(filepath.Dir(path), "index.baton-")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	w := bufio.NewWriter(f)
	err = index.NewEncoder(w).Encode(idx)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// takeLock creates lock exclusively with baton's marker naming this
// process as its content (lockMarker), whole
// from its first moment (a hard link of a file already written in tmpDir),
// so that a kill never leaves a lock baton cannot recognise as its own.
func takeLock(lock, tmpDir string) error {
	return placeFile(tmpDir, lock, []byte(lockMarker()), false, os.Link)
}
