package bridge

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/store"
)

// locked runs fn under the state directory's lock, so that the request
// file, the response file and the checkpoint are read and written by one
// process at a time (two orchestrators, or a host answering while an
// orchestrator resumes, never leave them disagreeing).
func locked(ctx context.Context, dir string, fn func() error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := excludeFromGit(dir); err != nil {
		return err
	}
	s := store.New(dir)
	s.Holder = "baton bridge"
	s.Create = true // a bridge run needs no 'baton init': any directory can hold one
	return s.Update(ctx, func(*store.Tx) error { return fn() })
}

// gitExcludes are the bridge's files as .git/info/exclude patterns: the
// request and response (in the state directory, or a copy in a
// subdirectory), set-aside responses, temp files of atomic writes, and the
// run store. An agent's 'git add -A' never commits them.
var gitExcludes = []string{
	"# baton agent bridge (never committed)",
	RequestFile, ResponseFile, ".agent-response.*.json", "..agent-*", ".baton/bridge/",
}

var excluded sync.Map // git common dir → done

// excludeFromGit adds the bridge's patterns to the info/exclude of the
// repository enclosing dir, once; outside a repository it does nothing.
func excludeFromGit(dir string) error {
	common := gitCommonDir(dir)
	if common == "" {
		return nil
	}
	if _, done := excluded.Load(common); done {
		return nil
	}
	path := filepath.Join(common, "info", "exclude")
	old, err := readIfExists(path)
	if err != nil {
		return err
	}
	if text, added := gitops.WithExcludes(old, gitExcludes[0], gitExcludes[1:]); len(added) > 0 {
		if err := writeAtomic(path, text); err != nil {
			return err
		}
	}
	excluded.Store(common, true)
	return nil
}

// gitCommonDir is the common git directory of the repository enclosing
// dir (the main .git for a linked worktree), or "".
func gitCommonDir(dir string) string {
	loc, err := gitops.Locate(dir)
	if err != nil {
		return ""
	}
	return loc.CommonDir
}

// DefaultMaxRejected is how many set-aside responses a state directory
// keeps; older ones are removed as new ones are set aside.
const DefaultMaxRejected = 20

// pruneRejected removes all but the newest keep set-aside responses in dir.
func pruneRejected(dir string, keep int) error {
	if keep <= 0 {
		keep = DefaultMaxRejected
	}
	m, err := filepath.Glob(filepath.Join(dir, RejectedPattern))
	if err != nil || len(m) <= keep {
		return err
	}
	sort.Slice(m, func(i, j int) bool { return modTime(m[i]) < modTime(m[j]) })
	for _, p := range m[:len(m)-keep] {
		if err := removeIfExists(p); err != nil {
			return err
		}
	}
	return nil
}

func modTime(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.ModTime().UnixNano()
}

// tempFiles are the temp files atomic writes left in dir when a process
// was killed mid-write.
func tempFiles(dir string) []string {
	m, _ := filepath.Glob(filepath.Join(dir, "..agent-*"))
	return m
}
