package gitops

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Revisions are resolved here, as 'git rev-parse REV^{commit}' resolves
// them, on go-git's objects and refs. go-git's own ResolveRevision takes
// an abbreviated hash before a ref of that name (git takes the ref),
// resolves an abbreviation several commits share to one of them, and
// answers ^3 with the second parent.

// errParentNotFound means a revision asks for a parent a commit lacks.
var errParentNotFound = errors.New("parent commit not found")

// resolveRevision resolves a revision to a commit: a full or abbreviated
// hash, a reference name expanded by git's rules (HEAD, refs/…, tags,
// branches, remotes; "@" is HEAD), an annotated tag peeled to its commit,
// then any number of ~N and ^N steps.
func (g *repo) resolveRevision(rev string) (*object.Commit, error) {
	base, steps, err := splitRevision(rev)
	if err != nil {
		return nil, err
	}
	c, err := g.commitNamed(base)
	if err != nil {
		return nil, err
	}
	for _, s := range steps {
		if c, err = g.step(c, s); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// revStep is one ~N (tilde) or ^N step of a revision.
type revStep struct {
	tilde bool
	n     int
}

// splitRevision cuts a revision into its name and its ~N and ^N steps
// (~ and ^ alone are 1).
func splitRevision(rev string) (string, []revStep, error) {
	i := strings.IndexAny(rev, "~^")
	if i < 0 {
		i = len(rev)
	}
	base, rest := rev[:i], rev[i:]
	if base == "" {
		return "", nil, plumbing.ErrReferenceNotFound
	}
	var steps []revStep
	for rest != "" {
		s := revStep{tilde: rest[0] == '~', n: 1}
		rest = rest[1:]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j > 0 {
			n, err := strconv.Atoi(rest[:j])
			if err != nil {
				return "", nil, fmt.Errorf("revision %q: %w", rev, err)
			}
			s.n = n
		}
		if j < len(rest) && rest[j] != '~' && rest[j] != '^' {
			return "", nil, fmt.Errorf("revision %q: unsupported syntax %q", rev, rest[j:])
		}
		rest = rest[j:]
		steps = append(steps, s)
	}
	return base, steps, nil
}

// step takes one ~N (the Nth first parent) or ^N (the Nth parent; ^0 the
// commit itself) step from c.
func (g *repo) step(c *object.Commit, s revStep) (*object.Commit, error) {
	if s.tilde {
		for range s.n {
			if len(c.ParentHashes) == 0 {
				return nil, errParentNotFound
			}
			next, err := g.r.CommitObject(c.ParentHashes[0])
			if err != nil {
				return nil, err
			}
			c = next
		}
		return c, nil
	}
	if s.n == 0 {
		return c, nil
	}
	if s.n > len(c.ParentHashes) {
		return nil, errParentNotFound
	}
	return g.r.CommitObject(c.ParentHashes[s.n-1])
}

// commitNamed is the commit a revision's name gives, as git's rules give
// it: a full hash is that object; otherwise the reference the name expands
// to, else the one commit (or tag of one) an abbreviated hash names — an
// abbreviation several commits share is ambiguous. Annotated tags are
// peeled.
func (g *repo) commitNamed(name string) (*object.Commit, error) {
	if name == "@" {
		name = "HEAD"
	}
	if len(name) == 2*len(plumbing.ZeroHash) && plumbing.IsHash(name) {
		return g.peeled(plumbing.NewHash(name))
	}
	for _, rule := range plumbing.RefRevParseRules {
		if ref, err := storer.ResolveReference(g.r.Storer, plumbing.ReferenceName(fmt.Sprintf(rule, name))); err == nil {
			return g.peeled(ref.Hash())
		}
	}
	return g.abbreviated(name)
}

// abbreviated returns the commit an abbreviated hash names (a tag's peeled
// to its commit), refusing a hash several commits or tags start with.
func (g *repo) abbreviated(name string) (*object.Commit, error) {
	if len(name) < 4 || len(name) > 2*len(plumbing.ZeroHash) || strings.Trim(name, "0123456789abcdefABCDEF") != "" {
		return nil, plumbing.ErrReferenceNotFound // git reads no hash shorter than 4 digits
	}
	name = strings.ToLower(name)
	b, err := hex.DecodeString(name[:len(name)&^1])
	if err != nil {
		return nil, plumbing.ErrReferenceNotFound
	}
	candidates, err := g.st.HashesWithPrefix(b)
	if err != nil {
		return nil, err
	}
	var out []*object.Commit
	for _, h := range candidates {
		if !strings.HasPrefix(h.String(), name) {
			continue
		}
		if c, err := g.peeled(h); err == nil {
			out = append(out, c)
		}
	}
	switch len(out) {
	case 0:
		return nil, plumbing.ErrReferenceNotFound
	case 1:
		return out[0], nil
	}
	return nil, fmt.Errorf("short hash %s is ambiguous: %d commits start with it; give more of the hash", name, len(out))
}

// peeled is the commit h is, or the commit the annotated tag h (or a chain
// of them) points at.
func (g *repo) peeled(h plumbing.Hash) (*object.Commit, error) {
	for range 10 {
		o, err := g.st.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return nil, err
		}
		switch o.Type() {
		case plumbing.CommitObject:
			return object.DecodeCommit(g.st, o)
		case plumbing.TagObject:
			t, err := object.DecodeTag(g.st, o)
			if err != nil {
				return nil, err
			}
			h = t.Target
		default:
			return nil, fmt.Errorf("%s is a %s, not a commit", h, o.Type())
		}
	}
	return nil, fmt.Errorf("tag %s: too many tags of tags", h)
}
