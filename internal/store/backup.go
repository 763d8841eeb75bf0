package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
)

// Backups of patched files. .baton/backup/<file> keeps the version before
// the last change, an independent copy. A file replaced by rename is
// hard-linked there (the old inode, which the rename leaves alone). A file
// patched in place cannot be: the link would change with it. Its backup is
// kept one version behind by patches too: beside it, a record holds the
// file's last patch and the backup's identity; the next commit applies that
// patch to the backup (the version it is about to change), then records its
// own. A record emptied before the backup is patched means a kill in the
// middle leaves no record, and a backup without a matching record is
// rebuilt by copying the file (rare, and the only cost that grows). The
// backup of a file smaller than patchFrom is always copied whole (the
// file's version is in memory) into a spare beside it, which is then
// exchanged with it (see replaceVia: no inode created, and a kill leaves
// the old backup or the new one, never a torn one); its record holds the
// hash of its content, so that one torn by a power loss (nothing is
// synced) is told from a good one: see BackupIntact.

// backupRecord is kept beside a patched file's backup.
type backupRecord struct {
	Backup string     `json:"backup"` // the backup's identity, as patched
	Patch  patchEntry `json:"patch"`  // the file's last patch (to its version Patch.Hash)
	// Len is the length of the patch's data, which the record does not
	// hold: the next commit finds those bytes in the file's version it
	// starts from (Patch.Hash), at Patch.Off (a record of an earlier
	// version holds them in Patch.Data)
	Len int64 `json:"len,omitempty"`
	// Hash is the backup's content hash, for a backup copied whole
	Hash string `json:"hash,omitempty"`
}

func (s *Store) backupRecordPath(name string) string {
	return filepath.Join(s.BatonDir(), "backup", "."+filepath.Base(name)+".patch")
}

// tracked says whether name is a state file the log records (every name,
// when the store was given none): those have backups and recorded
// versions; a cache written with them (an index) has neither.
func (s *Store) tracked(name string) bool {
	return s.Tracked == nil || slices.Contains(s.Tracked, name)
}

// keepBackups hard-links each file about to be replaced into .baton/backup:
// no data is copied, and the rename that follows leaves the old version
// reachable there. Best effort: a file system without hard links keeps none.
func (s *Store) keepBackups(names []string) {
	if err := os.MkdirAll(filepath.Join(s.BatonDir(), "backup"), 0o755); err != nil {
		return
	}
	for _, n := range names {
		if !s.tracked(n) {
			continue
		}
		s.dropBackupRecord(n)
		b := s.BackupPath(n)
		os.Remove(b)
		if src, err := target(s.Path(n)); err == nil && os.Link(src, b) == nil {
			s.recordBackup(n, backupRecord{}) // a synced version, whole: never written again
		}
	}
}

// advanceBackups makes the backup of each file about to be patched hold
// the file's current version (its mapped base): by the recorded patch when
// the record matches, else by a copy. Best effort.
func (tx *Tx) advanceBackups(patches map[string]*patchEntry) {
	if len(patches) == 0 || os.MkdirAll(filepath.Join(tx.s.BatonDir(), "backup"), 0o755) != nil {
		return
	}
	for n := range patches {
		b := tx.bases[n]
		if b == nil || !tx.s.tracked(n) {
			continue
		}
		bp := tx.s.BackupPath(n)
		if int64(len(b.data)) < patchFrom { // small: copied whole
			tx.s.copySmallBackup(n, b.data)
			continue
		}
		rec, ok := tx.s.readBackupRecord(n)
		tx.s.dropBackupRecord(n) // first: a kill from here on means a rebuild
		if ok && b.hash != "" && rec.Patch.Hash == b.hash && sameID(bp, rec.Backup) && rec.withData(b.data) {
			rec.Patch.Dst = bp
			if patchBackup(rec.Patch) == nil {
				continue
			}
		}
		copyBackup(bp, b.data)
	}
}

// withData gives a record without its patch's data the data from the
// version the patch made (the file's content now, as its hash was
// recorded): the bytes the patch wrote are there at its offset. It says
// whether the patch is whole (false: a record that does not fit the
// version, which the caller replaces by a copy).
func (rec *backupRecord) withData(now []byte) bool {
	if rec.Len == 0 {
		return true // the data recorded, or none
	}
	if rec.Patch.Data != nil || rec.Patch.Size != int64(len(now)) || rec.Patch.Off < 0 || rec.Len < 0 || rec.Patch.Off+rec.Len > int64(len(now)) {
		return false
	}
	rec.Patch.Data = now[rec.Patch.Off : rec.Patch.Off+rec.Len]
	return true
}

// copySmallBackup makes the backup of name hold data, through a spare
// exchanged with it, and records data's hash beside it (a kill before the
// new record leaves the last one, which the new backup does not match:
// BackupIntact reports it).
func (s *Store) copySmallBackup(name string, data []byte) {
	bp := s.BackupPath(name)
	if replaceVia(filepath.Join(filepath.Dir(bp), "."+filepath.Base(bp)+".spare"), bp, data) != nil {
		copyBackup(bp, data)
	}
	s.recordBackup(name, backupRecord{Hash: HashContent(data)})
}

// recordBackup writes rec, with the backup's identity now, beside it.
func (s *Store) recordBackup(name string, rec backupRecord) {
	fi, err := os.Stat(s.BackupPath(name))
	if err != nil {
		return
	}
	rec.Backup = identity(fi)
	b, _ := json.Marshal(rec)
	if overwrite(s.backupRecordPath(name), b) != nil {
		_ = writeReplace(s.backupRecordPath(name), b)
	}
}

// BackupIntact says whether the backup of the state file name holds what
// baton kept there: a small one its recorded hash; a patched one a version
// the record's patch moves on (its identity as patched). A backup without
// a record (a kill while it was moved on, a power loss) is not known
// intact: it may still be, and a person checks it before restoring it.
func (s *Store) BackupIntact(name string) bool {
	rec, ok := s.readBackupRecord(name)
	if !ok {
		return false
	}
	if rec.Hash == "" {
		return sameID(s.BackupPath(name), rec.Backup)
	}
	b, err := ReadRegular(s.BackupPath(name))
	return err == nil && sameContent(b, rec.Hash)
}

// copyBackup replaces the backup at bp by a new file holding data.
func copyBackup(bp string, data []byte) {
	os.Remove(bp)
	if tmp, err := writeTemp(bp, ".tmp", [][]byte{data}, 0o644); err == nil {
		if os.Rename(tmp, bp) != nil {
			os.Remove(tmp)
		}
	}
}

// patchBackup applies a patch to a backup (no lock: no reader reads it;
// no sync: a backup lost in a crash is rebuilt).
func patchBackup(p patchEntry) error {
	if err := fault(StepBackupPatch); err != nil {
		return err
	}
	f, err := OpenFile(p.Dst, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteAt(p.Data, p.Off); err != nil {
		return err
	}
	return f.Truncate(p.Size)
}

// dropBackupRecord makes the record beside name's backup hold none: it is
// emptied in place (a record that is not whole is none), or removed.
func (s *Store) dropBackupRecord(name string) {
	if overwrite(s.backupRecordPath(name), nil) != nil {
		os.Remove(s.backupRecordPath(name))
	}
}

func (s *Store) readBackupRecord(name string) (backupRecord, bool) {
	var rec backupRecord
	b, err := ReadRegular(s.backupRecordPath(name))
	if err != nil || b == nil || json.Unmarshal(b, &rec) != nil || rec.Backup == "" {
		return rec, false
	}
	return rec, true
}

// recordBackups records, after the patches were applied, each one beside
// the backup it will move on next time.
func (s *Store) recordBackups(patches map[string]*patchEntry) {
	for n, p := range patches {
		if p.Size < patchFrom || !s.tracked(n) {
			continue // the next commit copies it whole; a cache has none
		}
		rec := backupRecord{Patch: *p, Len: int64(len(p.Data))}
		rec.Patch.Dst, rec.Patch.Data = "", nil
		s.recordBackup(n, rec)
	}
}
