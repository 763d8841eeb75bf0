package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/baton-cli/baton/internal/errs"
)

// An intent makes a change outside the state files — a git ref moved, a
// branch deleted — part of a transaction. The command writes what it is
// about to change (with the values before and after) to .baton/intent.json,
// durably, before it touches git; the transaction's journal removes the
// intent when it commits. So an intent found at the start of a transaction
// belongs to one that never committed (killed, or failed before its commit
// point), and its outside change is undone with compare-and-swap by the
// store's Undo, so that git and the state files always agree.

const intentName = "intent.json"

func (s *Store) intentPath() string { return filepath.Join(s.BatonDir(), intentName) }

// Intent writes data (the command's description of the outside change it
// is about to make) durably before the change is made. The commit removes
// it; a transaction that fails or is killed before its commit point has its
// change undone by the store's Undo.
func (tx *Tx) Intent(data []byte) error {
	if err := WriteFileAtomic(tx.s.intentPath(), data, 0o644); err != nil {
		return fmt.Errorf("recording the intended change before making it: %w", err)
	}
	tx.intent = true
	return nil
}

// PendingIntent is the intent of a transaction that has not committed (nil
// for none): a writer between its outside change and its commit point, or
// one killed there, whose change the next write undoes.
func (s *Store) PendingIntent() []byte {
	b, err := ReadRegular(s.intentPath())
	if err != nil {
		return nil
	}
	return b
}

func (s *Store) removeIntent() error {
	if err := os.Remove(s.intentPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return SyncDir(s.BatonDir())
}

// undoIntent undoes the outside change of an intent that was not committed
// and removes it; cause is why (nil when found at recovery). It returns
// cause, with what was or could not be undone.
func (s *Store) undoIntent(had bool, cause error) error {
	if !had {
		return cause
	}
	data, err := ReadRegular(s.intentPath())
	if err != nil || data == nil {
		return errors.Join(cause, err)
	}
	if s.Undo == nil {
		return errs.New(errs.Conflict, "%s records a change outside the state files that was never committed, and this command cannot undo it; run 'baton verify' or any baton command that changes the state", s.intentPath())
	}
	if uerr := s.Undo(data); uerr != nil {
		if cause == nil {
			return uerr
		}
		return &errs.Error{Kind: errs.KindOf(cause), Msg: fmt.Sprintf("%v — and undoing the change outside the state files failed: %v", cause, uerr), Err: cause}
	}
	if rerr := s.removeIntent(); rerr != nil {
		return errors.Join(cause, rerr)
	}
	return cause
}
