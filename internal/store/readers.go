package store

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/baton-cli/baton/internal/errs"
)

// Readers never wait. A read-only command takes no lock: it reads the files
// as they are — a file replaced whole is renamed into place, and one baton
// patches in place is read under the apply lock (MapFile), which no patch
// is applied while a reader holds, so each file baton reads is whole (an
// outside tool such as cat or jq, which takes no lock, can see a file
// mid-patch) — and ReadConsistent repeats its reading until no transaction committed in the
// middle of it. A journal left by a killed writer is finished by the first
// command that can take the lock at once; a reader that cannot (a writer
// holds it, or the user may not write the state directory) reads through
// the journal instead (ReadPath), which is the committed state.

// RecoverIfNeeded finishes what a killed or failed writer left (a journal,
// an intent) if the lock can be taken at once; otherwise it does nothing,
// and reads go through the journal. Without anything left it costs two
// stats.
func (s *Store) RecoverIfNeeded(ctx context.Context) error {
	if !s.pending() {
		return nil
	}
	if err := s.locksRegular(); err != nil {
		return err // a link here would be followed by flock's open
	}
	fl := flock.New(s.lockPath())
	ok, err := fl.TryLock()
	if err != nil || !ok {
		return nil // a writer holds it (and finishes the journal), or read-only
	}
	defer fl.Unlock()
	return s.recover()
}

// ReadPath is where the current content of the state file name is read
// from: the file itself, or, while a committed journal is still being
// applied, the staged file the journal will rename over it.
func (s *Store) ReadPath(name string) string {
	path := s.Path(name)
	j := s.pendingJournal()
	if j == nil {
		return path
	}
	dst, err := target(path)
	if err != nil {
		return path
	}
	for _, e := range j.Files {
		if e.Dst == dst && exists(e.Tmp) {
			return e.Tmp
		}
	}
	return path
}

// pendingJournal is the journal a writer is applying or left (nil: none).
func (s *Store) pendingJournal() *journal {
	f, fi, err := OpenRegular(s.journalPath())
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := readAll(f, fi.Size())
	if err != nil {
		return nil
	}
	// a journal is retired once applied and its file later rewritten in
	// place for another commit: bytes read while that happened are not
	// the committed journal's (whose changes the files hold by then)
	afterJournalRead(s.journalPath())
	if after, err := f.Stat(); err != nil || identity(after) != identity(fi) {
		return nil
	}
	// and that it is still the journal: identity times may be too coarse
	// to tell a file retired, rewritten and not yet committed again
	if now, err := os.Lstat(s.journalPath()); err != nil || !os.SameFile(now, fi) {
		return nil
	}
	j, err := decodeJournal(data)
	if err != nil {
		return nil
	}
	return &j
}

// afterJournalRead runs between a reader's read of the journal and its
// check that the file held still (a test rewrites it there).
var afterJournalRead = func(string) {}

// journalPatch is the patch a committed journal makes to the file at path
// (nil: none).
func (s *Store) journalPatch(path string) *patchEntry {
	j := s.pendingJournal()
	if j == nil || len(j.Patches) == 0 {
		return nil
	}
	dst, err := target(path)
	if err != nil {
		return nil
	}
	for i := range j.Patches {
		if j.Patches[i].Dst == dst {
			return &j.Patches[i]
		}
	}
	return nil
}

// overlay is data with a patch applied: the committed content of a file
// whose patch may be applied, half-applied or not yet.
func overlay(data []byte, p *patchEntry) []byte {
	out := make([]byte, p.Size)
	copy(out, data)
	copy(out[p.Off:], p.Data)
	return out
}

// MapFile maps the current content of the state file name for a lock-free
// read, holding the apply lock shared until release, so that no in-place
// patch is applied while the bytes are read. A patch a committed journal
// makes to the file is read through (then fi is nil: no stamp vouches for
// that content). A missing file is (nil, nil, release, nil).
func (s *Store) MapFile(name string) ([]byte, os.FileInfo, func(), error) {
	for i := 0; ; i++ {
		path := s.ReadPath(name)
		data, fi, release, err := s.mapAt(path)
		// the staged file ReadPath chose was renamed over the file since:
		// the file holds that content now
		if err == nil && data == nil && path != s.Path(name) && i < 10 {
			release()
			continue
		}
		return data, fi, release, err
	}
}

// mapAt maps the file at path (the state file or the staged file a
// committed journal renames over it) under the apply lock.
func (s *Store) mapAt(path string) ([]byte, os.FileInfo, func(), error) {
	unlock, locked := s.readLock()
	if p := s.journalPatch(path); p != nil {
		data, err := ReadRegular(path)
		if err != nil || data == nil {
			return nil, nil, unlock, err
		}
		return overlay(data, p), nil, unlock, nil
	}
	if !locked {
		data, fi, err := readSteady(path)
		return data, fi, unlock, err
	}
	data, fi, release, err := Map(path)
	if err != nil {
		unlock()
		return nil, nil, func() {}, err
	}
	if s.KeepMapped {
		return data, fi, unlock, nil
	}
	return data, fi, func() { release(); unlock() }, nil
}

// readSteady reads a file whole without the apply lock: again until its
// identity is the same before and after the read (no patch in between).
// Under a constant stream of patches it waits a little longer between
// attempts, and after steadyFor it refuses (exit 5) rather than return
// bytes that may be torn.
func readSteady(path string) ([]byte, os.FileInfo, error) {
	deadline := time.Now().Add(steadyFor)
	for i := 0; ; i++ {
		before, err := steadyStat(path)
		if err != nil {
			if os.IsNotExist(err) {
				return nil, nil, nil
			}
			return nil, nil, err
		}
		data, err := ReadRegular(path)
		if err != nil || data == nil {
			return data, nil, err
		}
		after, err := steadyStat(path)
		if err == nil && identity(after) == identity(before) {
			return data, after, nil
		}
		if time.Now().After(deadline) {
			return nil, nil, errs.New(errs.Conflict, "%s changed during every read for %s (writers kept patching it, and its apply lock could not be taken to wait for them); retry", path, steadyFor)
		}
		if i >= 10 {
			time.Sleep(time.Duration(min(i, 50)) * 100 * time.Microsecond)
		}
	}
}

// steadyFor is how long readSteady tries for a copy no patch tore, and
// steadyStat how it sees the file's identity (a test patches between).
var (
	steadyFor  = 5 * time.Second
	steadyStat = os.Stat
)

// ReadConsistent runs fn, which reads the state, until no transaction
// committed while it ran (the files and the audit log were seen at one
// moment), without taking the lock. It gives up repeating after many
// attempts under a constant stream of writers and returns the last result.
func (s *Store) ReadConsistent(ctx context.Context, fn func() error) error {
	if err := s.RecoverIfNeeded(ctx); err != nil {
		return err
	}
	var err error
	for i := 0; i < 200; i++ {
		before := s.generation()
		err = fn()
		if ctx.Err() != nil {
			return err
		}
		if s.generation() == before {
			if !s.applying() {
				return err
			}
			// a writer is between its commit point and its log entry: the
			// files may be ahead of the log for a moment; read again once
			// it is done (or after a while, through the journal)
			for w := 0; w < 1000 && s.applying() && ctx.Err() == nil; w++ {
				time.Sleep(time.Millisecond)
			}
		}
	}
	return err
}

// applying says whether a writer is applying a committed journal now (the
// journal exists and the lock is held). A journal left by a killed writer
// on a state this process cannot recover is read through instead.
func (s *Store) applying() bool {
	if !exists(s.journalPath()) || s.locksRegular() != nil {
		return false
	}
	fl := flock.New(s.lockPath())
	ok, err := fl.TryRLock()
	if err != nil {
		return false
	}
	if ok {
		_ = fl.Unlock()
		return false // nobody holds it: the journal is a crashed writer's
	}
	return true
}

// generation identifies the state as it is on disk: each tracked file's
// and the log's identity (a rename gives a new inode), and the journal's.
func (s *Store) generation() string {
	var b strings.Builder
	paths := []string{s.EventsPath(), s.journalPath()}
	for _, n := range s.Tracked {
		paths = append(paths, s.Path(strings.TrimSuffix(n, "/")))
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			b.WriteString(identity(fi))
		}
		b.WriteByte('|')
	}
	return b.String()
}
