package store

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"

	"github.com/gofrs/flock"
)

// Readers never wait. A read-only command takes no lock: it reads the files
// whole as they are (a file is only ever replaced by rename, so each one it
// reads is whole), and ReadConsistent repeats its reading when a transaction
// committed in the middle of it. A writer stopped at any point leaves
// nothing to wait for: before its commit point the files and the log are
// the last committed state; after it, the journal names the staged files
// and the audit entry, which a reader reads through (ReadPath,
// committedHead). A journal left by a killed writer is finished by the
// first command that can take the lock at once.

// RecoverIfNeeded finishes what a killed or failed writer left (a journal,
// an intent) if the lock can be taken at once; otherwise it does nothing,
// and reads go through the journal.
func (s *Store) RecoverIfNeeded(ctx context.Context) error {
	if !s.pending() {
		return nil
	}
	if fi, err := os.Lstat(s.lockPath()); err == nil && !fi.Mode().IsRegular() {
		return notRegularLock(s.lockPath(), fi) // a link here would be followed by flock's open
	}
	fl := flock.New(s.lockPath())
	ok, err := fl.TryLock()
	if err != nil || !ok {
		return nil // a writer holds it (and finishes the journal), or read-only
	}
	defer fl.Unlock()
	return s.recover()
}

// ReadFile returns the committed content of a state file without taking
// the lock: the file, or the staged file a committed journal renames over
// it. A missing file is (nil, nil).
func (s *Store) ReadFile(ctx context.Context, name string) ([]byte, error) {
	if err := s.RecoverIfNeeded(ctx); err != nil {
		return nil, err
	}
	return s.readCommitted(name)
}

// readCommitted reads the committed content of the state file name.
func (s *Store) readCommitted(name string) ([]byte, error) {
	path := s.ReadPath(name)
	data, err := ReadRegular(path)
	if err == nil && data == nil && path != s.Path(name) {
		// the staged file was renamed over the file meanwhile
		return ReadRegular(s.Path(name))
	}
	return data, err
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

// pendingJournal is the committed journal a writer is applying or left
// (nil: none, or one that cannot be read).
func (s *Store) pendingJournal() *journal {
	j, err := s.readJournal()
	if err != nil {
		return nil
	}
	return j
}

// committedHead is the last committed entry of the log, for a reader: the
// last one a pending journal appends, else the log's last (nil for none).
func (s *Store) committedHead() (*Event, error) {
	if j := s.pendingJournal(); j != nil && j.Append != nil {
		lines := bytes.Split(bytes.TrimRight(j.Append.Data, "\n"), []byte("\n"))
		var e Event
		if err := json.Unmarshal(lines[len(lines)-1], &e); err == nil {
			return &e, nil
		}
	}
	last, _, err := s.lastEvent()
	return last, err
}

// ReadConsistent runs fn, which reads the state, until no transaction
// committed while it ran (the files and the audit log were seen at one
// moment), without taking the lock. A writer that is stopped changes
// nothing, so fn runs once; under a constant stream of committing writers
// it gives up repeating after a while and returns the last result.
func (s *Store) ReadConsistent(ctx context.Context, fn func() error) error {
	if err := s.RecoverIfNeeded(ctx); err != nil {
		return err
	}
	var err error
	for i := 0; i < 100; i++ {
		before := s.generation()
		err = fn()
		if ctx.Err() != nil || s.generation() == before {
			return err
		}
	}
	return err
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
