package gitops

import (
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"dario.cat/mergo"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// repository is the part of go-git's Repository baton uses — HEAD and
// references, commits, branches, the config and revisions — over go-git's
// storage. go-git's own Repository is not linked: its package brings the
// network transports (ssh, http, their crypto and config), whose package
// initialisation every baton command would pay at start. Each method does
// what go-git v5's does.
type repository struct {
	Storer *tolerantStorage
	// noRefNamed, when set, says that git surely has no ref a revision
	// of that name could mean, so that a short hash is not looked up in
	// every ref namespace through go-git (see repo.noRefNamed).
	noRefNamed func(name string) bool

	mu      sync.Mutex
	decoded map[plumbing.Hash]commit // commits read, up to keepDecoded (objects never change)
}

// keepDecoded bounds the commits a repository keeps decoded: a write names
// a few, and reads each of them again to walk the range they bound; a walk
// over a long history keeps no more than these.
const keepDecoded = 256

// ErrRepositoryNotExists is what opening a directory without HEAD gives.
var errRepositoryNotExists = errors.New("repository does not exist")

// openStorage opens the repository in st as go-git's Open does: HEAD must
// exist, and the config's format version and extensions must be ones the
// storage understands.
func openStorage(st *tolerantStorage) (*repository, error) {
	if _, err := st.Reference(plumbing.HEAD); errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, errRepositoryNotExists
	}
	cfg, err := st.Config()
	if err != nil {
		return nil, err
	}
	if err := verifyExtensions(cfg); err != nil {
		return nil, err
	}
	return &repository{Storer: st}, nil
}

// verifyExtensions refuses a repository format or extension baton cannot
// read, as git decides which extensions count: in format version 0 only
// the few git honours there (others are ignored, as git ignores them), in
// version 1 all. worktreeConfig and preciousObjects change nothing baton
// does (it never prunes objects); objectFormat other than SHA-1 and
// partialClone (objects that may be missing) are refused with the reason.
func verifyExtensions(cfg *config.Config) error {
	v := cfg.Core.RepositoryFormatVersion
	switch v {
	case "", "0", "1":
	default:
		return fmt.Errorf("core.repositoryformatversion not supported: %q", v)
	}
	if cfg.Raw == nil || !cfg.Raw.HasSection("extensions") {
		return nil
	}
	honouredInV0 := map[string]bool{"noop": true, "partialclone": true, "preciousobjects": true, "worktreeconfig": true}
	for _, o := range cfg.Raw.Section("extensions").Options {
		name := strings.ToLower(o.Key)
		if (v == "" || v == "0") && !honouredInV0[name] {
			continue
		}
		switch name {
		case "noop", "noop-v1", "worktreeconfig", "preciousobjects":
		case "objectformat":
			if !strings.EqualFold(o.Value, "sha1") {
				return fmt.Errorf("this repository hashes its objects with %s (extensions.objectFormat); baton reads SHA-1 repositories only", o.Value)
			}
		case "partialclone":
			return fmt.Errorf("this repository is a partial clone (extensions.partialClone = %s): objects baton reads may be missing; fetch them all ('git fetch --refetch' without a filter) or clone without --filter", o.Value)
		default:
			return fmt.Errorf("unknown extension: %s (git's extensions.%s, which baton cannot read)", name, o.Key)
		}
	}
	return nil
}

// Head is the reference HEAD resolves to.
func (r *repository) Head() (*plumbing.Reference, error) {
	return storer.ResolveReference(r.Storer, plumbing.HEAD)
}

// Reference returns the reference name, resolved through symbolic
// references when resolved is set.
func (r *repository) Reference(name plumbing.ReferenceName, resolved bool) (*plumbing.Reference, error) {
	if resolved {
		return storer.ResolveReference(r.Storer, name)
	}
	return r.Storer.Reference(name)
}

// CommitObject returns the commit h.
func (r *repository) CommitObject(h plumbing.Hash) (*commit, error) {
	r.mu.Lock()
	c, ok := r.decoded[h]
	r.mu.Unlock()
	if ok {
		return &c, nil
	}
	o, err := r.Storer.EncodedObject(plumbing.CommitObject, h)
	if err != nil {
		return nil, err
	}
	d, err := decodeCommit(o)
	if err != nil {
		return nil, err
	}
	d.ParentHashes = slices.Clip(d.ParentHashes) // an append to a caller's copy never writes into the kept one
	r.mu.Lock()
	if r.decoded == nil {
		r.decoded = map[plumbing.Hash]commit{}
	}
	if len(r.decoded) < keepDecoded {
		r.decoded[h] = *d
	}
	r.mu.Unlock()
	return d, nil
}

// errParentNotFound means a revision asks for a parent a commit lacks.
var errParentNotFound = errors.New("parent commit not found")

// ConfigScoped is the repository's config merged over the config of scope
// (global: the user's; system too) as go-git merges them: a field set in
// the repository's config wins, its raw sections are the repository's own.
func (r *repository) ConfigScoped(scope config.Scope) (*config.Config, error) {
	var err error
	system := config.NewConfig()
	if scope >= config.SystemScope {
		if system, err = config.LoadConfig(config.SystemScope); err != nil {
			return nil, err
		}
	}
	global := config.NewConfig()
	if scope >= config.GlobalScope {
		if global, err = config.LoadConfig(config.GlobalScope); err != nil {
			return nil, err
		}
	}
	local, err := r.Storer.Config()
	if err != nil {
		return nil, err
	}
	_ = mergo.Merge(global, system)
	_ = mergo.Merge(local, global)
	return local, nil
}

// ResolveRevision resolves a revision to a commit: a full or abbreviated
// hash (preferred, as git does), a reference name expanded by git's rules
// (HEAD, refs/…, tags, branches, remotes; "@" is HEAD), an annotated tag
// peeled to its commit, then any number of ~N and ^N steps.
func (r *repository) ResolveRevision(rev plumbing.Revision) (*plumbing.Hash, error) {
	base, steps, err := splitRevision(string(rev))
	if err != nil {
		return nil, err
	}
	c, err := r.commitNamed(base)
	if err != nil {
		return nil, err
	}
	for _, s := range steps {
		if c, err = r.step(c, s); err != nil {
			return nil, err
		}
	}
	return &c.Hash, nil
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
func (r *repository) step(c *commit, s revStep) (*commit, error) {
	if s.tilde {
		for range s.n {
			if len(c.ParentHashes) == 0 {
				return nil, errParentNotFound
			}
			next, err := r.CommitObject(c.ParentHashes[0])
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
	return r.CommitObject(c.ParentHashes[s.n-1])
}

// commitNamed is the commit a revision's name gives, as git's rules give
// it: a full hash is that object; otherwise the reference the name expands
// to, else the one commit (or tag of one) an abbreviated hash names — an
// abbreviation several commits share is ambiguous. Annotated tags are
// peeled.
func (r *repository) commitNamed(name string) (*commit, error) {
	if name == "@" {
		name = "HEAD"
	}
	var try []plumbing.Hash
	if len(name) == 2*len(plumbing.ZeroHash) {
		try = r.hashesWithPrefix(name)
	}
	if r.noRefNamed == nil || !r.noRefNamed(name) {
		for _, rule := range plumbing.RefRevParseRules {
			if ref, err := storer.ResolveReference(r.Storer, plumbing.ReferenceName(fmt.Sprintf(rule, name))); err == nil {
				try = append(try, ref.Hash())
				break
			}
		}
	}
	if len(try) == 0 {
		c, err := r.abbreviated(name)
		if err != nil || c != nil {
			return c, err
		}
	}
	for _, h := range try {
		if c, err := r.CommitObject(h); err == nil {
			return c, nil
		}
		if c, err := r.peelTag(h); err == nil {
			return c, nil
		}
	}
	return nil, plumbing.ErrReferenceNotFound
}

// abbreviated returns the commit an abbreviated hash names (a tag's peeled
// to its commit; nil for none), refusing a hash several commits or tags
// start with.
func (r *repository) abbreviated(name string) (*commit, error) {
	var out []*commit
	if len(name) < 4 {
		return nil, nil // git reads no hash shorter than 4 digits
	}
	for _, h := range r.hashesWithPrefix(name) {
		if c, err := r.CommitObject(h); err == nil {
			out = append(out, c)
		} else if c, err := r.peelTag(h); err == nil {
			out = append(out, c)
		}
	}
	if len(out) > 1 {
		return nil, fmt.Errorf("short hash %s is ambiguous: %d commits start with it; give more of the hash", name, len(out))
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out[0], nil
}

// hashesWithPrefix lists the objects whose hash s (hex, full or
// abbreviated) may name.
func (r *repository) hashesWithPrefix(s string) []plumbing.Hash {
	if s == "" {
		return nil
	}
	if len(s) == 2*len(plumbing.ZeroHash) {
		b, err := hex.DecodeString(s)
		if err != nil {
			return nil
		}
		var h plumbing.Hash
		copy(h[:], b)
		return []plumbing.Hash{h}
	}
	b, err := hex.DecodeString(s[:len(s)&^1])
	if err != nil {
		return nil
	}
	candidates, err := r.Storer.HashesWithPrefix(b)
	if err != nil {
		return nil
	}
	var out []plumbing.Hash
	for _, h := range candidates {
		if strings.HasPrefix(h.String(), s) {
			out = append(out, h)
		}
	}
	return out
}

// peelTag is the commit annotated tag h (or a chain of them) points at.
func (r *repository) peelTag(h plumbing.Hash) (*commit, error) {
	for range 10 {
		o, err := r.Storer.EncodedObject(plumbing.TagObject, h)
		if err != nil {
			return nil, err
		}
		target, typ, err := tagTarget(o)
		if err != nil {
			return nil, err
		}
		if typ == plumbing.CommitObject {
			return r.CommitObject(target)
		}
		if typ != plumbing.TagObject {
			return nil, fmt.Errorf("tag %s points at a %s, not a commit", h, typ)
		}
		h = target
	}
	return nil, fmt.Errorf("tag %s: too many tags of tags", h)
}
