package gitops

import (
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Files baton writes while it changes a ref — the ref's new value, and the
// content of git's lock of the ref — are written whole into a temp file in
// the repository's common directory, outside refs/, and only then put in
// place: the value by a rename over the ref, the lock by a hard link
// (link(2) fails when the lock exists: git's exclusive creation). A
// process killed at any moment therefore never leaves under refs/ a file
// that is empty or half-written — readers of refs (git, go-git, baton's
// own) find the old ref or the new one, and no lock or one that holds
// baton's marker. What a kill can leave is a temp file in the common
// directory, where no reader of refs looks; a later write removes it once
// it is older than any live write can be (staleTempAge).

// tempPrefix starts the name of every temp file baton stages a ref's file
// in: a dot-file, which git never reads as a ref.
const tempPrefix = ".baton-tmp-"

// staleTempAge is the age past which a temp file is a killed write's: a
// live write holds its temp file for one write and sync, and removing one
// younger could pull it from under a write of another baton process.
const staleTempAge = time.Hour

// afterStep is called between the steps of a ref write, named; tests set
// it to kill the process at each step in turn.
var afterStep = func(string) {}

// stageFile writes content into a new temp file in dir, synced when sync
// is set, and returns its path. The file is made as git makes a ref's
// file (0666 less the umask), so that what is renamed into place is
// readable as git's own would be.
func stageFile(dir string, content []byte, sync bool) (string, error) {
	f, err := createTemp(dir, tempPrefix)
	if err != nil {
		return "", err
	}
	afterStep("temp created")
	_, err = f.Write(content)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	afterStep("temp written")
	return f.Name(), nil
}

// createTemp creates a file of a new name (prefix and a random part) in
// dir, 0666 less the umask as git makes its files; os.CreateTemp would
// make it 0600.
func createTemp(dir, prefix string) (*os.File, error) {
	for {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
}

// placeFile puts content at dest, by place (os.Rename or os.Link) from a
// temp file written whole in tmpDir. When dest is on another file system
// than tmpDir (refs/ mounted apart), the temp file is staged beside dest
// instead, under a dot-name git and baton's ref readers skip.
func placeFile(tmpDir, dest string, content []byte, sync bool, place func(tmp, dest string) error) error {
	for _, dir := range []string{tmpDir, filepath.Dir(dest)} {
		tmp, err := stageFile(dir, content, sync)
		if err != nil {
			return err
		}
		err = place(tmp, dest)
		afterStep("placed")
		_ = os.Remove(tmp) // already gone after a rename; a link leaves it
		if !errors.Is(err, syscall.EXDEV) {
			return err
		}
	}
	return &os.LinkError{Op: "place", Old: tmpDir, New: dest, Err: syscall.EXDEV}
}

// clearKilledLeftovers removes what killed baton writes left in dir and,
// when deep, in every directory below it: temp files (staleTemp) and locks
// holding baton's marker (lockFile says why those are safe to remove).
// Every write clears the whole of refs/heads, not only its own ref's
// directory: a lock left on a branch baton never writes again (one it was
// deleting) would keep git from updating that branch.
func clearKilledLeftovers(dir string, deep bool) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	now := time.Now()
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir() && deep:
			clearKilledLeftovers(p, true)
		case !e.Type().IsRegular():
		case staleTemp(e, p, now) || strings.HasSuffix(e.Name(), ".lock") && killedLock(p):
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				continue
			}
		}
	}
}

// lockReadMax is past the longest content of a lock baton takes: its
// marker and holder (lockMarker) fit well within it.
const lockReadMax = 512

// staleTemp says whether e (at path) is a temp file a killed write left:
// baton's current ones (tempPrefix) once older than staleTempAge, and
// those older versions of baton staged beside a ref at any age, since no
// baton writes them any more, so none belongs to a live write:
// ".NAME.baton-PID" (a value; no branch starts with a dot) and
// "NAME.lock.baton-PID" holding all or part of baton's marker (a lock's
// content; a branch may be named so, and then holds a hash).
func staleTemp(e fs.DirEntry, path string, now time.Time) bool {
	name := e.Name()
	switch {
	case strings.HasPrefix(name, tempPrefix):
		info, err := e.Info()
		return err == nil && now.Sub(info.ModTime()) > staleTempAge
	case strings.HasPrefix(name, ".") && strings.Contains(name, ".baton-"):
		return true
	case strings.Contains(name, ".lock.baton-"):
		return strings.HasPrefix(batonLock, lockContent(path))
	}
	return false
}

// lockContent is the content of the lock file at path, read no further
// than lockReadMax bytes ("\x00" when it cannot be read or is no regular
// file).
func lockContent(path string) string {
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return "\x00" // a FIFO would block the read: no lock baton makes
	}
	f, err := os.Open(path)
	if err != nil {
		return "\x00"
	}
	defer f.Close()
	b := make([]byte, lockReadMax)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "\x00"
	}
	return string(b[:n])
}
