// Package gitops is the only code in baton that touches a git repository.
// go-git is its engine. Everything a command needs from git goes through the
// Repo interface, so that the rules stay testable and the engine replaceable.
package gitops

import (
	"errors"
	"fmt"

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
}

type repo struct{ r *git.Repository }

// Open opens the repository enclosing dir; linked worktrees share their
// main repository's objects and refs.
func Open(dir string) (Repo, error) {
	r, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, ErrNoRepository
	}
	if err != nil {
		return nil, fmt.Errorf("opening the git repository at %s: %w", dir, err)
	}
	return &repo{r: r}, nil
}

func (g *repo) Head() (string, error) {
	ref, err := g.r.Head()
	if err != nil {
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			return "", errors.New("HEAD has no commit yet (unborn branch)")
		}
		return "", fmt.Errorf("reading HEAD: %w", err)
	}
	return ref.Hash().String(), nil
}

func (g *repo) Resolve(rev string) (string, error) {
	h, err := g.r.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return "", fmt.Errorf("revision %q: %w", rev, err)
	}
	return h.String(), nil
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
	r, err := git.PlainOpenWithOptions(top, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
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
