package gitops

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// writeRef sets the loose ref named ref (refs/..., a branch or any other)
// to commit so that a process
// killed at any moment leaves the old value or the new one: the new value
// is written and synced to a temp file outside refs/ (staging.go) and
// renamed over it. go-git's own reference writes truncate the file in
// place, and a kill there left the branch empty — gone. The ref must be at
// old ("" when it must not exist), read just before the rename
// (compare-and-swap), under git's lock of the ref (name.lock, held from
// the read to the rename, so a git process cannot move the ref in between;
// see lockRef). The change is logged in the ref's reflog, as git logs
// it (msg says why).
func (g *repo) writeRef(ref, old, commit, msg string) error {
	name := strings.TrimPrefix(ref, "refs/heads/")
	path := filepath.Join(g.loc.CommonDir, filepath.FromSlash(ref))
	unlock, err := g.lockRef(name, path)
	if err != nil {
		return err
	}
	defer unlock()
	cur, found, err := g.readRef(ref, 0)
	switch {
	case err != nil:
		return err
	case old == "" && found:
		return fmt.Errorf("%s already exists", refWhat(ref))
	case old == "":
		removeEmptyDirs(path)
	case !found && strings.HasPrefix(ref, "refs/heads/"):
		return fmt.Errorf("%w: %s", ErrNoBranch, name)
	case cur != old:
		return fmt.Errorf("%w: %s is at %s, expected %s", ErrRefMoved, name, Short(cur), Short(old))
	}
	if err := placeFile(g.loc.CommonDir, path, []byte(commit+"\n"), true, os.Rename); err != nil {
		return fmt.Errorf("writing %s: %w", ref, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	afterStep("ref written")
	g.logRef(ref, old, commit, msg)
	return nil
}

// refWhat names a ref in a message: "branch NAME" for a branch.
func refWhat(ref string) string {
	if name, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		return "branch " + name
	}
	return ref
}

// removeEmptyDirs removes the directory tree at path if it holds nothing
// but empty directories — what a branch deletion killed before it removed
// them leaves — so that a branch of that name can be made, as git does.
// A file anywhere in it keeps it.
func removeEmptyDirs(path string) {
	ents, err := os.ReadDir(path)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.IsDir() {
			removeEmptyDirs(filepath.Join(path, e.Name()))
		}
	}
	_ = os.Remove(path) // fails unless empty
}

// ErrRefLocked means git's lock of a ref (or of packed-refs) exists and
// is not one a killed baton left: a git process may hold it. Nothing was
// changed. Such an error is also an ErrRefMoved, which callers treat
// alike: retry later.
var ErrRefLocked = errors.New("locked by a git process")

// lockedError is a lock someone else holds: ErrRefLocked and ErrRefMoved.
type lockedError struct{ what, lock string }

func (e *lockedError) Error() string {
	return fmt.Sprintf("%s is locked by a git process (%s exists); wait for running git commands to finish and retry — if none is running, the lock was left by one that was killed, and a person must remove it", e.what, e.lock)
}

func (e *lockedError) Is(target error) bool { return target == ErrRefLocked || target == ErrRefMoved }

// lockRef takes git's lock of a ref (lockFile), so that no git process
// updates the ref meanwhile. It returns the release.
func (g *repo) lockRef(name, path string) (func(), error) {
	unlock, err := g.lockFile(path)
	if errors.Is(err, fs.ErrExist) {
		return nil, &lockedError{what: name, lock: path + ".lock"}
	}
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", name, err)
	}
	return unlock, nil
}

// lockFile takes git's lock of the file at path (path.lock, created
// exclusively and whole, with baton's marker as its content: takeLock);
// a lock git or another process holds is fs.ErrExist. It returns the
// release.
//
// Which locks are safe to remove: one holding baton's marker whose holder
// (the process it names, holder.go) no longer runs was left by a killed
// baton — no git writes that content, and a live baton's, this process's
// included, is kept. Any other lock,
// empty included, may be a live git's: git creates its lock empty and
// writes the new value after, and keeps it empty while it deletes the ref
// (for as long as 'git update-ref --stdin' waits between prepare and
// commit). baton never makes an empty lock (its locks are whole from their
// first moment), so such a lock is refused, never removed.
func (g *repo) lockFile(path string) (func(), error) {
	return lockAt(path, g.loc.CommonDir)
}

// lockAt is lockFile with its content staged in tmpDir.
func lockAt(path, tmpDir string) (func(), error) {
	lock := path + ".lock"
	if killedLock(lock) {
		_ = os.Remove(lock)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if err := takeLock(lock, tmpDir); err != nil {
		return nil, err
	}
	afterStep("locked")
	return func() { os.Remove(lock) }, nil
}

// logRef appends a ref change to the ref's reflog (logs/refs/...) and,
// for a branch, to HEAD's in a checkout that has it checked out, as git
// does when core.logAllRefUpdates is not false. A reflog is a convenience
// ('git reflog', main@{1}), so a failure to write it is not an error.
func (g *repo) logRef(ref, old, commit, msg string) {
	logs := []string{filepath.Join(g.loc.CommonDir, "logs", filepath.FromSlash(ref))}
	if name, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		if c, err := g.checkoutOf(name); err == nil && c != nil {
			logs = append(logs, filepath.Join(c.gitDir, "logs", "HEAD"))
		}
	}
	g.appendReflog(logs, old, commit, msg)
}

// appendReflog appends "old new Name <email> seconds +hhmm<TAB>message" to
// each of the reflogs at paths, unless core.logAllRefUpdates is false.
func (g *repo) appendReflog(paths []string, old, commit, msg string) {
	if cfg, err := g.r.Storer.Config(); err == nil && cfg.Raw != nil && strings.EqualFold(cfg.Raw.Section("core").Option("logallrefupdates"), "false") {
		return
	}
	if old == "" {
		old = plumbing.ZeroHash.String()
	}
	who, email := Identity(g)
	var line bytes.Buffer
	fmt.Fprintf(&line, "%s %s ", old, commit)
	sig := gitSignature(Signature{Name: who, Email: email, When: time.Now()})
	_ = sig.Encode(&line)
	fmt.Fprintf(&line, "\t%s\n", strings.ReplaceAll(msg, "\n", " "))
	for _, p := range paths {
		if os.MkdirAll(filepath.Dir(p), 0o755) == nil {
			appendLine(p, line.Bytes())
		}
	}
}

// appendLine appends line to the log at path, on a line of its own when
// the file ends inside one (an append cut short by a full disk or a
// crash): the torn line stays alone, which git passes over, and this one
// reads whole instead of running on from it.
func appendLine(path string, line []byte) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	last := []byte{'\n'}
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		_, _ = f.ReadAt(last, fi.Size()-1)
	}
	if last[0] != '\n' {
		line = append([]byte{'\n'}, line...)
	}
	_, _ = f.Write(line)
}

// clearKilledWrites removes what killed ref writes left (temp files,
// locks holding baton's marker) in the common directory, all of refs/heads
// and each worktree's git directory: harmless to baton's readers, which skip them, but a lock
// left there keeps git from updating its ref or packed-refs. It runs
// before a write takes any lock of its own.
func (g *repo) clearKilledWrites() {
	clearKilledLeftovers(g.loc.CommonDir, false)
	clearKilledLeftovers(filepath.Join(g.loc.CommonDir, "refs", "heads"), true)
	for _, head := range worktreeHeads(g) { // a worktree's HEAD.lock (Detach)
		if dir := filepath.Dir(head); dir != g.loc.CommonDir {
			clearKilledLeftovers(dir, false)
		}
	}
}
