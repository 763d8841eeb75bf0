package store

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/baton-cli/baton/internal/errs"
)

// The commit path and its one promise: before the commit point nothing has
// changed, after it the change is made, whatever fails. The commit point is
// the journal becoming durable (written, renamed into place, its directory
// synced). A failure before it removes what was written, the journal first,
// so that no journal ever names temp files that are gone; a failure after
// it (a rename, the audit-log append, a sync, the journal's removal, the
// stamps, an after-commit step) is a *CommittedError: the command reports
// success with a warning, and the next command finishes the journal. A
// journal found whose temp files are gone and whose destinations do not
// hold the staged content never reached its commit point and is discarded
// without a trace (its audit entry is not appended).

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
	StepTemp          = "temp"           // staging a file beside its destination
	StepSyncTemps     = "sync-temps"     // syncing the staged files' directories
	StepEvent         = "event"          // preparing the audit entry
	StepJournal       = "journal"        // writing the journal's temp file
	StepJournalRename = "journal-rename" // renaming it into place
	StepJournalSync   = "journal-sync"   // syncing .baton/: the commit point
	StepBackup        = "backup"         // keeping the replaced versions
	StepBackupPatch   = "backup-patch"   // moving a patched file's backup one version on
	StepRename        = "rename"         // renaming the staged files
	StepPatch         = "patch"          // writing a file's changed tail in place
	StepTruncate      = "truncate"       // cutting the patched file to its new size
	StepPatchSync     = "patch-sync"     // syncing the patched file
	StepAppend        = "append"         // appending the audit entry
	StepApplySync     = "apply-sync"     // syncing the renamed files' directories
	StepJournalRemove = "journal-remove" // removing the journal
	StepStamps        = "stamps"         // recording the written files' stamps
)

// CommitSteps lists the steps in order (for tests that fail each in turn).
var CommitSteps = []string{StepTemp, StepSyncTemps, StepEvent, StepJournal, StepJournalRename, StepJournalSync,
	StepBackup, StepRename, StepAppend, StepApplySync, StepJournalRemove, StepStamps}

// SetFaultHook installs fn to be called at every commit step (nil removes
// it). For tests only: it makes baton fail where a disk or a kill would.
func SetFaultHook(fn func(step string) error) { faultHook = fn }

func fault(step string) error {
	if faultHook == nil {
		return nil
	}
	return faultHook(step)
}

func (s *Store) commit(tx *Tx) error {
	staged, events, intent, adopt := tx.staged, tx.events(), tx.intent, tx.adopt
	if len(staged) == 0 && len(events) == 0 {
		if intent {
			return s.removeIntent()
		}
		return nil
	}
	names := make([]string, 0, len(staged))
	for n := range staged {
		names = append(names, n)
	}
	sort.Strings(names)
	hashes, patches, replaced, err := tx.planAll(names)
	if err != nil {
		return err
	}
	j, err := s.stage(replaced, staged, hashes)
	if err != nil {
		return err
	}
	for _, n := range names {
		if p, ok := patches[n]; ok {
			j.Patches = append(j.Patches, *p)
		}
	}
	if len(events) > 0 {
		if err := fault(StepEvent); err != nil {
			s.discardTemps(j)
			return err
		}
		head, _, err := s.lastEvent()
		if err != nil {
			s.discardTemps(j)
			return err
		}
		if head != nil {
			tx.prevHead = head.Hash
		}
		tx.event.stamps = func(files map[string]string) map[string]string { return tx.stampDigests(head, files) }
		line, offset, err := s.prepareEvents(events, hashes, adopt)
		if err != nil {
			s.discardTemps(j)
			return err
		}
		j.Append = &appendEntry{Path: s.EventsPath(), Offset: offset, Data: line}
	}
	if intent {
		j.Remove = []string{s.intentPath()}
	}
	if err := s.writeJournal(j); err != nil {
		return err
	}
	tx.committed = true
	// committed: only now is the version being replaced kept as the backup
	// (a failed transaction leaves the backups as they were)
	backups := fault(StepBackup) == nil
	if backups {
		s.keepBackups(replaced)
		tx.advanceBackups(patches)
	}
	if err := s.apply(j); err != nil {
		return &CommittedError{Err: err}
	}
	if backups {
		s.recordBackups(patches)
	}
	return nil
}

// planAll plans every staged file (see plan): the contents' hashes, the
// patches by name, and the names replaced whole.
func (tx *Tx) planAll(names []string) (map[string]string, map[string]*patchEntry, []string, error) {
	hashes := make(map[string]string, len(names)) // each staged content hashed once
	patches := map[string]*patchEntry{}
	var replaced []string
	for _, n := range names {
		dst, err := target(tx.s.Path(n))
		if err != nil {
			return nil, nil, nil, err
		}
		h, p, err := tx.plan(n, dst, tx.staged[n])
		if err != nil {
			return nil, nil, nil, err
		}
		hashes[n], tx.hashed[n] = h.hash, h
		if p != nil {
			patches[n] = p
		} else {
			replaced = append(replaced, n)
		}
	}
	return hashes, patches, replaced, nil
}

// stage writes each file's new content to a synced temp file beside it;
// hashes are the contents' hashes, by name.
func (s *Store) stage(names []string, staged map[string][][]byte, hashes map[string]string) (journal, error) {
	var j journal
	dirs := map[string]bool{}
	for _, n := range names {
		dst, err := target(s.Path(n))
		if err == nil {
			err = fault(StepTemp)
		}
		if err != nil {
			s.discardTemps(j)
			return j, err
		}
		tmp, err := writeTemp(dst, tempSuffix, staged[n], 0o644)
		if err != nil {
			s.discardTemps(j)
			return j, err
		}
		j.Files = append(j.Files, journalEntry{Tmp: tmp, Dst: dst, Hash: hashes[n]})
		dirs[filepath.Dir(dst)] = true
	}
	for d := range dirs {
		err := fault(StepSyncTemps)
		if err == nil {
			err = SyncDir(d)
		}
		if err != nil {
			s.discardTemps(j)
			return j, err
		}
	}
	return j, nil
}

// writeJournal makes the journal durable: the commit point. On failure it
// leaves no journal behind (removed before the temps it names), or, when
// even that removal fails, treats the journal as committed.
func (s *Store) writeJournal(j journal) error {
	pieces := journalPieces(j)
	path := s.journalPath()
	fail := func(err error) error {
		if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			// the journal stays and will be replayed: the change is made
			if aerr := s.apply(j); aerr != nil {
				return &CommittedError{Err: fmt.Errorf("%v; %v", err, aerr)}
			}
			return nil
		}
		_ = SyncDir(filepath.Dir(path))
		s.discardTemps(j)
		return err
	}
	if err := fault(StepJournal); err != nil {
		s.discardTemps(j)
		return err
	}
	tmp, err := s.journalTemp(pieces)
	if err != nil {
		s.discardTemps(j)
		return err
	}
	if err := fault(StepJournalRename); err != nil {
		os.Remove(tmp)
		s.discardTemps(j)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		s.discardTemps(j)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	err = fault(StepJournalSync)
	if err == nil {
		err = SyncDir(filepath.Dir(path))
	}
	if err != nil {
		return fail(err)
	}
	// the last journal's retirement is durable now: its file may be rewritten
	_ = os.Rename(s.journalSpare(), s.journalReady())
	return nil
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
	written, err := s.writeInPlace(j)
	defer closeAll(written)
	if err != nil {
		return err
	}
	for _, p := range j.Remove {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("applying journal: %w", err)
		}
		dirs[filepath.Dir(p)] = true
	}
	for range j.Patches {
		if err := fault(StepPatchSync); err != nil {
			return err
		}
	}
	for range dirs {
		if err := fault(StepApplySync); err != nil {
			return err
		}
	}
	if err := syncAll(written, slices.Collect(maps.Keys(dirs))); err != nil {
		return fmt.Errorf("applying journal: %w", err)
	}
	// The removal need not be durable at once: a journal that reappears
	// after a crash is replayed, and every step of a replay is a no-op once
	// done (renamed temps are gone; the log entry is found in place). Its
	// file is kept for a later journal.
	if err := fault(StepJournalRemove); err != nil {
		return err
	}
	if err := s.retireJournal(); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// writeInPlace applies the journal's patches and its audit entry, and
// returns the files written, open, for the caller to sync and close.
func (s *Store) writeInPlace(j journal) ([]*os.File, error) {
	var written []*os.File
	for _, p := range j.Patches {
		f, err := s.applyPatch(p)
		if err != nil {
			return written, fmt.Errorf("applying journal: %w", err)
		}
		written = append(written, f)
	}
	if j.Append != nil {
		err := fault(StepAppend)
		var f *os.File
		if err == nil {
			f, err = applyAppend(*j.Append)
		}
		if err != nil {
			return written, fmt.Errorf("applying journal: appending to the audit log: %w", err)
		}
		if f != nil {
			written = append(written, f)
		}
	}
	return written, nil
}

// syncAll makes the files and directories durable. The files' writeback
// is started for all of them first (startWriteback), so that the file
// system commits them together: on ext4 the first fsync's journal commit
// takes in the others' blocks and sizes, and the fsyncs after it find
// little left to wait for (the patched file and the log: 0.5 ms together,
// under 8 concurrent writers, as when each was synced on a goroutine of
// its own). One after the other on the caller's goroutine: a second one
// had to be handed a thread, and the processor back (a write runs on one),
// at about a tenth of a millisecond of CPU per write. Nothing orders them:
// the journal redoes any of them after a crash.
func syncAll(files []*os.File, dirs []string) error {
	for _, f := range files[min(1, len(files)):] {
		startWriteback(f)
	}
	var errs []error
	for _, f := range files {
		if err := syncFile(f); err != nil {
			errs = append(errs, err)
		}
	}
	for _, d := range dirs {
		if err := SyncDir(d); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// A journal's file is reused, so that a commit creates and frees no inode
// for it. A finished journal is renamed to journal.spare (retired); the
// next commit point, which syncs .baton/, makes that name durable, and the
// commit then renames the file to journal.ready, which the commit after it
// rewrites in place for its own journal. A file is rewritten only once a
// synced directory no longer names it journal: a power loss never leaves
// the name journal on a file half rewritten, and no sync is added for it.

func (s *Store) journalSpare() string { return filepath.Join(s.BatonDir(), "journal.spare") }
func (s *Store) journalReady() string { return filepath.Join(s.BatonDir(), "journal.ready") }

// journalTemp writes the journal's content, synced, to the ready file (or
// to a new temp file when there is none) and returns that file's path. The
// content is padded to a whole number of journalBlock bytes, so that the
// ready file, rewritten in place, mostly keeps its size: its sync then has
// only the data to write (fdatasync), where a new size also writes the
// inode, synchronously, while the writer holds the lock.
func (s *Store) journalTemp(pieces [][]byte) (string, error) {
	pieces = padJournal(pieces)
	if rewrite(s.journalReady(), pieces, true) == nil {
		return s.journalReady(), nil
	}
	return writeTemp(s.journalPath(), ".tmp", pieces, 0o644)
}

// retireJournal removes the journal from its name, keeping the file as
// the spare. (Neither needs a sync: the journal reappearing whole after a
// crash is replayed, a no-op.)
func (s *Store) retireJournal() error {
	if os.Rename(s.journalPath(), s.journalSpare()) == nil {
		return nil
	}
	return os.Remove(s.journalPath())
}

// replay finishes a journal found at the start of a transaction, or
// discards it when it never reached its commit point: its temp files are
// gone and no destination holds what it staged (a writer that failed after
// writing the journal removed them). A journal without files (an audit
// entry alone) is always finished.
func (s *Store) replay(j journal) error {
	pending, done, gone := 0, 0, 0
	for _, e := range j.Files {
		switch {
		case exists(e.Tmp):
			pending++
		case e.Hash == "":
			done++ // written before journals recorded hashes: replay as before
		default:
			b, err := ReadRegular(e.Dst)
			if err == nil && sameContent(b, e.Hash) {
				done++
			} else {
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

// recover finishes a committed journal, discards one whose transaction
// never reached its commit point, removes the temp files of a transaction
// that died before it, and undoes the outside change of an intent that no
// committed transaction recorded. Called under the lock.
func (s *Store) recover() error { return s.recoverTemps(s.staleTemps()) }

// recoverTemps is recover that removes the temp files temps (listed by
// staleTemps before the lock was taken).
func (s *Store) recoverTemps(temps []string) error {
	data, err := ReadRegular(s.journalPath())
	switch {
	case err == nil && data != nil:
		j, jerr := decodeJournal(data)
		if jerr != nil {
			return errs.New(errs.Invalid, "%s: unreadable journal (%v); it is written atomically, so this file was changed outside baton — remove it to discard the half-done transaction", s.journalPath(), jerr)
		}
		if err := s.replay(j); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	for _, p := range temps {
		os.Remove(p)
	}
	if exists(s.intentPath()) {
		return s.undoIntent(true, nil)
	}
	return nil
}

// pending reports whether a killed or failed writer left work for recovery.
func (s *Store) pending() bool { return exists(s.journalPath()) || exists(s.intentPath()) }
