package gitops

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
)

// Refs are read and listed here as git reads them: a loose file under the
// common directory, else a line of packed-refs. go-git reads the packed
// value under a loose file that holds no hash (empty, garbage: a broken
// ref, which git passes over as missing), and its listing fails as a whole
// on the first empty file it meets.

// Branch returns the commit refs/heads/name points at.
func (g *repo) Branch(name string) (string, error) {
	h, found, err := g.readRef("refs/heads/"+name, 0)
	if err != nil {
		return "", err
	}
	if !found {
		return "", fmt.Errorf("%w: %s", ErrNoBranch, name)
	}
	return h, nil
}

// branchExists says whether refs/heads/name exists as git's reads see it.
func (g *repo) branchExists(name string) bool {
	_, found, err := g.readRef("refs/heads/"+name, 0)
	return err == nil && found
}

// readRef returns the commit the ref name (refs/...) points at, found
// false when git has no such ref: a name git refuses, a broken loose file,
// neither a loose file nor a packed line. A symbolic ref is followed, as
// far as git follows one.
func (g *repo) readRef(name string, depth int) (hash string, found bool, err error) {
	if !strings.HasPrefix(name, "refs/") || plumbing.ReferenceName(name).Validate() != nil || depth > 5 {
		return "", false, nil
	}
	b, err := readLoose(filepath.Join(g.loc.CommonDir, filepath.FromSlash(name)))
	switch {
	case err == nil:
		if target, ok := strings.CutPrefix(string(b), "ref:"); ok {
			return g.readRef(strings.TrimSpace(target), depth+1)
		}
		h, kind := looseValue(b)
		return h, kind == refHash, nil
	case errors.Is(err, syscall.EISDIR): // refs/heads/a when a/b exists
	case errors.Is(err, syscall.ENOTDIR): // refs/heads/a/b when a exists
	case !errors.Is(err, fs.ErrNotExist):
		return "", false, fmt.Errorf("reading %s: %w", name, err)
	}
	err = scanPacked(g.loc.CommonDir, func(ref, h string) bool {
		if ref == name {
			hash, found = h, true
		}
		return !found
	})
	return hash, found, err
}

// refKind is what a loose ref file holds.
type refKind int

const (
	refBroken   refKind = iota // neither a hash nor a symbolic ref: empty, garbage
	refHash                    // a commit's hash
	refSymbolic                // "ref: <another ref>"
)

// looseValue reads a loose ref file's content as git does: "ref:" starts a
// symbolic ref; otherwise a full hash, followed by nothing or by white
// space (and whatever comes after it); anything else is broken.
func looseValue(b []byte) (string, refKind) {
	if bytes.HasPrefix(b, []byte("ref:")) {
		return "", refSymbolic
	}
	n := 2 * len(plumbing.ZeroHash)
	if len(b) < n || !plumbing.IsHash(string(b[:n])) || len(b) > n && !isSpace(b[n]) {
		return "", refBroken
	}
	return strings.ToLower(string(b[:n])), refHash
}

// isSpace is git's isspace (its own table, not the C library's): space,
// tab, newline and carriage return.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// readLoose reads a loose ref file. Only a regular file has content: a
// FIFO, device or socket left under refs/ (which a blocking open would
// wait on) reads as empty — a broken ref — and a directory is EISDIR.
func readLoose(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case fi.IsDir():
		return nil, &os.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
	case !fi.Mode().IsRegular():
		return nil, nil
	}
	return io.ReadAll(f)
}

// Heads lists the repository's branches and the commits they point at, as
// 'git for-each-ref refs/heads' lists them: the loose refs under
// refs/heads, then the packed ones they do not override. What git skips
// is skipped: names git refuses (dot-files, "*.lock" — the temp and lock
// files of ref writers, git's or a killed baton's), files that hold no
// commit hash (empty or garbage: a broken ref, which also hides a packed
// one of its name), anything but a regular file, and symbolic refs.
// go-git's reference walk is not used: it fails as a whole on the first
// empty file it meets.
func Heads(r Repo) (map[string]string, error) {
	g, ok := r.(*repo)
	if !ok {
		return nil, errors.New("gitops: Heads needs a repository opened by Open")
	}
	out, loose := map[string]string{}, map[string]bool{}
	err := walkLoose(filepath.Join(g.loc.CommonDir, "refs", "heads"), "", func(name string, b []byte) {
		loose[name] = true
		if h, kind := looseValue(b); kind == refHash {
			out[name] = h
		}
	})
	if err != nil {
		return nil, err
	}
	err = scanPacked(g.loc.CommonDir, func(ref, hash string) bool {
		if name, ok := strings.CutPrefix(ref, "refs/heads/"); ok && !loose[name] && validBranch(name) {
			out[name] = hash
		}
		return true
	})
	return out, err
}

// walkLoose calls visit with the name (below dir, '/'-separated, after
// prefix) and content of every loose ref file under dir whose name git
// accepts. A file or directory that goes away meanwhile is passed over,
// as git passes it over.
func walkLoose(dir, prefix string, visit func(name string, content []byte)) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing branches: %w", err)
	}
	for _, e := range ents {
		name, path := prefix+e.Name(), filepath.Join(dir, e.Name())
		switch {
		case strings.HasPrefix(e.Name(), ".") || strings.HasSuffix(e.Name(), ".lock"):
		case e.IsDir():
			if err := walkLoose(path, name+"/", visit); err != nil {
				return err
			}
		case e.Type().IsRegular() && validBranch(name):
			if b, err := readLoose(path); err == nil {
				visit(name, b)
			}
		}
	}
	return nil
}

// validBranch says whether git accepts refs/heads/name as a ref's name.
func validBranch(name string) bool {
	return plumbing.NewBranchReferenceName(name).Validate() == nil
}

// scanPacked calls visit with each ref the packed-refs file in dir lists
// and its hash, until visit returns false; no file lists none. git writes
// the file whole (a rename), so a line that is not "<hash> <ref>" is
// damage, reported.
func scanPacked(dir string, visit func(ref, hash string) bool) error {
	path := filepath.Join(dir, "packed-refs")
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		h, ref, ok := strings.Cut(line, " ")
		if !ok || !plumbing.IsHash(h) {
			return fmt.Errorf("%s: line %d is not '<hash> <ref>' — the file is damaged (git cannot read it either); restore it from a backup", path, n)
		}
		if !visit(ref, strings.ToLower(h)) {
			return nil
		}
	}
	return sc.Err()
}
