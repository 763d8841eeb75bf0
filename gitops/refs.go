package gitops

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// writeRef sets the loose ref refs/heads/name to commit so that a process
// killed at any moment leaves the old value or the new one: the new value
// is written and synced to a temp file beside the ref (named with a leading
// dot, which git never reads as a ref) and renamed over it. go-git's own
// reference writes truncate the file in place, and a kill there left the
// branch empty — gone. The ref must be at old ("" when it must not exist),
// read just before the rename (compare-and-swap), under git's lock of the
// ref (name.lock, held from the read to the rename, so a git process
// cannot move the ref in between; see lockRef).
// The change is logged in the branch's reflog, as git logs it (msg says
// why).
func (g *repo) writeRef(name, old, commit, msg string) error {
	refName := plumbing.NewBranchReferenceName(name)
	path := filepath.Join(g.loc.CommonDir, filepath.FromSlash(refName.String()))
	unlock, err := lockRef(name, path)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := g.Branch(name)
	switch {
	case old == "" && err == nil:
		return fmt.Errorf("branch %s already exists", name)
	case old == "" && errors.Is(err, ErrNoBranch):
	case err != nil:
		return err
	case cur != old:
		return fmt.Errorf("%w: %s is at %s, expected %s", ErrRefMoved, name, Short(cur), Short(old))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".baton-"+strconv.Itoa(os.Getpid()))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(commit + "\n")
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
		return fmt.Errorf("writing %s: %w", refName, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	g.logRef(name, old, commit, msg)
	return nil
}

// lockRef takes git's lock of a ref (path.lock, created exclusively with
// baton's content, as for the index), so that no git process updates the
// ref meanwhile; a lock a killed baton left is removed first (baton holds
// its state lock, so no other baton is writing the ref), one a git process
// holds refuses. It returns the release.
func lockRef(name, path string) (func(), error) {
	lock := path + ".lock"
	if b, err := os.ReadFile(lock); err == nil && string(b) == batonLock {
		_ = os.Remove(lock)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if err := takeLock(lock); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%w: %s is locked by a git process (%s exists); wait for it to finish and retry", ErrRefMoved, name, lock)
		}
		return nil, fmt.Errorf("locking %s: %w", name, err)
	}
	return func() { os.Remove(lock) }, nil
}

// logRef appends a ref change to the branch's reflog (logs/refs/heads/NAME)
// and to HEAD's in a checkout that has the branch checked out, as git does
// when core.logAllRefUpdates is not false: "old new Name <email> seconds
// +hhmm<TAB>message". A reflog is a convenience ('git reflog', main@{1}),
// so a failure to write it is not an error.
func (g *repo) logRef(name, old, commit, msg string) {
	if cfg, err := g.r.Storer.Config(); err == nil && cfg.Raw != nil && strings.EqualFold(cfg.Raw.Section("core").Option("logallrefupdates"), "false") {
		return
	}
	if old == "" {
		old = plumbing.ZeroHash.String()
	}
	who, email := Identity(g)
	var line bytes.Buffer
	fmt.Fprintf(&line, "%s %s ", old, commit)
	Signature{Name: who, Email: email, When: time.Now()}.encode(&line)
	fmt.Fprintf(&line, "\t%s\n", strings.ReplaceAll(msg, "\n", " "))
	logs := []string{filepath.Join(g.loc.CommonDir, "logs", "refs", "heads", filepath.FromSlash(name))}
	if c, err := g.checkoutOf(name); err == nil && c != nil {
		logs = append(logs, filepath.Join(c.gitDir, "logs", "HEAD"))
	}
	for _, p := range logs {
		if os.MkdirAll(filepath.Dir(p), 0o755) != nil {
			continue
		}
		if f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			_, _ = f.Write(line.Bytes())
			f.Close()
		}
	}
}

// removeStaleRefTemps removes the temp files of ref writes a killed baton
// left (harmless to git, which ignores them, but clutter).
func (g *repo) removeStaleRefTemps(name string) {
	dir := filepath.Dir(filepath.Join(g.loc.CommonDir, "refs", "heads", filepath.FromSlash(name)))
	stale, _ := filepath.Glob(filepath.Join(dir, ".*.baton-*"))
	for _, s := range stale {
		if err := os.Remove(s); err != nil && !errors.Is(err, fs.ErrNotExist) {
			continue
		}
	}
}
