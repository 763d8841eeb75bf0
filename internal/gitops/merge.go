package gitops

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ErrNoBranch means a branch does not exist.
var ErrNoBranch = errors.New("no such branch")

// ErrRefMoved means a ref changed under a compare-and-swap update: another
// process moved it, and nothing was overwritten.
var ErrRefMoved = errors.New("the branch moved meanwhile")

// ErrDirtyWorktree means the worktree that has main checked out has
// uncommitted changes, so a merge would have to overwrite them.
var ErrDirtyWorktree = errors.New("uncommitted changes")

// ErrSplitIndex means the checkout's index is a split index, which baton
// cannot read or write.
var ErrSplitIndex = errors.New("split index")

// ErrNoGit means git's own merge engine is needed but git is not installed.
var ErrNoGit = errors.New("git is not installed")

// ConflictError is a merge that cannot be made without a person: the paths
// both sides changed differently.
type ConflictError struct {
	Branch, Into string
	Paths        []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("merging %s into %s conflicts in %s", e.Branch, e.Into, strings.Join(e.Paths, ", "))
}

// CreateBranch creates refs/heads/name at commit; an existing branch is
// left alone and reported. A broken ref of that name (a file holding no
// hash, which git's reads pass over as missing) is replaced, and so are
// the empty directories a killed deletion left at its place.
func (g *repo) CreateBranch(name, at string) error {
	refName := plumbing.NewBranchReferenceName(name)
	if err := refName.Validate(); err != nil || strings.HasPrefix(name, "-") || name == "HEAD" {
		return fmt.Errorf("%q %w", name, ErrBadBranchName)
	}
	if g.branchExists(name) {
		return fmt.Errorf("branch %s already exists", name)
	}
	if err := g.nameClash(name); err != nil {
		return err
	}
	if _, err := g.r.CommitObject(plumbing.NewHash(at)); err != nil {
		return fmt.Errorf("%w: %s", ErrUnknownRevision, at)
	}
	g.clearKilledWrites()
	return g.writeRef("refs/heads/"+name, "", at, "branch: Created from "+at)
}

// ErrBadBranchName means a name git does not take for a branch.
var ErrBadBranchName = errors.New("is not a valid branch name")

// ErrBranchNameTaken means a new branch's name would hold another branch
// or sit inside one: git keeps refs/heads/a and refs/heads/a/b as a file
// and a directory, so both cannot exist.
var ErrBranchNameTaken = errors.New("the name is taken by another branch")

// nameClash refuses a name that contains an existing branch's name as a
// directory, or that existing branches use as a directory.
func (g *repo) nameClash(name string) error {
	for i := strings.IndexByte(name, '/'); i >= 0; i = next(name, i) {
		if _, err := g.Branch(name[:i]); err == nil {
			return fmt.Errorf("%w: branch %s exists, so no branch can be named %s/<name>", ErrBranchNameTaken, name[:i], name[:i])
		}
	}
	heads, err := Heads(g)
	if err != nil {
		return err
	}
	for h := range heads {
		if strings.HasPrefix(h, name+"/") {
			return fmt.Errorf("%w: branch %s exists, so %s names a directory of branches", ErrBranchNameTaken, h, name)
		}
	}
	return nil
}

// next is the index of the '/' after position i in s, or -1.
func next(s string, i int) int {
	if j := strings.IndexByte(s[i+1:], '/'); j >= 0 {
		return i + 1 + j
	}
	return -1
}

// DeleteBranch removes refs/heads/name if it still points at expect, as
// git deletes a ref: under git's lock of it, from packed-refs first and
// then its loose file, so that neither a reader nor a kill between the two
// sees an older packed value come back (go-git removes the loose file
// first; its DeleteBranch only removes the branch's config).
func (g *repo) DeleteBranch(name, expect string) error {
	if _, err := g.Branch(name); err != nil {
		return err // before the lock, which would make the ref's directories
	}
	g.clearKilledWrites()
	refName := plumbing.NewBranchReferenceName(name)
	path := filepath.Join(g.loc.CommonDir, filepath.FromSlash(refName.String()))
	unlock, err := g.lockRef(name, path)
	if err != nil {
		return err
	}
	err = g.deleteLocked(name, expect, path)
	unlock()
	if err != nil {
		return err
	}
	g.removeRefLeftovers(name)
	return nil
}

// deleteLocked is DeleteBranch's work under the ref's lock: packed-refs
// is locked, the ref dropped from it, and its loose file removed before
// that lock is released.
func (g *repo) deleteLocked(name, expect, path string) error {
	cur, err := g.Branch(name)
	if err != nil {
		return err
	}
	if expect != "" && cur != expect {
		return fmt.Errorf("%w: %s is at %s, expected %s", ErrRefMoved, name, Short(cur), Short(expect))
	}
	unlockPacked, err := g.lockPacked()
	if err != nil {
		return err
	}
	defer unlockPacked() // only once the loose file is gone (lockPacked)
	if err := g.dropPacked(plumbing.NewBranchReferenceName(name).String()); err != nil {
		return err
	}
	if fi, err := os.Lstat(path); err == nil && !fi.IsDir() { // a directory: the branch was packed only
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("deleting branch %s: %w", name, err)
		}
	}
	// its reflog too, still under the ref's lock (as git removes it): a
	// branch of the same name made once the lock is gone keeps its own
	_ = os.Remove(filepath.Join(g.loc.CommonDir, "logs", "refs", "heads", filepath.FromSlash(name)))
	afterStep("loose removed")
	return nil
}

// removeRefLeftovers removes what git's branch deletion removes besides the
// ref and its reflog (deleteLocked): the directories of both left empty —
// a reflog left behind would block a later branch named like its
// directory (feature beside feature/x) and show a new branch of the same
// name the old one's history.
func (g *repo) removeRefLeftovers(name string) {
	logs := filepath.Join(g.loc.CommonDir, "logs", "refs", "heads")
	for _, base := range []string{logs, filepath.Join(g.loc.CommonDir, "refs", "heads")} {
		for d := filepath.Dir(filepath.Join(base, filepath.FromSlash(name))); d != base && strings.HasPrefix(d, base); d = filepath.Dir(d) {
			if os.Remove(d) != nil {
				break // not empty
			}
		}
	}
}

// moveBranch sets refs/heads/name from old to new, refusing if it moved
// or a git process holds its lock (ErrRefMoved); why is the reflog's
// message. Any other failure is the file system's (a full disk, a
// permission, an I/O error), and is returned as such: nothing moved.
func (g *repo) moveBranch(name, old, new, why string) error {
	g.clearKilledWrites()
	return g.writeRef("refs/heads/"+name, old, new, why)
}

// MergeOptions describe a merge of Branch into Into.
type MergeOptions struct {
	Branch, Into string
	Message      string
	Signature    Signature // the author, and the committer unless Committer is set
	Committer    Signature
	// FastForward lets a branch that contains Into move Into forward
	// without a merge commit; by default a merge commit is made (--no-ff).
	FastForward bool
	// BeforeMove, when set, is called with the commit Into is about to
	// move to, before any ref or file changes; an error it returns stops
	// the merge with nothing changed (the caller records its intent here).
	BeforeMove func(commit string) error
	// Sign, when set, signs a merge commit baton writes: it is given the
	// commit as git encodes it without its signature and returns the
	// armored signature for its gpgsig header (see SignSSH).
	Sign func(payload []byte) (string, error)
}

// MergeResult says what a merge did.
type MergeResult struct {
	Commit      string `json:"merge_commit"`
	Previous    string `json:"previous"`
	BranchHead  string `json:"branch_head"`
	FastForward bool   `json:"fast_forward"`
	ThreeWay    bool   `json:"three_way"`
	Worktree    string `json:"worktree,omitempty"` // the checkout of Into that was updated
}

// Merge merges a branch into another (main). A branch that contains main
// gets a merge commit (or a fast-forward when allowed); a diverged branch
// gets a three-way merge computed by git's merge engine without touching any
// working tree, and a conflict is a *ConflictError with main untouched. A
// worktree that has main checked out is checked first (uncommitted changes
// refuse the merge before anything changes) and updated after, so it shows
// the merged files with a clean status. Never Repository.Merge: it moves the
// ref without the index or the files.
func (g *repo) Merge(o MergeOptions) (MergeResult, error) {
	into, err := g.Branch(o.Into)
	if err != nil {
		return MergeResult{}, err
	}
	head, err := g.Branch(o.Branch)
	if err != nil {
		return MergeResult{}, err
	}
	res := MergeResult{Previous: into, BranchHead: head}
	if done, err := g.IsAncestor(head, into); err != nil {
		return res, err
	} else if done {
		return res, fmt.Errorf("%s is already merged into %s: nothing to merge", o.Branch, o.Into)
	}
	wt, err := g.checkoutOf(o.Into)
	if err != nil {
		return res, err
	}
	var stamp os.FileInfo
	if wt != nil {
		stamp = wt.indexStamp()
		if err := wt.checkUnlocked(); err != nil {
			return res, err
		}
		if err := clean(wt); err != nil {
			return res, err
		}
	}
	newHead, err := g.mergeCommit(o, into, head, &res)
	if err != nil {
		return res, err
	}
	if wt != nil {
		if err := wt.untrackedInTheWay(into, newHead); err != nil {
			return res, err
		}
		if err := wt.lockUnchanged(stamp, into, newHead); err != nil {
			return res, err
		}
		defer wt.unlockIndex()
	}
	if o.BeforeMove != nil {
		if err := o.BeforeMove(newHead); err != nil {
			return res, err
		}
	}
	if err := g.moveBranch(o.Into, into, newHead, mergeLogMessage(o, res)); err != nil {
		return res, err
	}
	res.Commit = newHead
	if wt != nil {
		res.Worktree = wt.top
		if err := wt.checkOut(into, newHead); err != nil {
			// no advice here: the caller moves Into back, checkout included
			return res, fmt.Errorf("%s moved to %s, but updating the checkout at %s failed: %w", o.Into, Short(newHead), wt.top, err)
		}
	}
	return res, nil
}

// mergeLogMessage is the reflog's message for a merge, worded as git's.
func mergeLogMessage(o MergeOptions, res MergeResult) string {
	switch {
	case res.FastForward:
		return "merge " + o.Branch + ": Fast-forward"
	case res.ThreeWay:
		return "merge " + o.Branch + ": Merge made by the 'ort' strategy."
	}
	return "merge " + o.Branch + ": Merge made by baton (--no-ff)."
}

// mergeCommit builds the commit Into moves to.
func (g *repo) mergeCommit(o MergeOptions, into, head string, res *MergeResult) (string, error) {
	ff, err := g.IsAncestor(into, head)
	if err != nil {
		return "", err
	}
	if ff && o.FastForward {
		res.FastForward = true
		return head, nil
	}
	var tree plumbing.Hash
	if ff {
		c, err := g.r.CommitObject(plumbing.NewHash(head))
		if err != nil {
			return "", err
		}
		tree = c.TreeHash
	} else {
		res.ThreeWay = true
		if tree, err = g.mergeTree(o, into, head); err != nil {
			return "", err
		}
	}
	return g.writeCommit(tree, []string{into, head}, o.Message, o.Signature, o.Committer, o.Sign)
}

// mergeTree asks git's merge engine for the merged tree; no working tree
// or index is touched.
func (g *repo) mergeTree(o MergeOptions, into, head string) (plumbing.Hash, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%w: the three-way merge of a diverged branch uses git's own merge engine ('git merge-tree --write-tree', git 2.38 or later); install git, or rebase %s onto %s so it merges without one", ErrNoGit, o.Branch, o.Into)
	}
	cmd := exec.Command("git", "--git-dir", g.loc.CommonDir, "merge-tree", "--write-tree", "--name-only", "--no-messages", into, head)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Env = &stdout, &stderr, cleanGitEnv(os.Environ())
	err := cmd.Run()
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var ee *exec.ExitError
	switch {
	case err == nil && len(lines) > 0 && plumbing.IsHash(lines[0]):
		return plumbing.NewHash(lines[0]), nil
	case errors.As(err, &ee) && ee.ExitCode() == 1 && len(lines) > 1:
		return plumbing.ZeroHash, &ConflictError{Branch: o.Branch, Into: o.Into, Paths: uniq(lines[1:])}
	case errors.As(err, &ee) && ee.ExitCode() == 129:
		return plumbing.ZeroHash, fmt.Errorf("%w: the git installed has no 'git merge-tree --write-tree' (git 2.38 or later has it), which the three-way merge of a diverged branch uses; upgrade git, or rebase %s onto %s so it merges without one; nothing was merged", ErrNoGit, o.Branch, o.Into)
	case strings.Contains(stderr.String(), "unrelated histories"):
		hint := ""
		if len(g.shallowRoots()) > 0 {
			hint = " (this is a shallow clone: their common history may not be fetched — 'git fetch --unshallow' fetches it)"
		}
		return plumbing.ZeroHash, fmt.Errorf("%s and %s share no history, so git will not merge them%s; nothing was merged", o.Branch, o.Into, hint)
	}
	return plumbing.ZeroHash, fmt.Errorf("git merge-tree %s %s: %v: %s", o.Into, o.Branch, err, strings.TrimSpace(stderr.String()))
}

// TreeOf returns the full hash of a commit's tree.
func (g *repo) TreeOf(commit string) (string, error) {
	c, err := g.r.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return "", fmt.Errorf("commit %s: %w", Short(commit), err)
	}
	return c.TreeHash.String(), nil
}

// commitPayload is the commit as git encodes it without its signature:
// what its signature signs.
func commitPayload(c *object.Commit) ([]byte, error) {
	obj := &plumbing.MemoryObject{}
	if err := c.EncodeWithoutSignature(obj); err != nil {
		return nil, err
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

// CommitSignature returns a commit's signature (its gpgsig header, ""
// when it has none) and the content it signs.
func (g *repo) CommitSignature(commit string) (string, []byte, error) {
	c, err := g.r.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return "", nil, fmt.Errorf("commit %s: %w", Short(commit), err)
	}
	if c.PGPSignature == "" {
		return "", nil, nil
	}
	payload, err := commitPayload(c)
	return c.PGPSignature, payload, err
}

// Message returns a commit's whole message.
func (g *repo) Message(commit string) (string, error) {
	c, err := g.r.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return "", fmt.Errorf("commit %s: %w", Short(commit), err)
	}
	return c.Message, nil
}

// Trailers returns the values of a commit message's trailers named key,
// in order, as 'git log --format=%(trailers:key=Key,unfold)' reads them:
// the trailer block is the message's last paragraph (never its subject,
// trailing blank and '#' lines aside), and counts only when every line of
// it is a trailer ("Token: value", the token letters, digits and '-'), or
// when a quarter of them are and one is git's own (Signed-off-by, "(cherry
// picked from commit"); a line starting with whitespace continues the one
// before.
func Trailers(msg, key string) []string {
	lines := strings.Split(strings.TrimRight(msg, "\n"), "\n")
	end := len(lines)
	for end > 0 && (strings.TrimSpace(lines[end-1]) == "" || strings.HasPrefix(lines[end-1], "#")) {
		end--
	}
	start := end
	for start > 0 && strings.TrimSpace(lines[start-1]) != "" {
		start--
	}
	if start == 0 {
		return nil // a subject alone holds no trailers
	}
	type trailer struct{ key, value string }
	var block []trailer
	trailers, others, gitOwn := 0, 0, false
	for _, l := range lines[start:end] {
		switch k, v, ok := trailerLine(l); {
		case strings.HasPrefix(l, "#"):
		case (l[0] == ' ' || l[0] == '\t') && len(block) > 0:
			block[len(block)-1].value += " " + strings.TrimSpace(l)
		case ok:
			trailers++
			gitOwn = gitOwn || strings.EqualFold(k, "Signed-off-by")
			block = append(block, trailer{k, v})
		default:
			others++
			gitOwn = gitOwn || strings.HasPrefix(l, "(cherry picked from commit ")
			block = append(block, trailer{})
		}
	}
	if trailers == 0 || (others > 0 && !(gitOwn && trailers*3 >= others)) {
		return nil
	}
	var out []string
	for _, t := range block {
		if t.key != "" && strings.EqualFold(t.key, key) {
			out = append(out, strings.TrimSpace(t.value))
		}
	}
	return out
}

// trailerLine splits "Token: value" (spaces allowed before the colon).
func trailerLine(l string) (key, value string, ok bool) {
	k, v, found := strings.Cut(l, ":")
	k = strings.TrimRight(k, " \t")
	if !found || k == "" {
		return "", "", false
	}
	for _, r := range k {
		if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "", "", false
		}
	}
	return k, v, true
}

// Change is a file that differs between two trees: its path, whether it
// is gone from the second, and its mode there (git's octal form, such as
// 0100644 for a regular file).
type Change struct {
	Path    string
	Deleted bool
	Mode    uint32
}

// Changes lists the files whose content or mode differ between two
// commits' trees.
func (g *repo) Changes(from, to string) ([]Change, error) {
	if _, err := g.r.CommitObject(plumbing.NewHash(from)); err != nil {
		return nil, fmt.Errorf("commit %s: %w", Short(from), err)
	}
	if _, err := g.r.CommitObject(plumbing.NewHash(to)); err != nil {
		return nil, fmt.Errorf("commit %s: %w", Short(to), err)
	}
	diff, err := g.commitChanges(from, to)
	if err != nil {
		return nil, err
	}
	out := make([]Change, 0, len(diff))
	for _, ch := range diff {
		if ch.To.Name == "" {
			out = append(out, Change{Path: ch.From.Name, Deleted: true})
			continue
		}
		out = append(out, Change{Path: ch.To.Name, Mode: uint32(ch.To.Mode)})
	}
	return out, nil
}

// CleanMergeTree returns the tree 'git merge' of head into into gives
// without conflicts: head's tree when into is its ancestor, else git's
// three-way merge.
func (g *repo) CleanMergeTree(into, head string) (string, error) {
	ff, err := g.IsAncestor(into, head)
	if err != nil {
		return "", err
	}
	if ff {
		return g.TreeOf(head)
	}
	t, err := g.mergeTree(MergeOptions{Into: Short(into), Branch: Short(head)}, into, head)
	if err != nil {
		return "", err
	}
	return t.String(), nil
}

// PlanMerge writes, moving no ref, a commit with the tree and parents a
// clean merge of head into into makes (head itself when into is its
// ancestor and ff allows a fast-forward), so that further merges can be
// planned on top of it; a *ConflictError when the two do not merge
// cleanly. The commit is unsigned and belongs to no branch.
func (g *repo) PlanMerge(into, head string, ff bool) (commit, tree string, err error) {
	o := MergeOptions{Into: Short(into), Branch: Short(head), FastForward: ff, Message: "baton: planned merge of " + Short(head) + " into " + Short(into) + "\n",
		Signature: Signature{Name: "baton", Email: "baton@localhost"}}
	var res MergeResult
	if commit, err = g.mergeCommit(o, into, head, &res); err != nil {
		return "", "", err
	}
	tree, err = g.TreeOf(commit)
	return commit, tree, err
}

func uniq(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// writeCommit stores a commit object, signed with sign when it is set,
// and returns its hash. A committer without a name is the author.
func (g *repo) writeCommit(tree plumbing.Hash, parents []string, msg string, author, committer Signature, sign func([]byte) (string, error)) (string, error) {
	if author.When.IsZero() {
		author.When = time.Now()
	}
	if committer.Name == "" {
		committer = author
	} else if committer.When.IsZero() {
		committer.When = time.Now()
	}
	c := &object.Commit{Author: gitSignature(author), Committer: gitSignature(committer), Message: msg, TreeHash: tree}
	for _, p := range parents {
		c.ParentHashes = append(c.ParentHashes, plumbing.NewHash(p))
	}
	if sign != nil {
		payload, err := commitPayload(c)
		if err != nil {
			return "", err
		}
		if c.PGPSignature, err = sign(payload); err != nil {
			return "", fmt.Errorf("signing the merge commit: %w", err)
		}
	}
	obj := g.r.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return "", err
	}
	h, err := g.r.Storer.SetEncodedObject(obj)
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

// checkout is a worktree with a branch checked out.
type checkout struct {
	top    string
	gitDir string // the worktree's own git directory (its index, HEAD)
	branch string // the branch it has checked out
	g      *repo  // the repository, whose objects it checks out
	held   func() // releases index.lock while baton holds it (lockIndex)
}

// checkoutOf finds the worktree (main or linked) that has branch checked
// out, or nil.
func (g *repo) checkoutOf(branch string) (*checkout, error) {
	want := "ref: refs/heads/" + branch
	for top, headFile := range worktreeHeads(g) {
		b, err := os.ReadFile(headFile)
		if err != nil || strings.TrimSpace(string(b)) != want {
			continue
		}
		loc, err := Locate(top)
		if err != nil {
			return nil, err
		}
		return &checkout{top: top, gitDir: loc.GitDir, branch: branch, g: g}, nil
	}
	return nil, nil
}

// clean refuses a checkout with uncommitted changes to tracked files, as
// git decides it: the index against HEAD's tree (staged changes), then each
// indexed file against its index entry — by its stat data, and by its
// content only when those differ. Untracked files are not looked at: they
// survive the update. (go-git's Worktree.Status hashes every file and walks
// every untracked one, which costs far more than the merge.)
func clean(c *checkout) error {
	idx, err := readIndex(c.indexPath())
	if err != nil {
		if m, _ := filepath.Glob(filepath.Join(c.gitDir, "sharedindex.*")); len(m) > 0 {
			return fmt.Errorf("%w: the index of %s is split (core.splitIndex), which baton cannot update; run 'git update-index --no-split-index' there, then retry; nothing was merged", ErrSplitIndex, c.top)
		}
		return fmt.Errorf("reading the index of %s: %w", c.top, err)
	}
	head, err := c.g.Branch(c.branch)
	if err != nil {
		return fmt.Errorf("reading HEAD of %s: %w", c.top, err)
	}
	hc, err := c.g.r.CommitObject(plumbing.NewHash(head))
	if err != nil {
		return err
	}
	inTree := map[string]treeEntry{}
	if err := c.g.files(hc.TreeHash, "", inTree); err != nil {
		return err
	}
	execBit := c.execBit()
	var dirty []string
	for _, e := range idx.Entries {
		f, ok := inTree[e.Name]
		delete(inTree, e.Name)
		if !ok || f.Hash != e.Hash || indexMode(f.Mode) != e.Mode || e.Stage != 0 { // stage 0: not a conflict entry
			dirty = append(dirty, e.Name) // staged
			continue
		}
		if e.Mode == filemode.Submodule || e.SkipWorktree {
			continue // a submodule's checkout is its own; a sparse checkout leaves the file out
		}
		if changed, err := fileChanged(c.top, e, execBit); err != nil || changed {
			dirty = append(dirty, e.Name)
		}
	}
	for name := range inTree {
		dirty = append(dirty, name) // deleted from the index
	}
	if len(dirty) > 0 && !c.gitSaysClean() {
		return c.dirtyError(dirty)
	}
	return nil
}

// dirtyError refuses a merge into a checkout whose tracked files named
// dirty have uncommitted changes.
func (c *checkout) dirtyError(dirty []string) error {
	sort.Strings(dirty)
	return fmt.Errorf("%w in %s (%s): commit or stash them first; nothing was merged", ErrDirtyWorktree, c.top, strings.Join(dirty, ", "))
}

// execBit says whether git compares a file's executable bit in the
// checkout (core.fileMode, true unless set false).
func (c *checkout) execBit() bool {
	cfg, err := c.g.st.Config()
	return err != nil || cfg.Raw == nil || !strings.EqualFold(cfg.Raw.Section("core").Option("filemode"), "false")
}

// gitSaysClean asks git whether the checkout's tracked files and index
// match HEAD, for a checkout whose attributes convert files (line endings,
// filters): a converted file's bytes differ from its blob although git
// counts it unchanged. false without such attributes or without git.
func (c *checkout) gitSaysClean() bool {
	if !c.hasConvertingAttributes() {
		return false
	}
	cmd := exec.Command("git", "status", "--porcelain", "--untracked-files=no", "--ignore-submodules=all")
	cmd.Dir, cmd.Env = c.top, cleanGitEnv(os.Environ())
	out, err := cmd.Output()
	return err == nil && len(bytes.TrimSpace(out)) == 0
}

// untrackedInTheWay refuses a merge with a path the checkout must not
// write (validTreePath), or whose files would overwrite files the
// checkout does not track, as git merge refuses it ("untracked working
// tree files would be overwritten"): a file where the merge writes one, a
// file where it needs a directory, a directory holding untracked files
// where it writes a file.
func (c *checkout) untrackedInTheWay(old, new string) error {
	changes, idx, err := c.changesAndIndex(old, new)
	if err != nil {
		return err
	}
	tracked := map[string]bool{}
	for _, e := range idx.Entries {
		tracked[e.Name] = true
	}
	var in []string
	for _, ch := range changes {
		if ch.To.Name == "" {
			continue
		}
		if err := validTreePath(ch.To.Name); err != nil {
			return fmt.Errorf("the merge would check out a path baton does not write (%w); rename it on the branch; nothing was merged", err)
		}
		parts := strings.Split(ch.To.Name, "/")
		for i := 1; i <= len(parts); i++ {
			p := strings.Join(parts[:i], "/")
			fi, err := os.Lstat(filepath.Join(c.top, filepath.FromSlash(p)))
			switch {
			case err != nil:
				i = len(parts) // nothing there, nor below
			case !fi.IsDir() && !tracked[p]:
				in = append(in, p)
				i = len(parts)
			case fi.IsDir() && i == len(parts) && ch.To.Mode != filemode.Submodule:
				in = append(in, untrackedUnder(c.top, p, tracked)...)
			}
		}
	}
	if len(in) > 0 {
		in = uniq(in)
		return fmt.Errorf("%w in %s: the merge would overwrite untracked files (%s): move or remove them first; nothing was merged", ErrDirtyWorktree, c.top, strings.Join(in, ", "))
	}
	return nil
}

// untrackedUnder lists the files under directory dir (a path of the
// checkout) that the index does not track.
func untrackedUnder(top, dir string, tracked map[string]bool) []string {
	var out []string
	_ = filepath.WalkDir(filepath.Join(top, filepath.FromSlash(dir)), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(top, path)
		if rel = filepath.ToSlash(rel); !tracked[rel] {
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// fileChanged compares a tracked file with its index entry, as git status
// does: its kind (file, symlink) and, when execBit (core.fileMode), its
// executable bit; then equal size and modification time mean unchanged;
// otherwise the content's blob hash decides.
func fileChanged(top string, e *index.Entry, execBit bool) (bool, error) {
	path := filepath.Join(top, e.Name)
	fi, err := os.Lstat(path)
	if err != nil {
		return true, nil // deleted
	}
	isLink := fi.Mode()&os.ModeSymlink != 0
	if isLink != (e.Mode == filemode.Symlink) || fi.IsDir() {
		return true, nil // a file became a symlink or a directory, or back
	}
	if execBit && !isLink && (fi.Mode()&0o100 != 0) != (e.Mode == filemode.Executable) {
		return true, nil // the executable bit changed (core.fileMode)
	}
	if uint32(fi.Size()) == e.Size && fi.ModTime().Equal(e.ModifiedAt) {
		return false, nil
	}
	var content []byte
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(path)
		if err != nil {
			return true, nil
		}
		content = []byte(target)
	} else if content, err = os.ReadFile(path); err != nil {
		return true, nil
	}
	return plumbing.ComputeHash(plumbing.BlobObject, content) != e.Hash, nil
}

// update moves a clean checkout from commit old to commit new: the files
// and index entries the two trees differ in are written or removed, unless
// the checkout has them as new has them already, and nothing else is
// touched; index.lock is held throughout (lockIndex), from before the
// index is read until the new one is in place, as git holds it. go-git's
// hard reset also deletes untracked files, among them baton's own state
// files, so it is not used.
func (c *checkout) update(old, new string) error {
	if c.held == nil {
		if err := c.lockIndex(); err != nil {
			return err
		}
		defer c.unlockIndex()
	}
	all, idx, err := c.changesAndIndex(old, new)
	if err != nil {
		return err
	}
	var changes []treeChange
	execBit := c.execBit()
	for _, ch := range all {
		if !c.has(idx, ch, execBit) {
			changes = append(changes, ch)
		}
	}
	if len(changes) == 0 {
		return nil // nothing to write: an undo of an update that never ran writes nothing
	}
	// removals first: a file that becomes a directory is gone before the
	// directory's files are written
	for _, ch := range changes {
		if ch.To.Name == "" || ch.From.Mode == filemode.Submodule {
			if err := c.remove(ch.From.Name); err != nil {
				return err
			}
			_, _ = idx.Remove(ch.From.Name)
		}
	}
	for _, ch := range changes {
		if ch.To.Name != "" {
			if err := c.writeFile(idx, ch.To); err != nil {
				return err
			}
		}
	}
	return c.writeIndex(idx)
}

// has says whether the checkout already has the new side of ch: no index
// entry and no file for a path removed, else the index entry and a file
// unchanged from it.
func (c *checkout) has(idx *index.Index, ch treeChange, execBit bool) bool {
	if ch.To.Name == "" {
		_, err := idx.Entry(ch.From.Name)
		fi, serr := os.Lstat(filepath.Join(c.top, ch.From.Name))
		return err != nil && (serr != nil || fi.IsDir())
	}
	e, err := idx.Entry(ch.To.Name)
	if err != nil || e.Hash != ch.To.Hash || e.Mode != indexMode(ch.To.Mode) {
		return false
	}
	if e.Mode == filemode.Submodule || e.SkipWorktree {
		return true
	}
	changed, err := fileChanged(c.top, e, execBit)
	return err == nil && !changed
}

// remove deletes a file (or an empty submodule directory) of the checkout
// and then its parent directories left empty, as git's checkout does: a
// directory that becomes a file is gone before the file is written.
func (c *checkout) remove(name string) error {
	path := filepath.Join(c.top, name)
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		if fi, serr := os.Lstat(path); serr == nil && fi.IsDir() {
			return nil // a submodule's directory with its own files is left
		}
		return err
	}
	for dir := filepath.Dir(path); dir != c.top && strings.HasPrefix(dir, c.top); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break // not empty: untracked or other tracked files remain
		}
	}
	return nil
}

// changesAndIndex is what moving the checkout from commit old to commit
// new changes, and the checkout's index as it is now.
func (c *checkout) changesAndIndex(old, new string) ([]treeChange, *index.Index, error) {
	changes, err := c.g.commitChanges(old, new)
	if err != nil {
		return nil, nil, err
	}
	idx, err := readIndex(c.indexPath())
	return changes, idx, err
}

// writeFile writes a file of the new tree into the checkout and its index
// entry, with the stat data git compares; a path git would refuse is
// refused.
func (c *checkout) writeFile(idx *index.Index, f treeEntry) error {
	if err := validTreePath(f.Name); err != nil {
		return err
	}
	if e, err := idx.Entry(f.Name); err == nil && e.SkipWorktree {
		e.Hash, e.Mode = f.Hash, indexMode(f.Mode) // a sparse checkout leaves the file out
		return nil
	}
	path := filepath.Join(c.top, f.Name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	switch f.Mode {
	case filemode.Symlink, filemode.Executable, filemode.Regular, filemode.Deprecated:
	case filemode.Submodule:
		return c.writeGitlink(idx, f, path)
	default:
		return fmt.Errorf("%s: unknown mode %o in the tree", f.Name, uint32(f.Mode))
	}
	content, err := c.g.blob(f.Hash)
	if err != nil {
		return err
	}
	_ = os.Remove(path) // a file may become a symlink or change mode
	switch f.Mode {
	case filemode.Symlink:
		err = os.Symlink(string(content), path)
	case filemode.Executable:
		err = os.WriteFile(path, content, 0o755)
	default:
		err = os.WriteFile(path, content, 0o644)
	}
	if err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	e, err := idx.Entry(f.Name)
	if err != nil {
		e = idx.Add(f.Name)
	}
	e.Hash, e.Mode, e.Size = f.Hash, indexMode(f.Mode), uint32(fi.Size())
	e.ModifiedAt, e.CreatedAt = fi.ModTime(), fi.ModTime()
	fillStat(e, fi)
	return nil
}

// indexMode is the mode git's index holds for a tree entry's: a group-
// writable file (100664, found in old trees) is a regular file there.
func indexMode(m filemode.FileMode) filemode.FileMode {
	if m == filemode.Deprecated {
		return filemode.Regular
	}
	return m
}

// writeGitlink checks out a submodule entry as git does for a submodule
// not initialised: an empty directory, and the entry (mode 160000, the
// commit) in the index.
func (c *checkout) writeGitlink(idx *index.Index, f treeEntry, path string) error {
	if fi, err := os.Lstat(path); err == nil && !fi.IsDir() {
		if err := os.Remove(path); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return err
	}
	e, err := idx.Entry(f.Name)
	if err != nil {
		e = idx.Add(f.Name)
	}
	*e = index.Entry{Name: f.Name, Hash: f.Hash, Mode: filemode.Submodule}
	return nil
}

// NewestTrailer walks main's first-parent line back from head, at most
// limit commits, to the newest commit whose message has a trailer named
// key, and returns that commit and the trailer's values (ok false when
// none is found within the limit).
func NewestTrailer(r Repo, head, key string, limit int) (c Commit, values []string, ok bool, err error) {
	g, isRepo := r.(*repo)
	if !isRepo {
		return c, nil, false, ErrNoRepository
	}
	h := plumbing.NewHash(head)
	for i := 0; i < limit; i++ {
		obj, err := g.r.CommitObject(h)
		if err != nil {
			return c, nil, false, fmt.Errorf("commit %s: %w", Short(h.String()), err)
		}
		if v := Trailers(obj.Message, key); len(v) > 0 {
			return commitOf(obj), v, true, nil
		}
		if len(obj.ParentHashes) == 0 {
			break
		}
		h = obj.ParentHashes[0]
	}
	return c, nil, false, nil
}
