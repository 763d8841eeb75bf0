package gitops

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Git's objects as baton reads and writes them: commits (decoded and
// encoded), annotated tags (peeled), trees (their entries, their files,
// the difference of two). go-git's object package is not linked: it
// brings OpenPGP signature verification and its elliptic-curve tables,
// whose package initialisation every baton command would pay at start.

// ErrMalformedCommit means a commit object lacks what every commit has.
var ErrMalformedCommit = errors.New("malformed commit")

// Signature is who made a commit, and when.
type Signature struct {
	Name, Email string
	When        time.Time
}

// encode writes s as git does: "Name <email> seconds +hhmm", the name and
// email without characters that would break the line (as git strips them).
func (s Signature) encode(w io.Writer) {
	name := identPart(s.Name)
	if name == "" {
		name = "baton"
	}
	fmt.Fprintf(w, "%s <%s> %d %s", name, identPart(s.Email), s.When.Unix(), s.When.Format("-0700"))
}

// decodeSignature reads "Name <email> seconds +hhmm" as git writes it; a
// missing or odd date leaves When zero, as go-git does.
func decodeSignature(b []byte) Signature {
	open := bytes.LastIndexByte(b, '<')
	closing := bytes.LastIndexByte(b, '>')
	if open < 0 || closing < open {
		return Signature{Name: strings.TrimSpace(string(b))}
	}
	s := Signature{Name: strings.TrimSpace(string(b[:open])), Email: string(b[open+1 : closing])}
	fields := strings.Fields(string(b[closing+1:]))
	if len(fields) == 0 {
		return s
	}
	sec, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return s
	}
	s.When = time.Unix(sec, 0).In(time.UTC)
	if len(fields) > 1 && len(fields[1]) == 5 {
		if t, err := time.Parse("-0700", fields[1]); err == nil {
			_, off := t.Zone()
			s.When = s.When.In(time.FixedZone("", off))
		}
	}
	return s
}

// commit is a decoded commit object.
type commit struct {
	Hash, TreeHash    plumbing.Hash
	ParentHashes      []plumbing.Hash
	Author, Committer Signature
	Message           string
}

// decodeCommit reads a commit object: its headers (tree, parents, author,
// committer; others, such as a signature spanning lines, are passed over)
// and, after the blank line, its message.
func decodeCommit(o plumbing.EncodedObject) (*commit, error) {
	if o.Type() != plumbing.CommitObject {
		return nil, plumbing.ErrObjectNotFound
	}
	data, err := readObject(o)
	if err != nil {
		return nil, err
	}
	c := &commit{Hash: o.Hash()}
	sawTree := false
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 {
			c.Message = string(data)
			break
		}
		if line[0] == ' ' {
			continue // a continuation of a header that spans lines (gpgsig, mergetag)
		}
		key, value, _ := bytes.Cut(line, []byte{' '})
		switch string(key) {
		case "tree":
			c.TreeHash, sawTree = plumbing.NewHash(string(value)), true
		case "parent":
			c.ParentHashes = append(c.ParentHashes, plumbing.NewHash(string(value)))
		case "author":
			c.Author = decodeSignature(value)
		case "committer":
			c.Committer = decodeSignature(value)
		}
	}
	if !sawTree {
		return nil, fmt.Errorf("%w: %s has no tree", ErrMalformedCommit, o.Hash())
	}
	return c, nil
}

// encode writes c as a commit object's content.
func (c *commit) encode() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\n", c.TreeHash)
	for _, p := range c.ParentHashes {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	b.WriteString("author ")
	c.Author.encode(&b)
	b.WriteString("\ncommitter ")
	c.Committer.encode(&b)
	b.WriteString("\n\n")
	b.WriteString(c.Message)
	return b.Bytes()
}

// readObject reads an object's whole content.
func readObject(o plumbing.EncodedObject) ([]byte, error) {
	r, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// tagTarget is the object an annotated tag points at, and its type.
func tagTarget(o plumbing.EncodedObject) (plumbing.Hash, plumbing.ObjectType, error) {
	data, err := readObject(o)
	if err != nil {
		return plumbing.ZeroHash, plumbing.InvalidObject, err
	}
	var target plumbing.Hash
	typ := plumbing.InvalidObject
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		if len(line) == 0 {
			break
		}
		key, value, _ := bytes.Cut(line, []byte{' '})
		switch string(key) {
		case "object":
			target = plumbing.NewHash(string(value))
		case "type":
			if typ, err = plumbing.ParseObjectType(string(value)); err != nil {
				return plumbing.ZeroHash, plumbing.InvalidObject, err
			}
		}
	}
	return target, typ, nil
}

// treeEntry is one entry of a tree: a name (a path, once walked), its
// mode and object.
type treeEntry struct {
	Name string
	Mode filemode.FileMode
	Hash plumbing.Hash
}

// readTree reads the entries of tree h ("mode name\0" and 20 bytes of hash
// each).
func (r *repository) readTree(h plumbing.Hash) ([]treeEntry, error) {
	o, err := r.Storer.EncodedObject(plumbing.TreeObject, h)
	if err != nil {
		return nil, err
	}
	data, err := readObject(o)
	if err != nil {
		return nil, err
	}
	var out []treeEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || len(data) < nul+1+len(plumbing.ZeroHash) {
			return nil, fmt.Errorf("malformed tree %s", h)
		}
		mode, err := filemode.New(string(data[:sp]))
		if err != nil {
			return nil, fmt.Errorf("tree %s: %w", h, err)
		}
		e := treeEntry{Name: string(data[sp+1 : nul]), Mode: mode}
		copy(e.Hash[:], data[nul+1:])
		out = append(out, e)
		data = data[nul+1+len(plumbing.ZeroHash):]
	}
	return out, nil
}

// files lists the files of tree h by path: every entry but directories
// (walked into), submodules included, as the index lists them.
func (r *repository) files(h plumbing.Hash, prefix string, out map[string]treeEntry) error {
	entries, err := r.readTree(h)
	if err != nil {
		return err
	}
	for _, e := range entries {
		e.Name = prefix + e.Name
		switch e.Mode {
		case filemode.Dir:
			if err := r.files(e.Hash, e.Name+"/", out); err != nil {
				return err
			}
		default:
			out[e.Name] = e
		}
	}
	return nil
}

// treeChange is a path that differs between two trees: its entry in each
// (Name "" where it is absent).
type treeChange struct {
	From, To treeEntry
}

// diffTrees lists the leaves (files, symlinks, submodules) that differ
// between trees a and b, by path, without looking into subtrees the two
// share; no rename is detected.
func (r *repository) diffTrees(a, b plumbing.Hash, prefix string, out *[]treeChange) error {
	if a == b {
		return nil
	}
	ea, err := r.entriesOf(a)
	if err != nil {
		return err
	}
	eb, err := r.entriesOf(b)
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for n := range ea {
		names[n] = true
	}
	for n := range eb {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		if err := r.diffEntry(ea[n], eb[n], prefix+n, out); err != nil {
			return err
		}
	}
	return nil
}

// entriesOf maps tree h's entries by name (none for the zero hash).
func (r *repository) entriesOf(h plumbing.Hash) (map[string]treeEntry, error) {
	out := map[string]treeEntry{}
	if h.IsZero() {
		return out, nil
	}
	entries, err := r.readTree(h)
	for _, e := range entries {
		out[e.Name] = e
	}
	return out, err
}

// diffEntry adds the changes of one path: two subtrees are compared, a
// subtree against a leaf is the subtree's leaves removed or added and the
// leaf added or removed, two leaves differ by hash or mode.
func (r *repository) diffEntry(a, b treeEntry, path string, out *[]treeChange) error {
	aDir, bDir := a.Name != "" && a.Mode == filemode.Dir, b.Name != "" && b.Mode == filemode.Dir
	var ta, tb plumbing.Hash
	if aDir {
		ta = a.Hash
	}
	if bDir {
		tb = b.Hash
	}
	if aDir || bDir {
		if err := r.diffTrees(ta, tb, path+"/", out); err != nil {
			return err
		}
	}
	var from, to treeEntry
	if a.Name != "" && !aDir {
		from = treeEntry{Name: path, Mode: a.Mode, Hash: a.Hash}
	}
	if b.Name != "" && !bDir {
		to = treeEntry{Name: path, Mode: b.Mode, Hash: b.Hash}
	}
	if (from.Name != "" || to.Name != "") && (from.Hash != to.Hash || from.Mode != to.Mode) {
		*out = append(*out, treeChange{From: from, To: to})
	}
	return nil
}

// blob reads the content of blob h.
func (r *repository) blob(h plumbing.Hash) ([]byte, error) {
	o, err := r.Storer.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, err
	}
	return readObject(o)
}
