package gitops

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// A repository may borrow objects from others (a 'git clone --shared' or
// '--reference', objects/info/alternates listing their object directories,
// each absolute or relative to the objects directory that lists it). An
// object not found in the repository's own directory is looked up there,
// loose or packed, as git does, alternates of alternates included.

// alternate is one borrowed object directory.
type alternate struct {
	dir   string
	packs *packSet
}

// readAlternates lists the object directories objects borrows from, in
// order, following their own alternates up to git's depth of five.
func readAlternates(objects string, depth int, seen map[string]bool) []*alternate {
	f, err := os.Open(filepath.Join(objects, "info", "alternates"))
	if err != nil || depth > 5 {
		return nil
	}
	defer f.Close()
	var out []*alternate
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(objects, line)
		}
		line = filepath.Clean(line)
		if seen[line] {
			continue
		}
		seen[line] = true
		if fi, err := os.Stat(line); err != nil || !fi.IsDir() {
			continue // git warns and goes on
		}
		out = append(out, &alternate{dir: line, packs: &packSet{dir: line}})
		out = append(out, readAlternates(line, depth+1, seen)...)
	}
	return out
}

// get reads object h from the borrowed directory: its packs, then loose.
func (a *alternate) get(h plumbing.Hash) (plumbing.EncodedObject, error) {
	if o, err := a.packs.get(h); err == nil {
		return o, nil
	}
	return looseObject(a.dir, h)
}

// fromAlternates looks h up in the borrowed directories.
func (s *tolerantStorage) fromAlternates(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	s.altOnce.Do(func() { s.alts = readAlternates(s.packs.dir, 0, map[string]bool{}) })
	for _, a := range s.alts {
		o, err := a.get(h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			continue
		}
		if err == nil && t != plumbing.AnyObject && o.Type() != t {
			return nil, plumbing.ErrObjectNotFound
		}
		return o, err
	}
	return nil, plumbing.ErrObjectNotFound
}
