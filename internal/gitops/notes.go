package gitops

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Notes in git's format: a notes ref (refs/notes/NAME) points at a commit
// whose tree maps an annotated object's hash to a blob, the note. The
// hash is the entry's path with its slashes removed: git fans the tree out
// into directories of the hash's first digits as it grows, and reads both
// forms. go-git writes blobs, trees and commits, so baton writes notes
// itself, and moves the ref by compare-and-swap as it moves branches.

// Notes returns every note under ref, by the full hash of the object it
// annotates (empty when the ref does not exist).
func Notes(r Repo, ref string) (map[string][]byte, error) {
	g, ok := r.(*repo)
	if !ok {
		return nil, errors.New("notes: not a repository opened by gitops")
	}
	_, tree, err := g.notesTree(ref)
	if err != nil || tree == nil {
		return map[string][]byte{}, err
	}
	out := map[string][]byte{}
	err = tree.Files().ForEach(func(f *object.File) error {
		obj := strings.ReplaceAll(f.Name, "/", "")
		if len(obj) != 40 || !plumbing.IsHash(obj) {
			return nil // not a note: git passes such entries over too
		}
		rd, err := f.Reader()
		if err != nil {
			return err
		}
		defer rd.Close()
		b, err := io.ReadAll(rd)
		out[obj] = b
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the notes of %s: %w", ref, err)
	}
	return out, nil
}

// notesTree returns the commit ref points at and its tree (nil, nil for no
// ref).
func (g *repo) notesTree(ref string) (string, *object.Tree, error) {
	at, found, err := g.readRef(ref, 0)
	if err != nil || !found {
		return "", nil, err
	}
	c, err := g.r.CommitObject(plumbing.NewHash(at))
	if err != nil {
		return "", nil, fmt.Errorf("the notes ref %s: %w", ref, err)
	}
	t, err := c.Tree()
	if err != nil {
		return "", nil, fmt.Errorf("the notes ref %s: %w", ref, err)
	}
	return at, t, nil
}

// AddNote sets the note of object under ref to content (replacing any it
// had), as one new commit of the notes ref, moved from where it was read
// (compare-and-swap: ErrRefMoved when another writer moved it meanwhile).
func AddNote(r Repo, ref, target string, content []byte, who Signature) error {
	g, ok := r.(*repo)
	if !ok {
		return errors.New("notes: not a repository opened by gitops")
	}
	if len(target) != 40 || !plumbing.IsHash(target) {
		return fmt.Errorf("a note annotates a full object hash, not %q", target)
	}
	old, tree, err := g.notesTree(ref)
	if err != nil {
		return err
	}
	blob, err := g.writeBlob(content)
	if err != nil {
		return err
	}
	entries := []object.TreeEntry{{Name: target, Mode: filemode.Regular, Hash: blob}}
	if tree != nil {
		kept, err := g.notesWithout(tree, target, "")
		if err != nil {
			return err
		}
		entries = append(entries, kept...)
	}
	root, err := g.writeTree(entries)
	if err != nil {
		return err
	}
	var parents []string
	if old != "" {
		parents = []string{old}
	}
	commit, err := g.writeCommit(root, parents, "Notes added by 'baton'\n", who, Signature{}, nil)
	if err != nil {
		return err
	}
	g.clearKilledWrites()
	return g.writeRef(ref, old, commit, "notes: Notes added by 'baton'")
}

// notesWithout is t's entries without target's note, wherever it was
// (flat, or fanned out under prefix): the new note goes in flat, and no
// object keeps two.
func (g *repo) notesWithout(t *object.Tree, target, prefix string) ([]object.TreeEntry, error) {
	var out []object.TreeEntry
	for _, e := range t.Entries {
		full := prefix + e.Name
		switch {
		case e.Mode == filemode.Dir && strings.HasPrefix(target, full):
			sub, err := g.r.TreeObject(e.Hash)
			if err != nil {
				return nil, err
			}
			kept, err := g.notesWithout(sub, target, full)
			if err != nil {
				return nil, err
			}
			if len(kept) == 0 {
				continue
			}
			h, err := g.writeTree(kept)
			if err != nil {
				return nil, err
			}
			e.Hash = h
		case full == target:
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

// writeBlob stores content as a blob.
func (g *repo) writeBlob(content []byte) (plumbing.Hash, error) {
	obj := g.r.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(content); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return g.r.Storer.SetEncodedObject(obj)
}

// writeTree stores a tree of entries, sorted as git sorts them (a
// directory's name as if it ended in '/').
func (g *repo) writeTree(entries []object.TreeEntry) (plumbing.Hash, error) {
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
	t := &object.Tree{Entries: entries}
	obj := g.r.Storer.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return g.r.Storer.SetEncodedObject(obj)
}

// Parents lists a commit's parents, first parent first.
func Parents(r Repo, commit string) ([]string, error) {
	g, ok := r.(*repo)
	if !ok {
		return nil, errors.New("parents: not a repository opened by gitops")
	}
	c, err := g.r.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", Short(commit), err)
	}
	out := make([]string, len(c.ParentHashes))
	for i, p := range c.ParentHashes {
		out[i] = p.String()
	}
	return out, nil
}
