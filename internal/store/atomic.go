package store

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces path with data so that a reader, or a process
// killed at any moment, sees either the old file or the new one: temp file
// in the same directory, fsync, rename, fsync of the directory.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := writeTemp(path, ".tmp", [][]byte{data}, perm)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

// writeTemp writes data (in pieces, in order) to a new file beside path
// and syncs it.
func writeTemp(path, suffix string, data [][]byte, perm os.FileMode) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*"+suffix)
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	name := f.Name()
	fail := func(err error) (string, error) {
		f.Close()
		os.Remove(name)
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	for _, p := range data {
		if _, err := f.Write(p); err != nil {
			return fail(err)
		}
	}
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if err := syncFile(f); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return name, nil
}

// SyncDir fsyncs a directory so that renames in it are durable.
func SyncDir(dir string) error {
	d, err := OpenFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := syncFile(d); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

// errNotOverwritable is overwrite's refusal (a value: nothing allocated at
// start-up, which every process pays).
var errNotOverwritable error = notOverwritable{}

type notOverwritable struct{}

func (notOverwritable) Error() string { return "not a regular file of one link" }

// overwrite makes the file at path hold data, written in place: a file
// system allocates no new inode, which it charges for on every creation
// (ext4 scans past every recently deleted one). Only for files checked
// when read (against a hash or a seal), since a kill in the middle leaves
// the file torn; it is not synced. It fails, writing nothing, when path is
// missing, not a regular file, or has another link; the caller then
// replaces it.
func overwrite(path string, data []byte) error { return rewrite(path, [][]byte{data}, false) }

// rewrite is overwrite of the content given in pieces (written in order,
// never joined in memory), followed by a sync of the content when sync is
// set (datasync: the data and the size, not the times).
func rewrite(path string, pieces [][]byte, sync bool) error {
	f, size, err := openOverwriteSize(path)
	if err != nil {
		return err
	}
	off := int64(0)
	for _, p := range pieces {
		if err != nil {
			break
		}
		_, err = f.WriteAt(p, off)
		off += int64(len(p))
	}
	if err == nil && size != off {
		// not when the size is already right: even that truncate marks
		// the inode for a data sync to write
		err = f.Truncate(off)
	}
	if err == nil && sync {
		err = datasync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// replaceVia replaces path by a file holding data (not synced), atomically
// for readers, through spare: a file beside it that is written in place and
// then exchanged with path, so that the old version becomes the next spare
// and no inode is created or freed. Where names cannot be exchanged (or
// path does not exist yet), spare is created and renamed over path.
func replaceVia(spare, path string, data []byte) error {
	if overwrite(spare, data) != nil {
		os.Remove(spare) // never written through a link left there
		if err := os.WriteFile(spare, data, 0o644); err != nil {
			return err
		}
	}
	return swapIn(spare, path)
}

// swapIn puts spare in path's place: the two exchanged (the old version the
// next spare), or spare renamed over path where names cannot be exchanged or
// path does not exist yet.
func swapIn(spare, path string) error {
	if exchange(spare, path) == nil {
		return nil
	}
	return os.Rename(spare, path)
}
