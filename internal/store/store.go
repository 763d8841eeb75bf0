// Package store owns the state directory on disk: where it is, the one lock
// every mutation takes, the redo journal that makes a change to several files
// all-or-nothing even when the process is killed, atomic file replacement,
// the hash-chained audit log and its anchors. It knows file names and bytes,
// not what the files mean.
//
// A transaction (Update) takes .baton/lock with a deadline, recovers what a
// killed writer left, lets the caller read and stage files, then commits:
// each changed file is written to a synced temp file beside it, the journal
// naming them and the audit entry is written and renamed into place (the
// commit point), the temp files are renamed over the originals, the entry
// is appended to the log, and the journal is removed. Killed before the
// journal exists, the old state stands; killed after, the next command
// finishes the change. Readers take no lock: they read the files whole,
// through a committed journal's staged files when there is one.
package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/baton-cli/baton/internal/errs"
)

// DefaultLockTimeout is how long a mutation waits for the state lock.
const DefaultLockTimeout = 10 * time.Second

// Store is a state directory.
type Store struct {
	Dir         string
	paths       map[string]string // file name -> path, when --file moved one
	LockTimeout time.Duration
	Holder      string // who we are, written into the lock file for others' messages
	Now         func() time.Time
	// Tracked names the state files whose hashes each audit event records
	// (a name ending in "/" is a directory; "git:..." a ref, see Probe).
	Tracked []string
	// AnchorPath is where the log's head is anchored outside the project
	// ("" for none; see anchor.go).
	AnchorPath string
	// MoreAnchors are further anchors outside the project, written and
	// checked like AnchorPath (the same head under other names a call may
	// give the person's state directory or the project).
	MoreAnchors []string
	// WatchAnchors are checked where they exist, and kept current then,
	// but never created.
	WatchAnchors []string
	// ResolveAnchors, when set, gives the anchors outside the project
	// (write: AnchorPath then MoreAnchors; watch: WatchAnchors) the first
	// time they are needed.
	ResolveAnchors func() (write, watch []string)
	anchorsOnce    sync.Once
	// AllowLogGap lets a transaction chain entries to a log an anchor is
	// ahead of (a person recording the loss; see LogGap). Otherwise such a
	// write is refused, since it would overwrite the anchor.
	AllowLogGap bool
	// Probe reads the commit a tracked ref points at ("" for none,
	// Unknown when it cannot be read from here).
	Probe func(name string) (string, error)
	// Create lets a transaction create the state where none exists yet
	// (the init commands); any other is refused there, leaving nothing
	// behind: no .baton/, no lock file.
	Create bool
	// Undo puts back the outside change (git) an uncommitted intent
	// describes, compare-and-swap; the command layer provides it.
	Undo func(intent []byte) error
}

// New returns the store for dir.
func New(dir string) *Store {
	return &Store{Dir: dir, paths: map[string]string{}, LockTimeout: DefaultLockTimeout, Now: time.Now}
}

// SetPath makes the state file name live at path instead of in Dir.
func (s *Store) SetPath(name, path string) { s.paths[name] = path }

// key is how the audit log names a tracked file: its name, or, when --file
// moved it, its path relative to the state directory (so that two
// different files are never recorded under one name).
func (s *Store) key(name string) string {
	p, ok := s.paths[name]
	if !ok {
		return name
	}
	if rel, err := filepath.Rel(s.Dir, p); err == nil {
		return filepath.ToSlash(rel)
	}
	return p
}

// Path returns where the state file name lives.
func (s *Store) Path(name string) string {
	if p, ok := s.paths[name]; ok {
		return p
	}
	return filepath.Join(s.Dir, name)
}

// BatonDir is the directory holding the lock, journal, log and config.
func (s *Store) BatonDir() string { return filepath.Join(s.Dir, ".baton") }

func (s *Store) lockPath() string    { return filepath.Join(s.BatonDir(), "lock") }
func (s *Store) journalPath() string { return filepath.Join(s.BatonDir(), "journal") }

// tempSuffix marks the staged copies a transaction writes beside each file.
const tempSuffix = ".baton-tx"

// Update runs fn as one transaction under the state lock and commits what it
// staged. If fn returns an error nothing is written.
func (s *Store) Update(ctx context.Context, fn func(tx *Tx) error) (err error) {
	if !s.Create {
		if err := s.MustExist(); err != nil {
			return err
		}
	}
	fresh := !s.hasState()
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if err := s.recover(); err != nil {
		return err
	}
	tx := &Tx{s: s, read: map[string][]byte{}, staged: map[string][]byte{}, adopt: map[string]bool{}, fresh: fresh}
	defer tx.wipeKeys()
	err = fn(tx)
	if err == nil {
		err = s.commit(tx)
	}
	var committed *CommittedError
	if err != nil && !errors.As(err, &committed) {
		return s.undoIntent(tx.intent, err)
	}
	if tx.event != nil && tx.event.Hash != "" {
		s.writeAnchors(tx.event, tx.base)
	}
	for _, hook := range tx.after {
		if herr := hook(); herr != nil && committed == nil {
			committed = &CommittedError{Err: herr}
		}
	}
	if committed != nil {
		return committed
	}
	return nil
}

// Exists reports whether baton state lives in the directory: its .baton/
// directory or one of the tracked state files.
func (s *Store) Exists() bool {
	if fi, err := os.Stat(s.BatonDir()); err == nil && fi.IsDir() {
		return true
	}
	for _, n := range s.Tracked {
		if _, err := os.Lstat(s.Path(n)); err == nil {
			return true
		}
	}
	return false
}

// hasState says whether anything of a state is here besides an empty
// .baton/: a tracked file, the audit log or its anchor in .baton/.
func (s *Store) hasState() bool {
	for _, n := range s.Tracked {
		if !IsRef(n) && exists(s.Path(n)) {
			return true
		}
	}
	return exists(s.EventsPath()) || exists(filepath.Join(s.BatonDir(), HeadName))
}

// MustExist is Exists as the NotFound error a command returns, before it
// creates anything.
func (s *Store) MustExist() error {
	if fi, err := os.Stat(s.Dir); err == nil && !fi.IsDir() {
		return errs.New(errs.Usage, "the state directory %s is a file, not a directory: the state directory is the one holding progress.json", s.Dir)
	}
	if !s.Exists() {
		return errs.New(errs.NotFound, "no baton state here (%s has no state files); run `baton init` to create it, or run baton in the project", s.Dir)
	}
	return nil
}

func (s *Store) lock(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(s.BatonDir(), 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", s.BatonDir(), err)
	}
	// a FIFO here would block the open, and a link would be followed by
	// no open (noFollow)
	if fi, err := os.Lstat(s.lockPath()); err == nil && !fi.Mode().IsRegular() {
		return nil, notRegularLock(s.lockPath(), fi)
	}
	timeout := s.LockTimeout
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	release, ok, err := lockWaitAs(lctx, s.lockPath(), s.holderInfo)
	if !ok {
		if ctx.Err() != nil {
			return nil, errs.New(errs.Interrupted, "interrupted while waiting for the state lock %s", s.lockPath())
		}
		who := holderOf(s.lockPath())
		if who == "" {
			who = "another process"
		}
		if err != nil {
			return nil, fmt.Errorf("locking %s: %w", s.lockPath(), err)
		}
		return nil, errs.New(errs.Conflict, "timed out after %s waiting for the state lock %s, held by %s; retry, or raise BATON_LOCK_TIMEOUT", timeout, s.lockPath(), who)
	}
	return release, nil
}

// holderInfo names this process as the lock's holder, from now ("" when
// the store has no Holder).
func (s *Store) holderInfo() string {
	if s.Holder == "" {
		return ""
	}
	return fmt.Sprintf("pid %d (%s) since %s", os.Getpid(), s.Holder, s.Now().UTC().Format(time.RFC3339))
}

// Tx is an open transaction: files read inside the lock and changes staged
// for commit.
type Tx struct {
	s      *Store
	read   map[string][]byte // the files as the transaction read them (by the drift check first)
	staged map[string][]byte
	after  []func() error
	event  *Event
	before []*Event // imported history, appended before event
	intent bool     // an intent was written: the commit removes it
	adopt  map[string]bool
	// asIs are the tracked files the commit's event records as they are
	// (adopted, or new to the log), with the content it hashed
	asIs map[string][]byte
	// fresh says no state existed here before the transaction (an init
	// where there was nothing: an earlier project there was deleted whole)
	fresh bool
	// base is the log's head before the transaction's entries (see
	// Anchor.Base); notes are the anchors its commit rewrites though they
	// do not hold that head, which its own entry records
	base  AnchorBase
	notes []AnchorNote
}

// Store returns the transaction's store.
func (tx *Tx) Store() *Store { return tx.s }

// Read returns a state file's bytes as of this transaction (staged changes
// included); a missing file is nil.
func (tx *Tx) Read(name string) ([]byte, error) {
	if b, ok := tx.staged[name]; ok {
		return b, nil
	}
	if b, ok := tx.read[name]; ok {
		return b, nil
	}
	b, err := ReadRegular(tx.s.Path(name))
	if err != nil {
		return nil, err
	}
	tx.read[name] = b
	return b, nil
}

// Write stages data as the new content of a state file.
func (tx *Tx) Write(name string, data []byte) { tx.staged[name] = data }

// AfterCommit runs fn once the transaction's files are durable, still
// under the lock.
func (tx *Tx) AfterCommit(fn func() error) { tx.after = append(tx.after, fn) }

// staleTemps lists the temp files a transaction that died before its
// commit point left in the state's directories (called under the lock,
// after recovery has finished any committed journal, whose temps are then
// gone).
func (s *Store) staleTemps() []string {
	dirs := map[string]bool{s.Dir: true, s.BatonDir(): true, s.recordedDir(): true}
	for _, p := range s.paths {
		dirs[filepath.Dir(p)] = true
	}
	journalTemp := "." + filepath.Base(s.journalPath()) + "."
	var out []string
	for d := range dirs {
		inBaton := d == s.BatonDir()
		out = append(out, matching(d, func(name string) bool {
			return strings.HasSuffix(name, tempSuffix) || inBaton && tempOf(name, journalTemp)
		})...)
	}
	return out
}

// tempOf says whether name is prefix + something + ".tmp" (the names
// os.CreateTemp gives a pattern prefix + "*.tmp").
func tempOf(name, prefix string) bool {
	return len(name) > len(prefix)+len(".tmp") && strings.HasPrefix(name, prefix) && strings.HasSuffix(name, ".tmp")
}

// matching lists the dot files in dir whose names stale says are left over.
func matching(dir string, stale func(name string) bool) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, ".") && stale(n) {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out
}
