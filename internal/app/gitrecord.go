package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/store"
)

// This file records what git says: a session's commits and range, a
// review's range, a fix's commits. Values given as flags are checked
// against the repository, never trusted over it. Outside a repository the
// values are kept as given.

// gitErr gives a gitops error its kind (conflicts and moved refs exit 5,
// missing branches and commits 4, bad revisions 2) and says what failed.
func gitErr(err error, format string, args ...any) error {
	var typed *errs.Error
	if errors.As(err, &typed) {
		return err
	}
	var ce *gitops.ConflictError
	kind := errs.Unexpected
	switch {
	case errors.As(err, &ce), errors.Is(err, gitops.ErrDirtyWorktree), errors.Is(err, gitops.ErrRefMoved), errors.Is(err, gitops.ErrIndexLocked), errors.Is(err, gitops.ErrSplitIndex):
		kind = errs.Conflict
	case errors.Is(err, gitops.ErrNoBranch), errors.Is(err, gitops.ErrUnknownRevision):
		kind = errs.NotFound
	case errors.Is(err, gitops.ErrUnsupportedRevision), errors.Is(err, gitops.ErrNoRepository):
		kind = errs.Usage
	}
	return errs.New(kind, "%s: %w", fmt.Sprintf(format, args...), err)
}

// needRepo returns the working directory's repository, or a usage error
// for a command that only makes sense in one.
func (a *App) needRepo(cmd string) (gitops.Repo, error) {
	if r := a.repo(); r != nil {
		return r, nil
	}
	return nil, errs.New(errs.Usage, "%s: %s is not inside a git repository; run it in the project's repository (or a linked worktree of it)", cmd, a.env.Cwd)
}

// mainOf names the branch work merges into and the commit it is at.
func mainOf(r gitops.Repo, cfg store.Config) (name, head string, err error) {
	name, head, err = gitops.MainBranchAt(r, cfg.MainBranch)
	if err != nil {
		want, fix := "main or master", "a person sets main_branch in the project's configuration to the branch work merges into"
		if cfg.MainBranch != "" {
			want, fix = cfg.MainBranch+" (main_branch in the project's configuration)", "a person creates it, or corrects main_branch"
		}
		msg := fmt.Sprintf("the repository at %s has no main branch: no %s. An empty repository gets one with its first commit; otherwise %s", r.Top(), want, fix)
		return "", "", &errs.Error{Kind: errs.NotFound, Msg: msg, Err: err}
	}
	return name, head, nil
}

// resolveRev resolves a revision given in flag to a full commit hash, with
// the reason when it cannot: bad syntax (exit 2), an unborn HEAD or an
// unknown commit (exit 4).
func (a *App) resolveRev(r gitops.Repo, flag, rev string) (string, error) {
	h, err := gitops.ResolveCommit(r, rev)
	switch {
	case err == nil:
		return h, nil
	case errors.Is(err, gitops.ErrUnsupportedRevision):
		return "", errs.New(errs.Usage, "%s: %v", flag, err)
	}
	if strings.HasPrefix(rev, "HEAD") || strings.HasPrefix(rev, "@") {
		if _, herr := r.Head(); herr != nil {
			return "", errs.New(errs.NotFound, "%s: %s: %v in %s; commit something first, or name a commit", flag, rev, herr, r.Top())
		}
	}
	return "", errs.New(errs.NotFound, "%s: %v in the repository at %s (check it with 'git log')", flag, err, r.Top())
}

// full resolves a recorded (short) hash to the full one.
func full(r gitops.Repo, what string, short *string) (string, error) {
	h, err := gitops.ResolveCommit(r, *short)
	if err != nil {
		return "", gitErr(err, "%s, %s", what, *short)
	}
	return h, nil
}

// commitHash is a commit value given outside a repository, where nothing
// can resolve a name: a hex hash as git prints it, 4 to 40 digits, kept in
// lower case; anything else is a usage error naming flag.
func commitHash(flag, v string) (*string, error) {
	if !isCommitHash(v) {
		return nil, errs.New(errs.Usage, "%s: %q is not a commit hash: outside a git repository give the hex hash git prints, 4 to 40 digits, such as 1a2b3c4", flag, v)
	}
	h := strings.ToLower(v)
	return &h, nil
}

// isCommitHash says whether v has the form of a commit hash, full or
// abbreviated as git abbreviates it (at least 4 hex digits).
func isCommitHash(v string) bool {
	return len(v) >= 4 && len(v) <= 40 && strings.Trim(strings.ToLower(v), "0123456789abcdef") == ""
}

// sessionRange is what a session records from git: the commits of
// from..to (the set `git rev-list from..to` lists, oldest first), each
// --commits value checked to be one of them. Without a start or an end (an
// unborn HEAD, or no repository) the given values are kept.
func (a *App) sessionRange(given []progress.Commit, from, to *string) ([]progress.Commit, *progress.Range, error) {
	rng := &progress.Range{From: from, To: to}
	r := a.repo()
	if r == nil || from == nil || to == nil {
		return given, rng, nil
	}
	f, err := full(r, "the session's first commit (--commit-from, else its base commit)", from)
	if err != nil {
		return nil, nil, err
	}
	t, err := full(r, "the session's last commit (--commit-to, else HEAD)", to)
	if err != nil {
		return nil, nil, err
	}
	list, err := r.Range(f, t)
	if err != nil {
		return nil, nil, gitErr(err, "listing the commits %s..%s", *from, *to)
	}
	if err := checkGiven(given, list, *from, *to); err != nil {
		return nil, nil, err
	}
	out := make([]progress.Commit, 0, len(list))
	for _, c := range list {
		out = append(out, progress.Commit{Hash: c.Hash, Message: c.Subject})
	}
	return out, rng, nil
}

// sessionCommits is sessionRange's answer for a session.
type sessionCommits struct {
	commits []progress.Commit
	rng     *progress.Range
	err     error
}

// earlyRange lists, before the state lock is taken, the commits of a
// session that names its first commit: its two ends are full hashes by
// then, and commits never change, so git gives the same answer under the
// lock; the lock is only held shorter. nil for a session that starts at
// main's merge base, which is read under the lock (main moves under it).
// Its error is returned where the transaction would meet it (after the
// caller's rights are checked).
func (a *App) earlyRange(s progress.Session) *sessionCommits {
	if s.CommitRange == nil || s.CommitRange.From == nil {
		return nil
	}
	c, r, err := a.sessionRange(s.Commits, s.CommitRange.From, s.CommitRange.To)
	return &sessionCommits{commits: c, rng: r, err: err}
}

// get is the session's commits and range: computed early, or now.
func (e *sessionCommits) get(a *App, cfg store.Config, s progress.Session) ([]progress.Commit, *progress.Range, error) {
	if e != nil {
		return e.commits, e.rng, e.err
	}
	from := s.CommitRange.From
	if from == nil {
		from = a.mainBase(cfg, s.CommitRange.To)
	}
	return a.sessionRange(s.Commits, from, s.CommitRange.To)
}

// checkGiven refuses a --commits value that is not in the range git lists.
func checkGiven(given []progress.Commit, list []gitops.Commit, from, to string) error {
	for _, g := range given {
		found := false
		for _, c := range list {
			found = found || strings.HasPrefix(c.Hash, g.Hash)
		}
		if !found {
			f, t := gitops.Short(from), gitops.Short(to)
			return errs.New(errs.Usage, "--commits: %s is not one of this session's commits %s..%s (git rev-list %s..%s lists %s); baton records the session's commits from git — leave --commits out, or correct it", gitops.Short(g.Hash), f, t, f, t, listShort(list))
		}
	}
	return nil
}

func listShort(list []gitops.Commit) string {
	if len(list) == 0 {
		return "none"
	}
	var s []string
	for i, c := range list {
		if i == 5 {
			s = append(s, fmt.Sprintf("and %d more", len(list)-5))
			break
		}
		s = append(s, gitops.Short(c.Hash))
	}
	return strings.Join(s, ", ")
}

// mainBase is where a session recorded without --commit-from started: the
// merge base of its end with main, when HEAD is on another branch (or
// detached). nil when HEAD is main or there is no main.
func (a *App) mainBase(cfg store.Config, to *string) *string {
	r := a.repo()
	if r == nil || to == nil {
		return nil
	}
	main, mainHead, err := mainOf(r, cfg)
	if err != nil {
		return nil
	}
	if cur, err := r.CurrentBranch(); err != nil || cur == main {
		return nil
	}
	t, err := gitops.ResolveCommit(r, *to)
	if err != nil {
		return nil
	}
	base, err := r.MergeBase(t, mainHead)
	if err != nil || base == "" {
		return nil
	}
	return &base
}

// reviewRange records a review's range from git: main's merge base with
// the branch .. the branch head. A given --commit-from/--commit-to must
// agree with it. A branch that does not exist keeps the given range, with
// a warning.
func (a *App) reviewRange(cfg store.Config, in *reviews.NewReview) error {
	r := a.repo()
	if r == nil || in.Branch == nil {
		return nil
	}
	branch := *in.Branch
	head, err := r.Branch(branch)
	if errors.Is(err, gitops.ErrNoBranch) {
		// kept as given (each hash checked): a branch reviewed elsewhere,
		// or a typo that 'reviews merge' will name
		a.warn("branch %s does not exist in the repository at %s: the review's commit_range is kept as given, not recorded from git (see 'git branch --list'; only an existing branch can be merged)", branch, r.Top())
		return nil
	}
	if err != nil {
		return gitErr(err, "reading branch %s", branch)
	}
	main, mainHead, err := mainOf(r, cfg)
	if err != nil {
		return err
	}
	base, err := r.MergeBase(mainHead, head)
	if err != nil {
		return gitErr(err, "finding the merge base of %s and %s", main, branch)
	}
	rng := &progress.Range{To: &head, Description: "Reviewing commits from main to feature branch HEAD"}
	if base != "" {
		rng.From = &base
	}
	if g := in.CommitRange; g != nil {
		if g.From != nil && (base == "" || !strings.HasPrefix(base, *g.From)) {
			return errs.New(errs.Usage, "--commit-from %s contradicts git: the merge base of %s with %s is %s; baton records the review's range from git — leave --commit-from out or correct it", gitops.Short(*g.From), branch, main, OrDash(gitops.Short(Deref(rng.From))))
		}
		if g.To != nil && !strings.HasPrefix(head, *g.To) {
			return errs.New(errs.Usage, "--commit-to %s contradicts git: %s is at %s; baton records the review's range from git — leave --commit-to out, or review the branch as it is", gitops.Short(*g.To), branch, gitops.Short(head))
		}
	}
	in.CommitRange = rng
	return nil
}

// checkFixCommits checks each fixed issue's commit: it exists, is on the
// fix's branch after the commit the review saw (reviewed), and is not on main (a fix is committed on its branch and
// reaches main only through a merge). Commits are recorded in full.
func (st *state) checkFixCommits(in *reviews.NewFix, branch, reviewed string) error {
	r := st.app.repo()
	if r == nil {
		for i, fi := range in.IssuesFixed {
			if c := strings.TrimSpace(fi.Commit); c != "" {
				h, err := commitHash("--issues-fixed: "+fi.IssueID+": commit", c)
				if err != nil {
					return err
				}
				in.IssuesFixed[i].Commit = *h
			}
		}
		return nil
	}
	var mainName, mainHead, branchHead string
	for i, fi := range in.IssuesFixed {
		if strings.TrimSpace(fi.Commit) == "" {
			continue
		}
		h, err := st.app.resolveRev(r, "--issues-fixed: "+fi.IssueID+": commit", strings.TrimSpace(fi.Commit))
		if err != nil {
			return err
		}
		if mainHead == "" {
			if mainName, mainHead, err = mainOf(r, st.cfg); err != nil {
				return err
			}
		}
		if on, err := r.IsAncestor(h, mainHead); err != nil {
			return gitErr(err, "checking commit %s", fi.Commit)
		} else if on {
			return st.refuse(errs.New(errs.Policy, "--issues-fixed: %s: commit %s is on %s; a fix is committed on its branch (%s) and reaches %s only through 'baton reviews merge' — commit the fix there and record that commit", fi.IssueID, gitops.Short(h), mainName, OrDash(branch), mainName))
		}
		if branch != "" {
			if branchHead == "" {
				if branchHead, err = r.Branch(branch); err != nil {
					return gitErr(err, "--branch: the fix's branch %s does not exist in the repository at %s", branch, r.Top())
				}
			}
			if on, err := r.IsAncestor(h, branchHead); err != nil {
				return gitErr(err, "checking commit %s", fi.Commit)
			} else if !on {
				return errs.New(errs.Usage, "--issues-fixed: %s: commit %s is not on the fix's branch %s (at %s): record the commit that fixed it on %s", fi.IssueID, gitops.Short(h), branch, gitops.Short(branchHead), branch)
			}
		}
		if err := st.afterReviewed(r, fi.IssueID, h, reviewed); err != nil {
			return err
		}
		in.IssuesFixed[i].Commit = h
	}
	return nil
}

// signature is who baton's merge commits are made by, as git decides it:
// the author from GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL and GIT_AUTHOR_DATE,
// the committer from the GIT_COMMITTER_ ones, each else the repository's
// user config, else baton, and now.
func (a *App) signature(r gitops.Repo) (author, committer gitops.Signature) {
	name, email := gitops.Identity(r)
	if name == "" {
		name = "baton"
	}
	if email == "" {
		email = "baton@localhost"
	}
	who := func(role string) gitops.Signature {
		s := gitops.Signature{Name: name, Email: email, When: a.env.Now()}
		if v := a.env.Getenv("GIT_" + role + "_NAME"); v != "" {
			s.Name = v
		}
		if v := a.env.Getenv("GIT_" + role + "_EMAIL"); v != "" {
			s.Email = v
		}
		if t, ok := gitops.ParseDate(a.env.Getenv("GIT_" + role + "_DATE")); ok {
			s.When = t
		}
		return s
	}
	return who("AUTHOR"), who("COMMITTER")
}

// logAlways stages the audit event even when no state file changes: a
// branch created or deleted is something that happened.
func (st *state) logAlways() {
	who, _ := st.resolveActor()
	auth, key := st.app.signer(who)
	st.tx.LogSigned(store.Event{
		TaskID: st.taskID, StageID: stage(who), Type: "task", Timestamp: st.stamp(),
		Payload: eventPayload{Command: st.cmdPath, Actor: who, Summary: st.summary, Record: recordJSON(st.record)}.raw(),
	}, auth, key)
}

// ---- the main baseline

// gitBaselineName is the file, in .baton/, recording main's head when
// baton took over the project: verify accounts for every commit on main
// after it.
const gitBaselineName = store.GitBaselineName

type gitBaseline struct {
	MainBranch string  `json:"main_branch"`
	MainHead   *string `json:"main_head_at_init"`
	RecordedAt string  `json:"recorded_at"`
}

// baseline is the content of .baton/git.json for the working directory's
// repository (nil outside one): main's head as baton takes over.
func (a *App) baseline(cfg store.Config) ([]byte, error) {
	r := a.repo()
	if r == nil {
		return nil, nil
	}
	b := gitBaseline{RecordedAt: jsondoc.Timestamp(a.env.Now())}
	if name, head, err := mainOf(r, cfg); err == nil {
		b.MainBranch, b.MainHead = name, &head
	} else {
		b.MainBranch = cfg.MainBranch
		if b.MainBranch == "" {
			b.MainBranch = "main"
		}
	}
	return append(jsondoc.Pretty(b), '\n'), nil
}

// readBaseline reads .baton/git.json; nil when baton init never recorded
// one (a project set up before baton recorded it).
func readBaseline(s *store.Store) (*gitBaseline, error) {
	data, err := store.ReadRegular(filepath.Join(s.BatonDir(), gitBaselineName))
	if err != nil || data == nil {
		return nil, err
	}
	var b gitBaseline
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(s.BatonDir(), gitBaselineName), err)
	}
	return &b, nil
}

// afterReviewed refuses a fix commit that is not after the reviewed head:
// the review already saw it, so it fixes nothing the review found.
func (st *state) afterReviewed(r gitops.Repo, issue, h, reviewed string) error {
	if reviewed == "" {
		return nil
	}
	rh, err := gitops.ResolveCommit(r, reviewed)
	if err != nil {
		return nil // a recorded hash that is gone: verify reports it
	}
	after, err := r.IsAncestor(rh, h)
	if err != nil {
		return gitErr(err, "checking commit %s", gitops.Short(h))
	}
	if !after || rh == h {
		return st.refuse(errs.New(errs.Policy, "--issues-fixed: %s: commit %s is not after %s, the commit the review saw: a fix is a new commit on the reviewed branch. Commit the fix there and record that commit", issue, gitops.Short(h), gitops.Short(rh)))
	}
	return nil
}
