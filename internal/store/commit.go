package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/baton-cli/baton/internal/errs"
)

// The commit path and its one promise: before the commit point nothing has
// changed, after it the change is made, whatever fails. The commit point is
// the journal becoming durable (written, renamed into place, its directory
// synced). A failure before it removes what was written, the journal first,
// so that no journal ever names temp files that are gone; a failure after
// it (a rename, the audit-log append, a sync, the journal's removal, an
// after-commit step) is a *CommittedError: the command reports success with
// a warning, and the next command finishes the journal. A journal found
// whose temp files are gone and whose destinations do not hold the staged
// content never reached its commit point and is discarded without a trace
// (its audit entry is not appended).

// CommittedError is a failure after a transaction's commit point: the
// change is durable and is finished by the next command; a caller must not
// retry it.
type CommittedError struct{ Err error }

func (e *CommittedError) Error() string {
	return fmt.Sprintf("the change is committed, but finishing it failed (%v); the next baton command completes it", e.Err)
}

func (e *CommittedError) Unwrap() error { return e.Err }

// faultHook, when set, is called at each step of the commit path; an error
// it returns is that step's failure. Only tests set it (SetFaultHook).
var faultHook func(step string) error

// Commit-path steps, in order, as the fault hook sees them.
const (
	StepEvent         = "event"          // preparing the audit entry
	StepTemp          = "temp"           // staging a file beside its destination
	StepSyncTemps     = "sync-temps"     // syncing the staged files' directories
	StepJournal       = "journal"        // writing the journal's temp file
	StepJournalRename = "journal-rename" // renaming it into place
	StepJournalSync   = "journal-sync"   // syncing .baton/: the commit point
	StepBackup        = "backup"         // keeping the replaced versions
	StepRename        = "rename"         // renaming the staged files
	StepAppend        = "append"         // appending the audit entry
	StepApplySync     = "apply-sync"     // syncing the renamed files' directories
	StepJournalRemove = "journal-remove" // removing the journal
	StepAnchor        = "anchor"         // recording the log's head in the anchors
)

// CommitSteps lists the steps in order (for tests that fail each in turn).
var CommitSteps = []string{StepEvent, StepTemp, StepSyncTemps, StepJournal, StepJournalRename, StepJournalSync,
	StepBackup, StepRename, StepAppend, StepApplySync, StepJournalRemove, StepAnchor}

// SetFaultHook installs fn to be called at every commit step (nil removes
// it). For tests only: it makes baton fail where a disk or a kill would.
func SetFaultHook(fn func(step string) error) { faultHook = fn }

func fault(step string) error {
	if faultHook == nil {
		return nil
	}
	return faultHook(step)
}

// journal is the commit record: each staged temp file and its destination,
// the audit entry to append, and the files the commit removes.
type journal struct {
	Files  []journalEntry `json:"files"`
	Append *appendEntry   `json:"append,omitempty"`
	Remove []string       `json:"remove,omitempty"` // files the commit removes (a settled intent)
}

type journalEntry struct {
	Tmp  string `json:"tmp"`
	Dst  string `json:"dst"`
	Hash string `json:"sha256,omitempty"` // of the staged content: tells a finished rename from a lost temp
}

func (s *Store) commit(tx *Tx) error {
	events := tx.events()
	if len(tx.staged) == 0 && len(events) == 0 {
		if tx.intent {
			return s.removeIntent()
		}
		return nil
	}
	files, err := tx.commitFiles()
	if err != nil {
		return err
	}
	var j journal
	if len(events) > 0 {
		if j.Append, err = tx.prepareAppend(events, files); err != nil {
			return err
		}
	}
	files = append(files, tx.recordedCopies(files)...)
	if j.Files, err = s.stage(files); err != nil {
		return err
	}
	if tx.intent {
		j.Remove = []string{s.intentPath()}
	}
	if err := s.writeJournal(j); err != nil {
		return err
	}
	// committed: only now is the version being replaced kept as the backup
	// (a failed transaction leaves the backups as they were)
	if fault(StepBackup) == nil {
		s.keepBackups(tx.stagedNames())
	}
	if err := s.apply(j); err != nil {
		return &CommittedError{Err: err}
	}
	return nil
}

// staged is one file a commit writes: its destination and content.
type staged struct {
	name string // the state file's name ("" for a recorded copy)
	dst  string
	data []byte
	hash string
}

// commitFiles are the staged files, in name order.
func (tx *Tx) commitFiles() ([]staged, error) {
	var out []staged
	for _, n := range tx.stagedNames() {
		dst, err := target(tx.s.Path(n))
		if err != nil {
			return nil, err
		}
		data := tx.staged[n]
		out = append(out, staged{name: n, dst: dst, data: data, hash: HashContent(data)})
	}
	return out, nil
}

// recordedCopies are the recorded copies (see recordedPath) of the
// tracked files the commit writes and of those its event records as they
// are: written in the same transaction.
func (tx *Tx) recordedCopies(files []staged) []staged {
	var out []staged
	add := func(name string, data []byte, hash string) {
		if tx.s.tracked(name) && !isDirName(name) && !IsRef(name) {
			out = append(out, staged{dst: tx.s.recordedPath(name), data: data, hash: hash})
		}
	}
	for _, f := range files {
		add(f.name, f.data, f.hash)
	}
	for _, n := range sortedKeys(tx.asIs) {
		switch data := tx.asIs[n]; {
		case isDirName(n) && tx.s.tracked(n):
			if list, err := dirListing(tx.s.Path(n)); err == nil && len(list) > 0 {
				b, _ := json.Marshal(list)
				out = append(out, staged{dst: tx.s.recordedPath(n), data: b, hash: HashContent(b)})
			}
		case data != nil:
			add(n, data, HashContent(data))
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// stagedNames are the names of the staged files, sorted.
func (tx *Tx) stagedNames() []string { return sortedKeys(tx.staged) }

// stage writes each file's new content to a synced temp file beside it,
// and syncs their directories.
func (s *Store) stage(files []staged) ([]journalEntry, error) {
	var entries []journalEntry
	dirs := map[string]bool{}
	for _, f := range files {
		err := fault(StepTemp)
		if err == nil && f.name == "" {
			err = os.MkdirAll(filepath.Dir(f.dst), 0o755)
		}
		var tmp string
		if err == nil {
			tmp, err = writeTemp(f.dst, tempSuffix, f.data, 0o644)
		}
		if err != nil {
			discardTemps(entries)
			return nil, err
		}
		entries = append(entries, journalEntry{Tmp: tmp, Dst: f.dst, Hash: f.hash})
		dirs[filepath.Dir(f.dst)] = true
	}
	for d := range dirs {
		err := fault(StepSyncTemps)
		if err == nil {
			err = SyncDir(d)
		}
		if err != nil {
			discardTemps(entries)
			return nil, err
		}
	}
	return entries, nil
}

func discardTemps(entries []journalEntry) {
	for _, e := range entries {
		os.Remove(e.Tmp)
	}
}

// writeJournal makes the journal durable: the commit point. On failure it
// leaves no journal behind (removed before the temps it names), or, when
// even that removal fails, treats the journal as committed.
func (s *Store) writeJournal(j journal) error {
	data, err := json.Marshal(j)
	if err != nil {
		discardTemps(j.Files)
		return err
	}
	path := s.journalPath()
	if err := fault(StepJournal); err != nil {
		discardTemps(j.Files)
		return err
	}
	tmp, err := writeTemp(path, ".tmp", data, 0o644)
	if err != nil {
		discardTemps(j.Files)
		return err
	}
	if err := fault(StepJournalRename); err != nil {
		os.Remove(tmp)
		discardTemps(j.Files)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		discardTemps(j.Files)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	err = fault(StepJournalSync)
	if err == nil {
		err = SyncDir(filepath.Dir(path))
	}
	if err == nil {
		return nil
	}
	if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		// the journal stays and will be replayed: the change is made
		if aerr := s.apply(j); aerr != nil {
			return &CommittedError{Err: fmt.Errorf("%v; %v", err, aerr)}
		}
		return nil
	}
	_ = SyncDir(filepath.Dir(path))
	discardTemps(j.Files)
	return err
}

// apply performs a committed journal's renames (skipping those already
// done), its append and removals, syncs, and removes the journal. It is
// idempotent.
func (s *Store) apply(j journal) error {
	dirs := map[string]bool{}
	for _, e := range j.Files {
		if err := fault(StepRename); err != nil {
			return fmt.Errorf("applying journal: %w", err)
		}
		if err := os.Rename(e.Tmp, e.Dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("applying journal: %w", err)
		}
		dirs[filepath.Dir(e.Dst)] = true
	}
	if j.Append != nil {
		err := fault(StepAppend)
		if err == nil {
			err = applyAppend(*j.Append)
		}
		if err != nil {
			return fmt.Errorf("applying journal: appending to the audit log: %w", err)
		}
	}
	for _, p := range j.Remove {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("applying journal: %w", err)
		}
		dirs[filepath.Dir(p)] = true
	}
	for d := range dirs {
		err := fault(StepApplySync)
		if err == nil {
			err = SyncDir(d)
		}
		if err != nil {
			return fmt.Errorf("applying journal: %w", err)
		}
	}
	// The removal need not be durable at once: a journal that reappears
	// after a crash is replayed, and every step of a replay is a no-op once
	// done (renamed temps are gone; the log entry is found in place).
	if err := fault(StepJournalRemove); err != nil {
		return err
	}
	if err := os.Remove(s.journalPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// replay finishes a journal found at the start of a transaction, or
// discards it when it never reached its commit point: its temp files are
// gone and no destination holds what it staged (a writer that failed after
// writing the journal removed them). A journal without files (an audit
// entry alone) is always finished.
func (s *Store) replay(j journal) error {
	pending, gone := 0, 0
	for _, e := range j.Files {
		switch {
		case exists(e.Tmp):
			pending++
		case e.Hash == "":
		default:
			if b, err := ReadRegular(e.Dst); err != nil || HashContent(b) != e.Hash {
				gone++
			}
		}
	}
	switch {
	case gone == 0:
		return s.apply(j)
	case pending == 0:
		// temps are removed only by a writer that failed before its commit
		// point; a destination that matches held that content already
		os.Remove(s.journalPath()) // never committed: no file, no audit entry
		return SyncDir(s.BatonDir())
	}
	return errs.New(errs.Invalid, "%s names staged files of which %d are gone and %d are not: the transaction cannot be finished, and nothing was written. A person must compare the files ('baton verify') and settle the journal", s.journalPath(), gone, pending)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// readJournal reads the journal a writer is applying or left (nil: none).
func (s *Store) readJournal() (*journal, error) {
	data, err := ReadRegular(s.journalPath())
	if err != nil || data == nil {
		return nil, err
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, errs.New(errs.Invalid, "%s: unreadable journal (%v); it is written atomically, so this file was changed outside baton — remove it to discard the half-done transaction", s.journalPath(), err)
	}
	return &j, nil
}

// recover finishes a committed journal, discards one whose transaction
// never reached its commit point, removes the temp files of a transaction
// that died before it, and undoes the outside change of an intent that no
// committed transaction recorded. Called under the lock.
func (s *Store) recover() error {
	j, err := s.readJournal()
	if err != nil {
		return err
	}
	if j != nil {
		if err := s.replay(*j); err != nil {
			return err
		}
	}
	for _, p := range s.staleTemps() {
		os.Remove(p)
	}
	if exists(s.intentPath()) {
		return s.undoIntent(true, nil)
	}
	return nil
}

// pending reports whether a killed or failed writer left work for recovery.
func (s *Store) pending() bool { return exists(s.journalPath()) || exists(s.intentPath()) }
