// Package gitops is the only code in baton that touches a git repository.
// go-git's storage is its engine (loose and packed objects, references,
// the index, the config); the repository, the objects and the walks above
// it are baton's own (repository.go, objects.go, walk.go), so that no
// package baton links pays a heavy initialisation at start. Everything a
// command needs from git goes through the Repo interface, so that the rules
// stay testable and the engine replaceable.
package gitops

import (
	"errors"
	"fmt"
	"os"
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

// ErrNoRepository means the directory is not inside a git repository.
var ErrNoRepository = errors.New("not inside a git repository")

// Repo is what baton asks of a repository.
type Repo interface {
	// Head returns the full hash HEAD points at; an unborn branch is an error.
	Head() (string, error)
	// Resolve returns the full hash of a revision (a hash, branch or tag).
	Resolve(rev string) (string, error)
	// Range lists the commits of `git rev-list from..to`, oldest first.
	Range(from, to string) ([]Commit, error)
	// IsAncestor reports whether a is an ancestor of b (or b itself).
	IsAncestor(a, b string) (bool, error)
	// MergeBase returns the best common ancestor of a and b.
	MergeBase(a, b string) (string, error)
	// TreeOf returns the full hash of a commit's tree.
	TreeOf(commit string) (string, error)
	// Message returns a commit's whole message.
	Message(commit string) (string, error)
	// Changes lists the files whose content or mode differ between two
	// commits' trees.
	Changes(from, to string) ([]Change, error)
	// CleanMergeTree returns the tree a clean merge of head into into
	// gives (head's own tree when into is its ancestor); a
	// *ConflictError when the two do not merge cleanly.
	CleanMergeTree(into, head string) (string, error)
	// Branch returns the commit a branch points at (ErrNoBranch).
	Branch(name string) (string, error)
	// CurrentBranch names the branch checked out here ("" when detached).
	CurrentBranch() (string, error)
	// CreateBranch creates a branch at a commit; it must not exist.
	CreateBranch(name, at string) error
	// DeleteBranch removes a branch if it still points at expect.
	DeleteBranch(name, expect string) error
	// Merge merges a branch into another; see MergeOptions.
	Merge(o MergeOptions) (MergeResult, error)
	// Top is the top of the worktree the repository was opened from.
	Top() string
}

// MainBranch picks the branch work merges into: the configured one, else
// main, else master.
func MainBranch(r Repo, configured string) (string, error) {
	name, _, err := MainBranchAt(r, configured)
	return name, err
}

// MainBranchAt is MainBranch with the commit the branch is at, read once.
func MainBranchAt(r Repo, configured string) (name, head string, err error) {
	candidates := []string{"main", "master"}
	if configured != "" {
		candidates = []string{configured}
	}
	for _, b := range candidates {
		if h, err := r.Branch(b); err == nil {
			return b, h, nil
		}
	}
	return "", "", fmt.Errorf("%w: %s (set main_branch in .baton/config)", ErrNoBranch, strings.Join(candidates, " or "))
}

type repo struct {
	r   *repository
	loc Location

	mu      sync.Mutex
	commits map[plumbing.Hash]bool // full hashes read as commits (objects never change)
}

// Open opens the repository enclosing dir; linked worktrees share their
// main repository's objects and refs.
func Open(dir string) (Repo, error) {
	loc, err := Locate(dir)
	if err != nil {
		return nil, err
	}
	r, err := openLocated(loc)
	if err != nil {
		return nil, err
	}
	g := &repo{r: r, loc: loc}
	r.noRefNamed = g.noRefNamed
	return g, nil
}

// Location is where a repository's parts are: the worktree's top, its git
// directory, and the common directory holding objects and refs (the same as
// GitDir except in a linked worktree).
type Location struct {
	Top, GitDir, CommonDir string
}

// Locate finds the repository enclosing dir by its .git entry, following
// a linked worktree's .git file and commondir. As for git, a .git entry that
// is not a repository (a directory without HEAD, say one holding only
// info/exclude) is passed over.
func Locate(dir string) (Location, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Location{}, err
	}
	for d := abs; ; d = filepath.Dir(d) {
		dotGit := filepath.Join(d, ".git")
		fi, err := os.Stat(dotGit)
		if err == nil && (!fi.IsDir() || hasHead(dotGit)) {
			loc := Location{Top: d, GitDir: dotGit}
			if !fi.IsDir() {
				b, err := os.ReadFile(dotGit)
				if err != nil {
					return loc, err
				}
				gd := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(b)), "gitdir:"))
				if !filepath.IsAbs(gd) {
					gd = filepath.Join(d, gd)
				}
				loc.GitDir = filepath.Clean(gd)
			}
			loc.CommonDir = loc.GitDir
			if c, err := os.ReadFile(filepath.Join(loc.GitDir, "commondir")); err == nil {
				cd := strings.TrimSpace(string(c))
				if !filepath.IsAbs(cd) {
					cd = filepath.Join(loc.GitDir, cd)
				}
				loc.CommonDir = filepath.Clean(cd)
			}
			return loc, nil
		}
		if filepath.Dir(d) == d {
			return Location{}, ErrNoRepository
		}
	}
}

// hasHead reports whether gitDir holds a HEAD, as every repository does.
func hasHead(gitDir string) bool {
	fi, err := os.Stat(filepath.Join(gitDir, "HEAD"))
	return err == nil && fi.Mode().IsRegular()
}

// openRepository opens the repository with go-git's storage. The storer hides the
// worktreeConfig extension from go-git's check: go-git v5.17+ refuses any
// repository that has it (left by Claude Code's worktree isolation and by
// git sparse-checkout), although nothing baton reads depends on it.
func openRepository(dir string) (*repository, error) {
	loc, err := Locate(dir)
	if err != nil {
		return nil, err
	}
	return openLocated(loc)
}

// openLocated is openRepository of the repository Locate found.
func openLocated(loc Location) (*repository, error) {
	var fs billy.Filesystem = osfs.New(loc.GitDir)
	if loc.CommonDir != loc.GitDir {
		fs = dotgit.NewRepositoryFilesystem(fs, osfs.New(loc.CommonDir))
	}
	st := &tolerantStorage{Storage: filesystem.NewStorage(fs, cache.NewObjectLRUDefault()), packs: &packSet{dir: filepath.Join(loc.CommonDir, "objects")}}
	r, err := openStorage(st)
	if errors.Is(err, errRepositoryNotExists) {
		return nil, ErrNoRepository
	}
	if err != nil {
		return nil, fmt.Errorf("opening the git repository at %s: %w", loc.Top, err)
	}
	return r, nil
}

// tolerantStorage is go-git's filesystem storage with the worktreeConfig
// extension left out of the config it reports (baton never writes the
// repository's config through go-git, so nothing is lost), and packed
// objects looked up without loading the whole pack index.
type tolerantStorage struct {
	*filesystem.Storage
	packs *packSet // packed objects read as git reads them (packs.go)

	altOnce sync.Once
	alts    []*alternate // borrowed object directories (alternates.go)
}

func (s *tolerantStorage) Config() (*config.Config, error) {
	cfg, err := s.Storage.Config()
	if err != nil || cfg.Raw == nil || !cfg.Raw.HasSection("extensions") {
		return cfg, err
	}
	sec := cfg.Raw.Section("extensions")
	for _, o := range sec.Options {
		if strings.EqualFold(o.Key, "worktreeConfig") {
			sec.RemoveOption(o.Key)
			break
		}
	}
	return cfg, nil
}

func (g *repo) Head() (string, error) {
	if _, h, found, sure := g.readHead(); sure {
		if !found {
			return "", errors.New("HEAD has no commit yet (unborn branch)")
		}
		return h, nil
	}
	ref, err := g.r.Head()
	if err != nil {
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			return "", errors.New("HEAD has no commit yet (unborn branch)")
		}
		return "", fmt.Errorf("reading HEAD: %w", err)
	}
	return ref.Hash().String(), nil
}

func (g *repo) Top() string { return g.loc.Top }

func (g *repo) CurrentBranch() (string, error) {
	if b, err := readFile(filepath.Join(g.loc.GitDir, "HEAD")); err == nil {
		if _, detached := hashLine(b); detached {
			return "", nil
		}
		if name, ok := strings.CutPrefix(strings.TrimRight(string(b), "\r\n"), "ref: refs/heads/"); ok && plumbing.NewBranchReferenceName(name).Validate() == nil {
			return name, nil
		}
	}
	ref, err := g.r.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return "", err
	}
	if ref.Type() != plumbing.SymbolicReference {
		return "", nil
	}
	return ref.Target().Short(), nil
}

func (g *repo) Resolve(rev string) (string, error) {
	if h, ok := g.commitByHash(rev); ok {
		return h, nil
	}
	h, err := g.r.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return "", fmt.Errorf("revision %q: %w", rev, err)
	}
	g.mu.Lock()
	if g.commits == nil {
		g.commits = map[plumbing.Hash]bool{}
	}
	g.commits[*h] = true // a revision resolves to a commit, read as one
	g.mu.Unlock()
	return h.String(), nil
}

// commitByHash resolves a full hash, the form every recorded commit takes,
// by reading that commit, once per process: go-git's ResolveRevision would
// parse it as a revision and look for a ref of that name in every ref
// namespace first. git, too, takes a full hash as the object before any ref.
// false when rev is no full hash or names no commit (Resolve then goes the
// general way, with its errors).
func (g *repo) commitByHash(rev string) (string, bool) {
	if len(rev) != 2*len(plumbing.ZeroHash) || !plumbing.IsHash(rev) {
		return "", false
	}
	h := plumbing.NewHash(rev)
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.commits[h] {
		if _, err := g.r.CommitObject(h); err != nil {
			return "", false
		}
		if g.commits == nil {
			g.commits = map[plumbing.Hash]bool{}
		}
		g.commits[h] = true
	}
	return h.String(), true
}

// Short abbreviates a full hash as `git rev-parse --short` does by default.
func Short(hash string) string {
	if len(hash) > 7 {
		return hash[:7]
	}
	return hash
}

// Tracked returns which of paths (relative to the worktree top) are in the
// index of the repository at top.
func Tracked(top string, paths []string) ([]string, error) {
	r, err := openRepository(top)
	if err != nil {
		return nil, err
	}
	idx, err := r.Storer.Index()
	if err != nil {
		return nil, err
	}
	in := map[string]bool{}
	for _, e := range idx.Entries {
		in[e.Name] = true
	}
	var out []string
	for _, p := range paths {
		if in[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

// ErrUnknownRevision means a revision names no commit in the repository.
var ErrUnknownRevision = errors.New("no such commit")

// ErrUnsupportedRevision means a revision uses syntax go-git resolves
// wrongly or not at all (reflog @{1}, @{upstream}, peeling ^{tree}, paths).
var ErrUnsupportedRevision = errors.New("unsupported revision syntax")

// CheckRevision refuses revision syntax that would be resolved wrongly.
func CheckRevision(rev string) error {
	for _, bad := range []string{"@{", "^{", ":", ".."} {
		if strings.Contains(rev, bad) {
			return fmt.Errorf("%w: %q (give a commit hash, a branch or a tag, optionally with ~N or ^N)", ErrUnsupportedRevision, rev)
		}
	}
	return nil
}

// ResolveCommit resolves rev to the full hash of an existing commit.
func ResolveCommit(r Repo, rev string) (string, error) {
	if err := CheckRevision(rev); err != nil {
		return "", err
	}
	h, err := r.Resolve(rev)
	if err != nil {
		return "", fmt.Errorf("%w: %q", ErrUnknownRevision, rev)
	}
	g, ok := r.(*repo)
	if !ok {
		return h, nil
	}
	if _, ok := g.commitByHash(h); !ok {
		return "", fmt.Errorf("%w: %q is not a commit", ErrUnknownRevision, rev)
	}
	return h, nil
}

// Commit is a commit as baton records it.
type Commit struct {
	Hash    string
	Subject string
	Parents []string
}
