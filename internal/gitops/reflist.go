package gitops

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
)

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
	f, err := openRead(path)
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
