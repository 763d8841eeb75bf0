package gitops

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A state file that git tracks is rewound by every checkout of a branch
// holding another copy of it, and deleted by a checkout of one that holds
// none. Untracking it on every branch that carries it ends both: each such
// branch gets one commit that removes the paths from its tree, and the
// worktrees that have the branch checked out drop them from their index,
// keeping the files themselves.

// Carrier is a local branch whose tip tracks some of the state paths.
type Carrier struct {
	Branch string   `json:"branch"`
	Head   string   `json:"head"`
	Paths  []string `json:"paths"`
	// Worktrees are the tops of the worktrees that have the branch checked out.
	Worktrees []string `json:"worktrees,omitempty"`
}

// Carriers lists the local branches of the repository at top whose tips
// track any of paths (relative to top), and the worktrees where each is
// checked out.
func Carriers(top string, paths []string) ([]Carrier, error) {
	refs, err := gitCmd(top, nil, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads")
	if err != nil {
		return nil, err
	}
	checked, err := checkedOut(top)
	if err != nil {
		return nil, err
	}
	var out []Carrier
	for _, line := range strings.Split(refs, "\n") {
		branch, head, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		list, err := gitCmd(top, nil, append([]string{"ls-tree", "--name-only", "--full-tree", head, "--"}, paths...)...)
		if err != nil {
			return nil, err
		}
		if list == "" {
			continue
		}
		out = append(out, Carrier{Branch: branch, Head: head, Paths: strings.Split(list, "\n"), Worktrees: checked[branch]})
	}
	return out, nil
}

// checkedOut maps each branch to the worktrees that have it checked out.
func checkedOut(top string) (map[string][]string, error) {
	list, err := gitCmd(top, nil, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	wt := ""
	for _, line := range strings.Split(list, "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			wt = p
		}
		if b, ok := strings.CutPrefix(line, "branch refs/heads/"); ok && wt != "" {
			out[b] = append(out[b], wt)
		}
	}
	return out, nil
}

// Untrack commits, on c's branch, the removal of c's paths from its tree,
// moving the branch from c.Head only (compare-and-swap), and drops the
// paths from the index of every worktree that has the branch checked out.
// No file in any worktree is changed. It returns the new commit.
func Untrack(top string, c Carrier, message string) (string, error) {
	tmp, err := os.MkdirTemp("", "baton-untrack-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	index := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	if _, err := gitCmd(top, index, "read-tree", c.Head); err != nil {
		return "", err
	}
	if _, err := gitCmd(top, index, append([]string{"update-index", "--force-remove", "--"}, c.Paths...)...); err != nil {
		return "", err
	}
	tree, err := gitCmd(top, index, "write-tree")
	if err != nil {
		return "", err
	}
	commit, err := gitCmd(top, nil, "commit-tree", tree, "-p", c.Head, "-m", message)
	if err != nil {
		return "", err
	}
	if _, err := gitCmd(top, nil, "update-ref", "-m", "baton init: stop tracking the state files", "refs/heads/"+c.Branch, commit, c.Head); err != nil {
		return "", err
	}
	for _, wt := range c.Worktrees {
		// -f: the index entries differ from the new HEAD by design; with
		// --cached it still leaves the files alone
		if _, err := gitCmd(wt, nil, append([]string{"rm", "--cached", "-f", "-q", "--ignore-unmatch", "--"}, c.Paths...)...); err != nil {
			return commit, err
		}
	}
	return commit, nil
}

// gitCmd runs git in dir with the extra environment and returns its
// trimmed output; an error carries git's own message.
func gitCmd(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(cleanGitEnv(os.Environ()), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
