package gitops

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// A repository may borrow objects from others (a 'git clone --shared' or
// '--reference', objects/info/alternates listing their object directories,
// each absolute or relative to the objects directory that lists it). An
// object not found in the repository's own directory is looked up there,
// loose or packed, as git does, alternates of alternates included. go-git
// finds no borrowed object unless it is given a file system to reach them
// through, takes a relative path from that file system's root, and then
// opens each borrowed directory again, pack index included, for every
// object it reads there (the package comment has the figure).

// alternate is one borrowed object directory.
type alternate struct {
	packs *packSet
	loose *filesystem.Storage // go-git's storage for its loose objects; nil when dir is not named objects
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
		a := &alternate{packs: &packSet{dir: line}}
		if filepath.Base(line) == "objects" {
			a.loose = filesystem.NewStorage(osfs.New(filepath.Dir(line)), cache.NewObjectLRUDefault())
		}
		out = append(out, a)
		out = append(out, readAlternates(line, depth+1, seen)...)
	}
	return out
}
