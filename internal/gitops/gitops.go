// Package gitops is the only code in baton that touches a git repository.
// go-git reads it: references, commits, trees, the index, the config. The
// git CLI does what go-git does not: the three-way merge ('git merge-tree
// --write-tree'), and the checkout update where attributes convert files
// ('git read-tree -m -u'). Above go-git, baton does what git does and
// go-git does differently: refs read and listed as git reads them
// (reflist.go), revisions (revision.go), walks that stop as soon as the
// answer is known (walk.go), ref, lock and index writes a kill cannot tear
// (refs.go, staging.go, index.go), and the checkout update (merge.go).
//
// One piece stands in for go-git's reading: the pack index, read in place
// (packs.go) and used by go-git's pack reader. go-git loads a pack's whole
// index, checksums it and maps every offset to its object before the first
// object it reads. On bench/gitbench's repository of 100,000 commits
// (573,000 objects) that made every command reading a commit take 240 to
// 270 ms (session end 239 ms, reviews add-review 242 ms, reviews add-fix
// 263 ms, median wall time), against 20 to 40 ms with the index read in
// place. Borrowed objects (alternates.go) are read the same way: through
// go-git's own alternates a 10-commit range in a 'git clone --shared' of
// that repository took 3.2 s, against 5 ms.
package gitops

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
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
	// CommitSignature returns a commit's signature (its gpgsig header, ""
	// for none) and the content the signature signs.
	CommitSignature(commit string) (string, []byte, error)
	// Changes lists the files whose content or mode differ between two
	// commits' trees.
	Changes(from, to string) ([]Change, error)
	// CleanMergeTree returns the tree a clean merge of head into into
	// gives (head's own tree when into is its ancestor); a
	// *ConflictError when the two do not merge cleanly.
	CleanMergeTree(into, head string) (string, error)
	// PlanMerge writes, moving no ref, the commit a clean merge of head
	// into into makes, for merges planned on top of it; see PlanMerge.
	PlanMerge(into, head string, ff bool) (commit, tree string, err error)
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
	return "", "", fmt.Errorf("%w: %s (a person sets main_branch in the project's configuration)", ErrNoBranch, strings.Join(candidates, " or "))
}

type repo struct {
	r   *git.Repository
	st  *storage
	loc Location
}

// Open opens the repository enclosing dir; linked worktrees share their
// main repository's objects and refs.
func Open(dir string) (Repo, error) {
	loc, err := Locate(dir)
	if err != nil {
		return nil, err
	}
	st := newStorage(loc)
	cfg, err := st.Storage.Config()
	if err == nil {
		err = verifyExtensions(cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the git repository at %s: %w", loc.Top, err)
	}
	r, err := git.Open(st, nil)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, ErrNoRepository
	}
	if err != nil {
		return nil, fmt.Errorf("opening the git repository at %s: %w", loc.Top, err)
	}
	return &repo{r: r, st: st, loc: loc}, nil
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

func (g *repo) Head() (string, error) {
	branch, hash, err := g.readHead()
	switch {
	case err != nil:
		return "", err
	case branch == "":
		return hash, nil
	}
	h, err := g.Branch(branch)
	if errors.Is(err, ErrNoBranch) {
		return "", errors.New("HEAD has no commit yet (unborn branch)")
	}
	return h, err
}

func (g *repo) Top() string { return g.loc.Top }

func (g *repo) CurrentBranch() (string, error) {
	branch, _, err := g.readHead()
	return branch, err
}

// readHead reads HEAD as go-git's storage has it: the branch it names, or
// (detached, branch "") the commit it holds.
func (g *repo) readHead() (branch, hash string, err error) {
	ref, err := g.r.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return "", "", fmt.Errorf("reading HEAD: %w", err)
	}
	if ref.Type() == plumbing.HashReference {
		return "", ref.Hash().String(), nil
	}
	name, ok := strings.CutPrefix(ref.Target().String(), "refs/heads/")
	if !ok || !validBranch(name) {
		return "", "", fmt.Errorf("HEAD points at %s, which is no branch", ref.Target())
	}
	return name, "", nil
}

func (g *repo) Resolve(rev string) (string, error) {
	c, err := g.resolveRevision(rev)
	if err != nil {
		return "", fmt.Errorf("revision %q: %w", rev, err)
	}
	return c.Hash.String(), nil
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
	loc, err := Locate(top)
	if err != nil {
		return nil, err
	}
	idx, err := readIndex(filepath.Join(loc.GitDir, "index"))
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
	return h, nil
}

// Commit is a commit as baton records it.
type Commit struct {
	Hash    string
	Subject string
	Parents []string
}
