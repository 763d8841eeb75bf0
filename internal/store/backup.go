package store

import (
	"os"
	"path/filepath"
	"slices"
)

// .baton/backup/<file> keeps the version of each state file before the
// last change, for a person recovering from a bad edit. At the commit point
// the version about to be replaced is hard-linked there: no data is copied,
// and since baton only ever replaces a state file by rename, that version's
// bytes are never written again.

// BackupPath is where the version of a state file before the last change
// is kept.
func (s *Store) BackupPath(name string) string {
	return filepath.Join(s.BatonDir(), "backup", filepath.Base(name))
}

// tracked says whether name is a state file the log records (every name,
// when the store was given none): those have backups and recorded copies.
func (s *Store) tracked(name string) bool {
	return s.Tracked == nil || slices.Contains(s.Tracked, name)
}

// keepBackups links each tracked file about to be replaced into
// .baton/backup. Best effort: a file system without hard links keeps none.
func (s *Store) keepBackups(names []string) {
	if err := os.MkdirAll(filepath.Join(s.BatonDir(), "backup"), 0o755); err != nil {
		return
	}
	for _, n := range names {
		if !s.tracked(n) {
			continue
		}
		b := s.BackupPath(n)
		os.Remove(b) // a file new to this change had no version before
		if src, err := target(s.Path(n)); err == nil {
			_ = os.Link(src, b)
		}
	}
}
