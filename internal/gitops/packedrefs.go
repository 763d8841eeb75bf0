package gitops

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// packedLockWait is how long a deletion waits for a git process's lock of
// packed-refs (git's own core.packedRefsTimeout is a second): 'git gc' and
// 'git pack-refs' hold it briefly.
const packedLockWait = time.Second

// lockPacked takes git's lock of packed-refs (packed-refs.lock), waiting
// up to packedLockWait for a git process that holds it. A deletion holds
// it, as git does, from before it reads packed-refs until the ref's loose
// file is gone: 'git pack-refs' (which 'git gc --auto' runs) packs every
// loose ref under this lock, so a deletion that let it go before removing
// the loose file could see the ref packed meanwhile and report deleted a
// branch that lives on in packed-refs. It returns the release.
func (g *repo) lockPacked() (func(), error) {
	path := filepath.Join(g.loc.CommonDir, "packed-refs")
	unlock, err := lockWaiting(path, g.loc.CommonDir)
	if errors.Is(err, fs.ErrExist) {
		return nil, &lockedError{what: "packed-refs", lock: path + ".lock"}
	}
	if err != nil {
		return nil, fmt.Errorf("locking packed-refs: %w", err)
	}
	return unlock, nil
}

// lockWaiting is lockAt, waiting up to packedLockWait for the process
// that holds the lock to release it (fs.ErrExist if it does not).
func lockWaiting(path, tmpDir string) (func(), error) {
	unlock, err := lockAt(path, tmpDir)
	for waited := time.Duration(0); errors.Is(err, fs.ErrExist) && waited < packedLockWait; waited += 20 * time.Millisecond {
		time.Sleep(20 * time.Millisecond)
		unlock, err = lockAt(path, tmpDir)
	}
	return unlock, err
}

// dropPacked removes ref from packed-refs, if it is there: the rest is
// written whole into a temp file, synced, and renamed over packed-refs.
// The caller holds packed-refs.lock (lockPacked), so the file is read as
// no git process can change it.
func (g *repo) dropPacked(ref string) error {
	path := filepath.Join(g.loc.CommonDir, "packed-refs")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	rest, dropped := withoutPacked(b, ref)
	if !dropped {
		return nil
	}
	if err := placeFile(g.loc.CommonDir, path, rest, true, os.Rename); err != nil {
		return fmt.Errorf("writing packed-refs: %w", err)
	}
	afterStep("packed dropped")
	return nil
}

// withoutPacked is packed-refs content b without ref's line and the
// peeled line ("^hash", an annotated tag's commit) that follows it.
func withoutPacked(b []byte, ref string) ([]byte, bool) {
	var out bytes.Buffer
	dropped, peeled := false, false
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(line) == 0 || peeled && line[0] == '^' {
			continue
		}
		peeled = false
		_, name, ok := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(" "))
		if ok && line[0] != '#' && line[0] != '^' && string(name) == ref {
			dropped, peeled = true, true
			continue
		}
		out.Write(line)
	}
	return out.Bytes(), dropped
}
