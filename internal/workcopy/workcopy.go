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
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// Copy is one session's working copy.
type Copy struct {
	Dir    string // the clone's top
	Main   string // the main repository's top
	Branch string // the session's branch ("" for none)
	Base   string // the branch the clone starts on when Branch is new, or is empty
	last   string // the branch's head as last imported (or cloned)
	start  string // the branch's head in the main repository when the copy was made ("": a new branch)
}

// hardened are the settings every git command of this package runs with:
// no hooks or file-system monitor of either repository run (the clone's
// configuration is the agent's to write).
var hardened = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "protocol.file.allow=always"}

// Source is the main repository a working copy is made from, as its caller
// read it.
type Source struct {
	Top       string            // the main repository's top
	CommonDir string            // its git directory (its objects are borrowed, never written)
	Heads     map[string]string // its branches: name → commit (at least the base's and the session's)
	Name      string            // the committer identity the project uses
	Email     string
}

// Make clones src into dir (which must not exist) and checks out branch:
// the main repository's branch of that name when it has one, else a new
// branch at base (main's branch of work).
//
// The clone is what 'git clone --shared' makes — the objects borrowed
// through objects/info/alternates, the main repository's branches as
// origin's, its identity — written directly, and one git process checks
// the branch out: a session's set-up is a few milliseconds.
func Make(ctx context.Context, src Source, dir, branch, base string) (*Copy, error) {
	c := &Copy{Dir: filepath.Clean(dir), Main: src.Top, Branch: branch, Base: base}
	if branch != "" && !validBranch(branch) {
		return nil, fmt.Errorf("%q is not a branch name", branch)
	}
	start := src.Heads[base]
	if h, ok := src.Heads[branch]; ok && branch != "" {
		start, c.start = h, h
	}
	if hexHash(start) == "" {
		return nil, fmt.Errorf("the main repository has no branch %q to start from", base)
	}
	if err := c.write(src, start); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if _, err := git(ctx, dir, "reset", "--quiet", "--hard"); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(c.Dir); err == nil {
		c.Dir = real // readFile compares the paths it reads with their real ones
	}
	c.last = c.headOf(branch)
	return c, nil
}

// write makes the clone's git directory: HEAD on the session's branch (or
// on base), the main repository's branches as origin's, its objects
// borrowed, and its identity and object format.
func (c *Copy) write(src Source, start string) error {
	gd := filepath.Join(c.Dir, ".git")
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags", "refs/remotes/origin", "info"} {
		if err := os.MkdirAll(filepath.Join(gd, filepath.FromSlash(d)), 0o755); err != nil {
			return err
		}
	}
	local := c.Branch
	if local == "" {
		local = c.Base
	}
	names := make([]string, 0, len(src.Heads))
	for n := range src.Heads {
		if validBranch(n) && hexHash(src.Heads[n]) != "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var packed strings.Builder
	packed.WriteString("# pack-refs with: peeled fully-peeled sorted \n")
	for _, n := range names {
		fmt.Fprintf(&packed, "%s refs/remotes/origin/%s\n", src.Heads[n], n)
	}
	files := map[string]string{
		"HEAD":                    "ref: refs/heads/" + local + "\n",
		"config":                  c.config(src, len(start) == 64),
		"packed-refs":             packed.String(),
		"objects/info/alternates": filepath.Join(src.CommonDir, "objects") + "\n",
		"refs/heads/" + local:     start + "\n",
	}
	if h := src.Heads[c.Base]; local != c.Base && hexHash(h) != "" {
		files["refs/heads/"+c.Base] = h + "\n" // main, to compare with (never imported)
	}
	for name, text := range files {
		p := filepath.Join(gd, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// config is the clone's configuration: origin is the main repository; the
// object format and committer identity are the main repository's (an
// identity set in its own config would not otherwise reach the clone).
func (c *Copy) config(src Source, sha256 bool) string {
	var b strings.Builder
	version := 0
	if sha256 {
		version = 1
	}
	fmt.Fprintf(&b, "[core]\n\trepositoryformatversion = %d\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n", version)
	if sha256 {
		b.WriteString("[extensions]\n\tobjectformat = sha256\n")
	}
	fmt.Fprintf(&b, "[remote \"origin\"]\n\turl = %s\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n", quote(src.Top))
	if src.Name != "" || src.Email != "" {
		b.WriteString("[user]\n")
		if src.Name != "" {
			fmt.Fprintf(&b, "\tname = %s\n", quote(src.Name))
		}
		if src.Email != "" {
			fmt.Fprintf(&b, "\temail = %s\n", quote(src.Email))
		}
	}
	return b.String()
}

// quote writes a git config value as a quoted string.
func quote(v string) string {
	v = strings.ReplaceAll(v, `\`, `\\`)
	v = strings.ReplaceAll(v, `"`, `\"`)
	return `"` + strings.ReplaceAll(v, "\n", `\n`) + `"`
}

// validBranch says whether name is a branch name git takes (the rules of
// git check-ref-format --branch), and cannot be read as an option.
func validBranch(name string) bool {
	if name == "" || name == "@" || strings.HasPrefix(name, "-") || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".") ||
		strings.Contains(name, "..") || strings.Contains(name, "//") || strings.Contains(name, "@{") {
		return false
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return false
		}
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") {
			return false
		}
	}
	return true
}

// ErrNotFastForward refuses an import that would rewrite the main
// repository's branch.
var ErrNotFastForward = errors.New("not a fast-forward")

// Import fetches the session's branch from the clone into the main
// repository when it moved. A rewrite (an amend, a rebase) of commits made
// in this session is taken; one that drops a commit the branch had when the
// session began — recorded by an earlier session — is refused, and the main
// repository's branch stays. It never touches another branch. It reports
// the new head ("" when nothing changed).
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
	if _, err := c.fetch(ctx, ref+":"+ref); err != nil {
		// a rejected update leaves the fetched objects: head can be checked
		if old == "" || c.ancestor(ctx, old, head) {
			return "", err
		}
		if c.start != "" && !c.ancestor(ctx, c.start, head) {
			return "", fmt.Errorf("%s: %w of %s, its head when the session began (its commits are recorded as they were)", c.Branch, ErrNotFastForward, short(c.start))
		}
		if _, err := c.fetch(ctx, "+"+ref+":"+ref); err != nil {
			return "", err
		}
	}
	c.last = head
	return head, nil
}

// fetch fetches refspec from the clone into the main repository.
func (c *Copy) fetch(ctx context.Context, refspec string) (string, error) {
	return git(ctx, c.Main, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", c.Dir, refspec)
}

// ancestor says whether commit a is an ancestor of b (or b) in the main
// repository.
func (c *Copy) ancestor(ctx context.Context, a, b string) bool {
	_, err := git(ctx, c.Main, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// Head is what the clone has checked out: the commit, and the branch
// ("" when detached or unreadable). It reads the clone's files and runs
// no git.
func (c *Copy) Head() (hash, branch string) {
	b, err := c.readFile(filepath.Join(".git", "HEAD"))
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
	if b, err := c.readFile(filepath.Join(".git", "refs", "heads", filepath.FromSlash(branch))); err == nil {
		return hexHash(strings.TrimSpace(string(b)))
	}
	b, err := c.readFile(filepath.Join(".git", "packed-refs"))
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

// maxRefFile bounds what the launcher reads of a clone's ref files.
const maxRefFile = 1 << 20

// readFile reads a file of the clone the agent may have replaced: only a
// regular file reached through no link (a link could lead the launcher,
// who reads with the person's rights, to the person's files; a FIFO would
// block it), and at most maxRefFile bytes.
func (c *Copy) readFile(rel string) ([]byte, error) {
	p := filepath.Join(c.Dir, rel)
	if real, err := filepath.EvalSymlinks(p); err != nil || real != p {
		return nil, fmt.Errorf("%s: not a plain file of the working copy", rel)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a plain file of the working copy", rel)
	}
	return io.ReadAll(io.LimitReader(f, maxRefFile))
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

// Checkout puts tree, exactly, into the copy's index and files: a gate's
// copy holds the merged tree it tests.
func (c *Copy) Checkout(ctx context.Context, tree string) error {
	_, err := git(ctx, c.Dir, "read-tree", "--reset", "-u", tree)
	return err
}
