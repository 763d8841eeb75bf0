// Package workcopy gives a sandboxed agent a working copy of its own: a
// clone of the project's repository, made outside the project, with the
// session's branch checked out. The clone borrows the main repository's
// objects (git clone --shared: nothing is copied, and the main repository
// is only read), and the agent commits there. Its work comes back through
// Import, which fetches the session's branch, and that branch only, into
// the main repository as a fast-forward.
package workcopy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Copy is one session's working copy.
type Copy struct {
	Dir    string // the clone's top
	Main   string // the main repository's top
	Branch string // the session's branch ("" for none)
	Base   string // the branch the clone starts on when Branch is new, or is empty
	last   string // the branch's head as last imported (or cloned)
}

// hardened are the settings every git command of this package runs with:
// no hooks or file-system monitor of either repository run (the clone's
// configuration is the agent's to write).
var hardened = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "protocol.file.allow=always"}

// Make clones main into dir (which must not exist) and checks out branch:
// the main repository's branch of that name when it has one, else a new
// branch at base (main's branch of work).
func Make(ctx context.Context, main, dir, branch, base string) (*Copy, error) {
	c := &Copy{Dir: dir, Main: main, Branch: branch, Base: base}
	if branch != "" {
		if err := checkBranchName(ctx, branch); err != nil {
			return nil, err
		}
	}
	start := base
	if branch != "" && c.mainHas(ctx, branch) {
		start = branch
	}
	args := []string{"clone", "--shared", "--quiet", "--no-tags"}
	if start != "" {
		args = append(args, "--branch", start)
	}
	if _, err := git(ctx, "", append(args, "--", main, dir)...); err != nil {
		return nil, err
	}
	if branch != "" && start != branch {
		if _, err := git(ctx, dir, "checkout", "--quiet", "-b", branch); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	c.last = c.headOf(branch)
	// the agent commits as the project does (an identity set in the main
	// repository's own config is not cloned)
	for _, k := range []string{"user.name", "user.email"} {
		if v, err := git(ctx, main, "config", "--get", k); err == nil && v != "" {
			if _, err := git(ctx, dir, "config", k, v); err != nil {
				_ = os.RemoveAll(dir)
				return nil, err
			}
		}
	}
	return c, nil
}

// mainHas says whether the main repository has branch.
func (c *Copy) mainHas(ctx context.Context, branch string) bool {
	_, err := git(ctx, c.Main, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	return err == nil
}

// ErrNotFastForward refuses an import that would rewrite the main
// repository's branch.
var ErrNotFastForward = errors.New("not a fast-forward")

// Import fetches the session's branch from the clone into the main
// repository when it moved, as a fast-forward only: a branch rewritten in
// the clone (rebased, reset) is refused and the main repository's stays.
// It never touches another branch. It reports the new head ("" when
// nothing changed).
func (c *Copy) Import(ctx context.Context) (string, error) {
	if c.Branch == "" || c.Branch == c.Base {
		return "", nil
	}
	head := c.headOf(c.Branch)
	if head == "" || head == c.last {
		return "", nil // unchanged, or deleted: nothing to import
	}
	old, _ := git(ctx, c.Main, "rev-parse", "--verify", "--quiet", "refs/heads/"+c.Branch)
	if old == head {
		c.last = head
		return "", nil
	}
	ref := "refs/heads/" + c.Branch
	if _, err := git(ctx, c.Main, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", c.Dir, ref+":"+ref); err != nil {
		if old != "" {
			if _, aerr := git(ctx, c.Main, "merge-base", "--is-ancestor", old, head); aerr != nil {
				return "", fmt.Errorf("%s: %w of %s (its commits are recorded as they were)", c.Branch, ErrNotFastForward, short(old))
			}
		}
		return "", err
	}
	c.last = head
	return head, nil
}

// Head is what the clone has checked out: the commit, and the branch
// ("" when detached or unreadable). It reads the clone's files and runs
// no git.
func (c *Copy) Head() (hash, branch string) {
	b, err := os.ReadFile(filepath.Join(c.Dir, ".git", "HEAD"))
	if err != nil {
		return "", ""
	}
	s := strings.TrimSpace(string(b))
	if ref, ok := strings.CutPrefix(s, "ref: refs/heads/"); ok {
		return c.headOf(ref), ref
	}
	return hexHash(s), ""
}

// headOf reads the commit a branch of the clone points at, from its loose
// ref or packed-refs ("" when it has none or the ref is not a hash).
func (c *Copy) headOf(branch string) string {
	if branch == "" || strings.Contains(branch, "..") {
		return ""
	}
	gd := filepath.Join(c.Dir, ".git")
	if b, err := os.ReadFile(filepath.Join(gd, "refs", "heads", filepath.FromSlash(branch))); err == nil {
		return hexHash(strings.TrimSpace(string(b)))
	}
	b, err := os.ReadFile(filepath.Join(gd, "packed-refs"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if h, ref, ok := strings.Cut(strings.TrimSpace(line), " "); ok && ref == "refs/heads/"+branch {
			return hexHash(h)
		}
	}
	return ""
}

// hexHash is s when it is a full SHA-1 or SHA-256 hash, else "".
func hexHash(s string) string {
	if len(s) != 40 && len(s) != 64 {
		return ""
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return ""
		}
	}
	return s
}

// Remove deletes the clone.
func (c *Copy) Remove() error { return os.RemoveAll(c.Dir) }

// checkBranchName refuses a name git would not take as a branch (or that
// would read as an option).
func checkBranchName(ctx context.Context, name string) error {
	if strings.HasPrefix(name, "-") {
		return fmt.Errorf("%q is not a branch name", name)
	}
	_, err := git(ctx, "", "check-ref-format", "--branch", name)
	return err
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// git runs git in dir (with the hardened settings) and returns its output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, hardened...), args...)...)
	if dir != "" {
		cmd.Dir = dir
	}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// Top is the clone's top for a path inside the main repository: where the
// same relative path lies in the clone (the clone's top when rel is
// outside).
func (c *Copy) Top(path string) string {
	rel, err := filepath.Rel(c.Main, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return c.Dir
	}
	return filepath.Join(c.Dir, rel)
}
