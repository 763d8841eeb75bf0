package gitops

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
)

// looseObject reads the loose object h from the objects directory dir as
// git stores it (objects/xx/rest, zlib-compressed "<type> <size>\0" and the
// content), opening the file directly: go-git's storage resolves the path
// through its chroot, one lstat per component, for every object read (a
// write reads each commit it names). ErrObjectNotFound when there is no
// such file.
func looseObject(dir string, h plumbing.Hash) (plumbing.EncodedObject, error) {
	hx := h.String()
	f, err := openRead(filepath.Join(dir, hx[:2], hx[2:]))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, plumbing.ErrObjectNotFound
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := objfile.NewReader(f)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	t, size, err := r.Header()
	if err != nil {
		return nil, err
	}
	obj := &plumbing.MemoryObject{}
	obj.SetType(t)
	obj.SetSize(size)
	w, err := obj.Writer()
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(w, r); err != nil {
		return nil, err
	}
	return obj, nil
}
