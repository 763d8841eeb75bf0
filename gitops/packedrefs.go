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

// dropPacked removes ref from packed-refs, if it is there: the rest is
// written whole into a temp file, synced, and renamed over packed-refs
// under git's lock of it (packed-refs.lock), as git rewrites it.
func (g *repo) dropPacked(ref string) error {
	if _, found, sure := g.packedRef(ref); sure && !found {
		return nil
	}
	path := filepath.Join(g.loc.CommonDir, "packed-refs")
	unlock, err := g.lockFile(path)
	for waited := time.Duration(0); errors.Is(err, fs.ErrExist) && waited < packedLockWait; waited += 20 * time.Millisecond {
		time.Sleep(20 * time.Millisecond)
		unlock, err = g.lockFile(path)
	}
	if errors.Is(err, fs.ErrExist) {
		return &lockedError{what: "packed-refs", lock: path + ".lock"}
	}
	if err != nil {
		return fmt.Errorf("locking packed-refs: %w", err)
	}
	defer unlock()
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
