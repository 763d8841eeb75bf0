package gitops

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// ErrIndexLocked means another git process holds a checkout's index lock
// (index.lock exists): baton does not write the index under it.
var ErrIndexLocked = errors.New("the index is locked by another git process")

// indexPath is the checkout's index file.
func (c *checkout) indexPath() string { return filepath.Join(c.gitDir, "index") }

// batonLock is what baton writes into the index.lock (or a ref's lock) it holds: a lock
// with this content found by a baton command (which holds baton's state
// lock, so no other baton command is writing the index) was left by a
// baton process that was killed, and is removed.
const batonLock = "baton: writing the index\n"

// checkUnlocked refuses a checkout whose index another git process holds,
// before anything changes; a lock a killed baton left is removed.
func (c *checkout) checkUnlocked() error {
	lock := c.indexPath() + ".lock"
	b, err := os.ReadFile(lock)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err == nil && string(b) == batonLock:
		return os.Remove(lock)
	}
	return fmt.Errorf("%w: %s exists. Wait for the git command working in %s to finish and retry; if none is running, the file was left by one that crashed — remove it", ErrIndexLocked, lock, c.top)
}

// writeIndex replaces the checkout's index so that a process killed
// meanwhile leaves the old index or the new one, whole (go-git's own
// SetIndex rewrites the file in place): the new index is written and
// synced beside it, then, holding index.lock as git does, renamed over it.
func (c *checkout) writeIndex(idx *index.Index) error {
	path := c.indexPath()
	if err := c.checkUnlocked(); err != nil {
		return err
	}
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
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	lock := path + ".lock"
	if err := takeLock(lock, filepath.Dir(path)); err != nil {
		os.Remove(tmp)
		if errors.Is(err, fs.ErrExist) {
			return c.checkUnlocked()
		}
		return fmt.Errorf("locking %s: %w", path, err)
	}
	err = os.Rename(tmp, path)
	os.Remove(lock)
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// takeLock creates lock exclusively with batonLock as its content, whole
// from its first moment (a hard link of a file already written in tmpDir),
// so that a kill never leaves a lock baton cannot recognise as its own.
func takeLock(lock, tmpDir string) error {
	return placeFile(tmpDir, lock, []byte(batonLock), false, os.Link)
}
