package gitops

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// storage is go-git's filesystem storage of a repository with three
// changes. Packed objects are found through the pack index read in place
// (packs.go), and borrowed ones through alternates opened once (alternates.go):
// the package comment says what go-git's own ways cost. And the config it
// reports leaves out the extensions section, which Open has checked as git
// does (verifyExtensions): go-git refuses extensions that change nothing
// baton reads, such as worktreeConfig, which Claude Code's worktree
// isolation and git sparse-checkout leave behind. baton never writes the
// config through go-git, so nothing is lost.
type storage struct {
	*filesystem.Storage
	packs *packSet // the repository's own packs

	altOnce sync.Once
	alts    []*alternate
}

// newStorage is the storage of the repository Locate found; a linked
// worktree keeps its HEAD and index in its git directory and shares the
// rest in the common one.
func newStorage(loc Location) *storage {
	var fs billy.Filesystem = osfs.New(loc.GitDir)
	if loc.CommonDir != loc.GitDir {
		fs = dotgit.NewRepositoryFilesystem(fs, osfs.New(loc.CommonDir))
	}
	objects := filepath.Join(loc.CommonDir, "objects")
	return &storage{Storage: filesystem.NewStorage(fs, cache.NewObjectLRUDefault()), packs: &packSet{dir: objects}}
}

// Config is the repository's config without its extensions section.
func (s *storage) Config() (*config.Config, error) {
	cfg, err := s.Storage.Config()
	if err != nil || cfg.Raw == nil || !cfg.Raw.HasSection("extensions") {
		return cfg, err
	}
	cfg.Raw.RemoveSection("extensions")
	return cfg, nil
}

// EncodedObject finds object h in the packs, the repository's own and
// borrowed, and otherwise through go-git's storage: a loose object, or a
// pack written since the packs were listed.
func (s *storage) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	for _, ps := range s.packSets() {
		if o, err := ps.get(h); err == nil {
			return typed(o, t)
		} else if !errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, err
		}
	}
	o, err := s.Storage.EncodedObject(t, h)
	if !errors.Is(err, plumbing.ErrObjectNotFound) {
		return o, err
	}
	for _, a := range s.alternates() {
		if a.loose == nil {
			continue
		}
		if o, err := a.loose.EncodedObject(t, h); !errors.Is(err, plumbing.ErrObjectNotFound) {
			return o, err
		}
	}
	return nil, plumbing.ErrObjectNotFound
}

// typed is o if it is of type t (or t is any type), as go-git's storage
// answers.
func typed(o plumbing.EncodedObject, t plumbing.ObjectType) (plumbing.EncodedObject, error) {
	if t != plumbing.AnyObject && o.Type() != t {
		return nil, plumbing.ErrObjectNotFound
	}
	return o, nil
}

// HashesWithPrefix lists the objects, loose and packed, own and borrowed,
// whose hash starts with prefix.
func (s *storage) HashesWithPrefix(prefix []byte) ([]plumbing.Hash, error) {
	var out []plumbing.Hash
	seen := map[plumbing.Hash]bool{}
	for _, ps := range s.packSets() {
		out = ps.withPrefix(prefix, seen, out)
	}
	return out, nil
}

// packSets are the repository's own packs, then those of each alternate.
func (s *storage) packSets() []*packSet {
	sets := []*packSet{s.packs}
	for _, a := range s.alternates() {
		sets = append(sets, a.packs)
	}
	return sets
}

// alternates are the object directories the repository borrows from.
func (s *storage) alternates() []*alternate {
	s.altOnce.Do(func() { s.alts = readAlternates(s.packs.dir, 0, map[string]bool{}) })
	return s.alts
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
