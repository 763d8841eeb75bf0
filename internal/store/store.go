// Package store owns the state directory on disk: where it is, the one lock
// every mutation takes, the redo journal that makes a change to several files
// all-or-nothing even when the process is killed, and atomic file
// replacement. It knows file names and bytes, not what the files mean.
//
// A transaction (Update) takes .baton/lock with a deadline, recovers any
// half-applied journal, lets the caller read and stage files, then commits:
// a changed file that baton's last transaction wrote is patched in place
// (the journal carries the changed bytes), any other is written to a
// synced temp file beside it; the journal is written atomically (the commit
// point), the patches applied and the temp files renamed over the
// originals, and the journal is set aside for the next one. Killed before
// the journal exists, the old state stands; killed after, the next command
// finishes the change.
package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
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
	parsed      *parsed           // files parsed by this process, by identity (cache.go)
	room        room              // read buffers made before the lock (room.go)
	LockTimeout time.Duration
	Holder      string // who we are, written beside the lock for others' messages
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
	// time they are needed: finding them reads the user database and
	// resolves links, which a read of the state never needs.
	ResolveAnchors func() (write, watch []string)
	anchorsOnce    sync.Once
	// KeepMapped leaves a file a reader mapped (MapFile), or a transaction
	// mapped as the base of a patch, mapped when it is released, for a
	// process that exits right after its call: the exit unmaps it anyway,
	// and an unmap of its own costs a TLB flush on every CPU the process's
	// threads ran on (a twentieth of a --field read; a write did it holding
	// the lock).
	KeepMapped bool
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
	return &Store{Dir: dir, paths: map[string]string{}, parsed: &parsed{}, LockTimeout: DefaultLockTimeout, Now: time.Now}
}

// SetPath makes the state file name live at path instead of in Dir.
func (s *Store) SetPath(name, path string) { s.paths[name] = path }

// key is how the audit log and the stamps name a tracked file: its name,
// or, when --file moved it, its path relative to the state directory (so
// that two different files are never recorded under one name).
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

// journal is the commit record: each staged temp file and its destination.
type journal struct {
	Files   []journalEntry `json:"files"`
	Patches []patchEntry   `json:"patches,omitempty"`
	Append  *appendEntry   `json:"append,omitempty"`
	Remove  []string       `json:"remove,omitempty"` // files the commit removes (a settled intent)
	// Blobs are the lengths of the patches' data, which follow the JSON
	// line in the file as they are (see journalfile.go), not in it
	Blobs []int64 `json:"blobs,omitempty"`
	// BlobSum is the sha256 of that data: a reader that read the file
	// while it was rewritten in place for another commit (see
	// pendingJournal) does not take one journal's line with another's data
	BlobSum string `json:"blob_sum,omitempty"`
}

type journalEntry struct {
	Tmp  string `json:"tmp"`
	Dst  string `json:"dst"`
	Hash string `json:"sha256,omitempty"` // of the staged content: tells a finished rename from a lost temp
}

// ReadFile returns the current bytes of a state file without taking the
// lock (a replacement is a rename, which makes the file whole, and an
// in-place patch is never applied while a reader holds the apply lock;
// a tool that does not take that lock can see a file mid-patch). A journal left by a killed writer is
// finished first. A missing file is (nil, nil).
func (s *Store) ReadFile(ctx context.Context, name string) ([]byte, error) {
	data, _, err := s.ReadFileInfo(ctx, name)
	return data, err
}

// ReadFileInfo is ReadFile with the FileInfo of the version read (nil
// when a committed journal's patch was read through).
func (s *Store) ReadFileInfo(ctx context.Context, name string) ([]byte, os.FileInfo, error) {
	if err := s.RecoverIfNeeded(ctx); err != nil {
		return nil, nil, err
	}
	data, fi, release, err := s.MapFile(name)
	defer release()
	if err != nil || data == nil {
		return nil, nil, err
	}
	return bytes.Clone(data), fi, nil
}

// locksRegular refuses lock files that are not regular files (a link, a
// FIFO planted in their place): exit 6.
func (s *Store) locksRegular() error {
	for _, p := range []string{s.lockPath(), filepath.Join(s.BatonDir(), applyLockName)} {
		if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
			return notRegularLock(p, fi)
		}
	}
	return nil
}

// Update runs fn as one transaction under the state lock and commits what it
// staged. If fn returns an error nothing is written.
func (s *Store) Update(ctx context.Context, fn func(tx *Tx) error) (err error) {
	if !s.Create {
		if err := s.MustExist(); err != nil {
			return err
		}
	}
	// before the lock, what the transaction would otherwise do holding it
	// although nothing another writer does changes it: where the anchors
	// are, which temp files were left (see staleTemps), the buffers the
	// drift check reads the files into (see room)
	s.anchorPaths()
	temps := s.staleTemps()
	s.makeRoom()
	defer s.dropRoom() // after the unlock
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if err := s.recoverTemps(temps); err != nil {
		return err
	}
	tx := &Tx{s: s, read: map[string][]byte{}, staged: map[string][][]byte{}, facts: map[string]json.RawMessage{}, hashed: map[string]hashed{}}
	defer tx.releaseBases()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer cutWhileMapped(&err, tx)
	err = fn(tx)
	if tx.adopt == nil {
		tx.adopt = map[string]bool{}
	}
	if err == nil {
		err = s.commit(tx)
	}
	var committed *CommittedError
	if err != nil && !errors.As(err, &committed) {
		return s.undoIntent(tx.intent, err)
	}
	if tx.event != nil && tx.event.Hash != "" {
		s.writeAnchor(tx.event)
	}
	s.renewStamps(tx, err == nil)
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

// MustExist is Exists as the NotFound error a command returns, before it
// creates anything.
func (s *Store) MustExist() error {
	if fi, err := os.Stat(s.Dir); err == nil && !fi.IsDir() {
		return errs.New(errs.Usage, "the state directory %s is a file, not a directory: point BATON_STATE_DIR (or --state-dir) at the directory holding progress.json", s.Dir)
	}
	if !s.Exists() {
		return errs.New(errs.NotFound, "no baton state here (%s has no .baton/ and no state files); run `baton init` to create it, or point BATON_STATE_DIR at the project's state directory", s.Dir)
	}
	return nil
}

func (s *Store) lock(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(s.BatonDir(), 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", s.BatonDir(), err)
	}
	// a FIFO here would block the open, and a link would be followed by
	// no open (noFollow): the apply lock is checked before the commit
	// point, which it must not stop a committed journal at
	if err := s.locksRegular(); err != nil {
		return nil, err
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
	read   map[string][]byte
	staged map[string][][]byte // new contents, in pieces
	facts  map[string]json.RawMessage
	after  []func() error
	event  *Event
	before []*Event // imported history, appended before event
	intent bool     // an intent was written: the commit removes it
	adopt  map[string]bool
	bases  map[string]*base // vouched files mapped instead of read
	// committed is set once the journal is durable (the commit point)
	committed bool
	hashed    map[string]hashed // the committed contents' hashes, sums and states
	// vouched are the files the drift check read as the last event
	// recorded them (vouch.go), driftHead that event's hash.
	vouched   map[string]vouched
	driftHead string
	// driftBases are the stamped files the drift check read and hashed as
	// stamped: the bytes the transaction uses for them (see hashNow).
	driftBases map[string]driftRead
	prevHead   string // the log's head before the commit's entries
	stampView  *stampView
}

// stampNames are the files whose stamps a commit renews: those written,
// and those the event hashed as they are (adopted, or new to the log).
func (tx *Tx) stampNames() []string {
	seen := map[string]bool{}
	var names []string
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for n := range tx.staged {
		add(n)
	}
	for n := range tx.adopt {
		add(n)
	}
	return names
}

// Store returns the transaction's store.
func (tx *Tx) Store() *Store { return tx.s }

// Read returns a state file's bytes as of this transaction (staged changes
// included); a missing file is nil.
func (tx *Tx) Read(name string) ([]byte, error) {
	if b, ok := tx.staged[name]; ok {
		return bytes.Join(b, nil), nil
	}
	if b, ok := tx.read[name]; ok {
		return b, nil
	}
	if r, ok := tx.driftBases[name]; ok {
		return r.data, nil
	}
	b, err := ReadRegular(tx.s.Path(name))
	if err != nil {
		return nil, err
	}
	tx.read[name] = b
	return b, nil
}

// Write stages data as the new content of a state file.
func (tx *Tx) Write(name string, data []byte) { tx.staged[name] = [][]byte{data} }

// WriteSegments stages the new content of a state file given in pieces
// (written in order, never joined in memory), with the facts a later
// command may trust instead of reading the file through (see stamps.go).
func (tx *Tx) WriteSegments(name string, data [][]byte, facts json.RawMessage) {
	tx.staged[name] = data
	tx.facts[name] = facts
}

// ReadTrusted is Read that also says whether the file is the one baton's
// last transaction wrote, with the facts recorded then. Staged content is
// trusted with its staged facts.
func (tx *Tx) ReadTrusted(name string) ([]byte, json.RawMessage, bool, error) {
	if b, ok := tx.staged[name]; ok {
		f, ok := tx.facts[name]
		return bytes.Join(b, nil), f, ok, nil
	}
	if b, ok := tx.read[name]; ok {
		return b, nil, false, nil // read by the drift check: its stamp did not match
	}
	data, st, err := tx.readBase(name)
	if err != nil {
		return nil, nil, false, err
	}
	tx.read[name] = data
	if st == nil {
		return data, nil, false, nil
	}
	return data, st.Facts, true, nil
}

// AfterCommit runs fn once the transaction's files are durable, still
// under the lock.
func (tx *Tx) AfterCommit(fn func() error) { tx.after = append(tx.after, fn) }

// BackupPath is where the version of a state file before the last change
// is kept, for a person recovering from a bad edit.
func (s *Store) BackupPath(name string) string {
	return filepath.Join(s.BatonDir(), "backup", filepath.Base(name))
}

func (s *Store) discardTemps(j journal) {
	for _, e := range j.Files {
		os.Remove(e.Tmp)
	}
}

// staleTemps lists the temp files a transaction that died before its
// commit point left in the state's directories. A writer lists them before
// it takes the lock and removes them once it holds it (after recovery has
// finished any committed journal, whose temps are then gone): a temp
// listed was left by a writer that held the lock then, and is stale once
// the lock is this writer's; one left after the listing is removed by the
// next transaction.
func (s *Store) staleTemps() []string {
	dirs := map[string]bool{s.Dir: true, s.BatonDir(): true}
	for _, p := range s.paths {
		dirs[filepath.Dir(p)] = true
	}
	journalTemp, validatedTemp := "."+filepath.Base(s.journalPath())+".", "."+validatedName+"."
	var out []string
	for d := range dirs {
		inBaton := d == s.BatonDir()
		out = append(out, matching(d, func(name string) bool {
			return strings.HasSuffix(name, tempSuffix) ||
				inBaton && (tempOf(name, journalTemp) || tempOf(name, validatedTemp))
		})...)
	}
	return out
}

// tempOf says whether name is prefix + something + ".tmp" (the names
// os.CreateTemp gives a pattern prefix + "*.tmp").
func tempOf(name, prefix string) bool {
	return len(name) > len(prefix)+len(".tmp") && strings.HasPrefix(name, prefix) && strings.HasSuffix(name, ".tmp")
}

// matching lists the dot files in dir whose names stale says are left
// over (one reading of the directory: it is the project's top, and every
// transaction lists it).
func matching(dir string, stale func(name string) bool) []string {
	f, err := OpenFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return nil
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, ".") && stale(n) {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out
}

// cutWhileMapped turns the fault of reading a mapped file that was cut
// outside baton while the transaction read it into an error: nothing was
// written when it came before the commit point; after it (keeping a
// backup from the mapped version) the change is committed, and the next
// command finishes the journal, so the caller must not retry.
// CutWhileRead, deferred by a read-only command that reads mapped state
// files with faults made panics (debug.SetPanicOnFault), turns the fault
// of a file cut outside baton meanwhile into an error in *err; any other
// panic goes on.
func CutWhileRead(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if _, ok := r.(interface{ Addr() uintptr }); !ok {
		panic(r)
	}
	*err = errs.New(errs.Invalid, "a state file was cut outside baton while this command read it: run 'baton verify', then retry")
}

func cutWhileMapped(err *error, tx *Tx) {
	r := recover()
	if r == nil {
		return
	}
	if _, ok := r.(interface{ Addr() uintptr }); !ok {
		panic(r)
	}
	if tx.committed {
		*err = &CommittedError{Err: errors.New("a state file was cut outside baton while this command finished its change")}
		return
	}
	*err = errs.New(errs.Invalid, "a state file was cut outside baton while this command read it: nothing was written; run 'baton verify', then retry")
}
