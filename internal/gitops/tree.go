package gitops

import (
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Trees as a checkout update and Changes see them, read with go-git: the
// files of a tree, and what differs between two commits' trees.

// treeEntry is a file of a tree: its path, mode and object.
type treeEntry struct {
	Name string
	Mode filemode.FileMode
	Hash plumbing.Hash
}

// treeChange is a path that differs between two trees: its entry in each
// (Name "" where it is absent).
type treeChange struct {
	From, To treeEntry
}

// files lists the files of tree h by path: every entry but directories
// (walked into), submodules included, as the index lists them.
func (g *repo) files(h plumbing.Hash, prefix string, out map[string]treeEntry) error {
	t, err := g.r.TreeObject(h)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		name := prefix + e.Name
		if e.Mode == filemode.Dir {
			if err := g.files(e.Hash, name+"/", out); err != nil {
				return err
			}
			continue
		}
		out[name] = treeEntry{Name: name, Mode: e.Mode, Hash: e.Hash}
	}
	return nil
}

// commitChanges lists the files (leaves: files, symlinks, submodules) that
// differ between two commits' trees, by path; no rename is detected.
func (g *repo) commitChanges(from, to string) ([]treeChange, error) {
	var trees [2]*object.Tree
	for i, h := range []string{from, to} {
		c, err := g.r.CommitObject(plumbing.NewHash(h))
		if err != nil {
			return nil, err
		}
		if trees[i], err = c.Tree(); err != nil {
			return nil, err
		}
	}
	changes, err := object.DiffTree(trees[0], trees[1])
	if err != nil {
		return nil, err
	}
	out := make([]treeChange, 0, len(changes))
	for _, ch := range changes {
		out = append(out, treeChange{From: entryOf(ch.From), To: entryOf(ch.To)})
	}
	return out, nil
}

// entryOf is one side of a go-git change as a treeEntry.
func entryOf(e object.ChangeEntry) treeEntry {
	if e.Name == "" {
		return treeEntry{}
	}
	return treeEntry{Name: e.Name, Mode: e.TreeEntry.Mode, Hash: e.TreeEntry.Hash}
}

// blob reads the content of blob h.
func (g *repo) blob(h plumbing.Hash) ([]byte, error) {
	b, err := g.r.BlobObject(h)
	if err != nil {
		return nil, err
	}
	rd, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}
