package gitops

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
)

// Refs are read here directly, as git stores them (a loose file under the
// common directory, else a line of packed-refs), for the refs a write
// reads several times: main, the current branch, HEAD. go-git's reader
// resolves every path through its chroot, one lstat per component, and
// tries each namespace in turn. Anything this reader does not know for
// sure (a symbolic ref inside refs/, a file it cannot parse, a name git
// would refuse) is left to go-git.

// readRef returns the commit the ref name (refs/...) points at: found
// false when git has no such ref, sure false when go-git must answer. A
// loose file that holds neither a hash nor a symbolic ref (empty, garbage)
// is a broken ref, which git's reads pass over as missing, without
// looking in packed-refs.
func (g *repo) readRef(name string) (hash string, found, sure bool) {
	if plumbing.ReferenceName(name).Validate() != nil {
		return "", false, false
	}
	b, err := readLoose(filepath.Join(g.loc.CommonDir, filepath.FromSlash(name)))
	switch {
	case err == nil:
		h, kind := looseValue(b)
		return h, kind == refHash, kind != refSymbolic
	case errors.Is(err, syscall.EISDIR): // refs/heads/a when a/b exists
	case !errors.Is(err, fs.ErrNotExist):
		return "", false, false
	}
	return g.packedRef(name)
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

// branchExists says whether refs/heads/name exists as git's reads see it:
// a loose file holding a hash or a symbolic ref, else a packed-refs line.
// A broken loose file (empty, garbage) is no branch.
func (g *repo) branchExists(name string) bool {
	full := plumbing.NewBranchReferenceName(name)
	if _, found, sure := g.readRef(full.String()); sure {
		return found
	}
	_, err := g.r.Reference(full, false)
	return err == nil
}

// packedRef looks name up in packed-refs (no file: no such ref).
func (g *repo) packedRef(name string) (hash string, found, sure bool) {
	err := scanPacked(g.loc.CommonDir, func(ref, h string) bool {
		if ref == name {
			hash, found = h, true
		}
		return !found
	})
	return hash, found, err == nil
}

// hashLine is the full hash a loose ref file holds ("<hex>\n").
func hashLine(b []byte) (string, bool) {
	h := string(bytes.TrimRight(b, "\r\n"))
	if !plumbing.IsHash(h) {
		return "", false
	}
	return strings.ToLower(h), true
}

// readHead reads HEAD: the branch it names ("" when detached) and the
// commit it is at (found false on an unborn branch); sure false when
// go-git must answer.
func (g *repo) readHead() (branch, hash string, found, sure bool) {
	b, err := readFile(filepath.Join(g.loc.GitDir, "HEAD"))
	if err != nil {
		return "", "", false, false
	}
	if h, ok := hashLine(b); ok {
		return "", h, true, true
	}
	target, ok := strings.CutPrefix(strings.TrimRight(string(b), "\r\n"), "ref: ")
	branch, isBranch := strings.CutPrefix(target, "refs/heads/")
	if !ok || !isBranch {
		return "", "", false, false
	}
	hash, found, sure = g.readRef(target)
	return branch, hash, found, sure
}

// noRefNamed says whether git surely has no ref that a revision name could
// mean (plumbing.RefRevParseRules: name itself, refs/name, refs/tags/name,
// refs/heads/name, refs/remotes/name, refs/remotes/name/HEAD), as a loose
// file under the git directory or the common one or as a line of
// packed-refs, reading packed-refs once. It answers only for a name of hex
// digits (an abbreviated hash, which git takes as a ref first when one of
// that name exists); false means go-git must look.
func (g *repo) noRefNamed(name string) bool {
	if len(name) < 4 || len(name) >= 2*len(plumbing.ZeroHash) || strings.Trim(name, "0123456789abcdefABCDEF") != "" {
		return false
	}
	dirs := []string{g.loc.GitDir}
	if g.loc.CommonDir != g.loc.GitDir {
		dirs = append(dirs, g.loc.CommonDir)
	}
	want := map[string]bool{}
	for _, rule := range plumbing.RefRevParseRules {
		ref := fmt.Sprintf(rule, name)
		for _, d := range dirs {
			if _, err := os.Lstat(filepath.Join(d, filepath.FromSlash(ref))); !errors.Is(err, fs.ErrNotExist) {
				return false
			}
		}
		want[ref] = true
	}
	for _, d := range dirs {
		if !g.packedLacks(d, want) {
			return false
		}
	}
	return true
}

// packedLacks says whether dir's packed-refs (none: no refs) surely names
// none of the refs in want.
func (g *repo) packedLacks(dir string, want map[string]bool) bool {
	lacks := true
	err := scanPacked(dir, func(ref, _ string) bool {
		lacks = !want[ref]
		return lacks
	})
	return err == nil && lacks
}
