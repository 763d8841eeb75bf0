package app

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/baton-cli/baton/internal/attest"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/store"
)

// Anyone's audit from a clone: with no state directory at all, what the
// repository carries — baton's merge commits (their Baton-Log trailers and
// SSH signatures), the attestations in NotesRef and the allowed-signers
// file — is held against itself and against trusted public keys.

// gitAudit checks landings against one repository's main.
type gitAudit struct {
	r       gitops.Repo
	keys    map[string]ed25519.PublicKey
	history map[string]bool // every commit on main
	notes   map[string][]byte
}

// newGitAudit reads main's history and the attestations.
func newGitAudit(r gitops.Repo, main string, keys map[string]ed25519.PublicKey) (gitAudit, []gitops.Commit, error) {
	head, err := r.Branch(main)
	if err != nil {
		return gitAudit{}, nil, gitErr(err, "reading %s", main)
	}
	commits, err := r.Range("", head)
	if err != nil {
		return gitAudit{}, nil, gitErr(err, "reading the history of %s", main)
	}
	g := gitAudit{r: r, keys: keys, history: make(map[string]bool, len(commits))}
	for _, c := range commits {
		g.history[c.Hash] = true
	}
	if g.notes, err = gitops.Notes(r, NotesRef); err != nil {
		return gitAudit{}, nil, gitErr(err, "reading %s", NotesRef)
	}
	return g, commits, nil
}

// landing opens commit's attestation: its statement, or what is wrong.
func (g gitAudit) landing(commit string) (attest.Landing, string) {
	note, ok := g.notes[commit]
	if !ok {
		return attest.Landing{}, fmt.Sprintf("it has no attestation in %s (fetch it: git fetch origin %s:%s)", NotesRef, NotesRef, NotesRef)
	}
	body, _, err := attest.Open(note, attest.PayloadType, g.keys)
	switch {
	case errors.Is(err, attest.ErrSignature):
		return attest.Landing{}, "its attestation's signature does not check with any trusted key: the note was edited, or signed by a key that is not trusted"
	case err != nil:
		return attest.Landing{}, fmt.Sprintf("its attestation is unreadable (%v): the note was replaced outside baton", err)
	}
	st, err := attest.ParseStatement(body)
	if err != nil {
		return attest.Landing{}, fmt.Sprintf("its attestation, though signed with a trusted key, is %v", err)
	}
	if st.Commit() != commit || st.Predicate.Merge.Commit != commit {
		return attest.Landing{}, fmt.Sprintf("its attestation is about commit %s, not this one: a note was copied onto another commit", gitops.Short(st.Commit()))
	}
	return st.Predicate, ""
}

// check holds landing l of commit against git: its tree, that its commits
// are main's, that the gate passed on exactly its tree.
func (g gitAudit) check(commit string, l attest.Landing) []string {
	var out []string
	if tree, err := g.r.TreeOf(commit); err != nil || tree != l.Merge.Tree {
		out = append(out, fmt.Sprintf("its tree is %s, but its attestation records %s", gitops.Short(tree), gitops.Short(l.Merge.Tree)))
	}
	if l.Gate != nil && l.Gate.Tree != l.Merge.Tree && !g.batchReached(commit, l) {
		out = append(out, fmt.Sprintf("its tree %s is not the tree %s the gate %q passed", gitops.Short(l.Merge.Tree), gitops.Short(l.Gate.Tree), l.Gate.Command))
	}
	inHistory := func(what, h string) {
		if h == "" {
			return
		}
		full, err := gitops.ResolveCommit(g.r, h)
		if err != nil || !g.history[full] {
			out = append(out, fmt.Sprintf("%s %s is not in main's history", what, gitops.Short(h)))
		}
	}
	inHistory("the reviewed head", l.Merge.Head)
	inHistory("main's previous head", l.Merge.Onto)
	for _, s := range l.Sessions {
		inHistory(fmt.Sprintf("session %d's (%s) last commit", s.ID, s.Role), s.To)
		for _, c := range s.Commits {
			inHistory(fmt.Sprintf("session %d's commit", s.ID), c)
		}
	}
	for _, rv := range l.Reviews {
		inHistory(fmt.Sprintf("review R%d's head", rv.ID), rv.To)
	}
	if n := len(l.Reviews); n > 0 && l.Reviews[n-1].To != "" && !strings.HasPrefix(l.Merge.Head, l.Reviews[n-1].To) {
		out = append(out, fmt.Sprintf("the merged head %s is not the head %s review R%d judged", gitops.Short(l.Merge.Head), gitops.Short(l.Reviews[n-1].To), l.Reviews[n-1].ID))
	}
	return out
}

// batchReached says whether landing l of commit was gated in a batch
// whose gated tree main reached: the gate run names several reviews, l's
// among them, and a later landing attested on main, descending from
// commit, has exactly that tree and passed a gate on it.
func (g gitAudit) batchReached(commit string, l attest.Landing) bool {
	n := len(l.Reviews)
	if len(l.Gate.Batch) < 2 || n == 0 || !slices.Contains(l.Gate.Batch, l.Reviews[n-1].ID) {
		return false
	}
	for c := range g.notes {
		if c == commit || !g.history[c] {
			continue
		}
		later, bad := g.landing(c)
		if bad != "" || later.Gate == nil || later.Gate.Tree != l.Gate.Tree || later.Merge.Tree != l.Gate.Tree {
			continue
		}
		if tree, err := g.r.TreeOf(c); err != nil || tree != l.Gate.Tree {
			continue
		}
		if on, err := g.r.IsAncestor(commit, c); err == nil && on {
			return true
		}
	}
	return false
}

// signature checks a merge commit baton wrote: signed in git's SSH format
// with a trusted key, or with the session key its (trusted) attestation
// names.
func (g gitAudit) signature(commit string, l *attest.Landing) string {
	sig, payload, err := g.r.CommitSignature(commit)
	switch {
	case err != nil:
		return err.Error()
	case sig == "":
		return "it is not signed: baton signs every merge commit it writes, so this one was written or rewritten outside baton"
	}
	pub, err := gitops.VerifySSH(sig, mergeNamespace, payload)
	if err != nil {
		return fmt.Sprintf("%v: the commit was rewritten after baton signed it", err)
	}
	if _, ok := g.keys[keyID(pub)]; ok {
		return ""
	}
	if l != nil && strings.HasPrefix(l.Merge.SignedBy, "session:") {
		if k, err := parsePublicKey([]byte(l.Merge.SessionKey)); err == nil && k.Equal(pub) {
			return ""
		}
	}
	return fmt.Sprintf("it is signed with key %s, which is neither a trusted key nor the session key its attestation names", keyID(pub))
}

// fromGitProblems checks every baton merge on main (a merge commit with a
// Baton-Log trailer) and every landing attested on main.
func (g gitAudit) fromGitProblems(main string, commits []gitops.Commit) ([]Problem, int) {
	var out []Problem
	checked := 0
	for _, c := range commits {
		baton := false
		if len(c.Parents) >= 2 {
			msg, _ := g.r.Message(c.Hash)
			baton = len(gitops.Trailers(msg, "Baton-Log")) > 0
		}
		if _, noted := g.notes[c.Hash]; !baton && !noted {
			continue
		}
		checked++
		bad := func(msg string) {
			out = append(out, Problem{"git-attestation", NotesRef, fmt.Sprintf("%s on %s: %s", landingName(c), main, msg)})
		}
		l, problem := g.landing(c.Hash)
		var lp *attest.Landing
		if problem != "" {
			bad(problem)
		} else {
			lp = &l
			for _, p := range g.check(c.Hash, l) {
				bad(p)
			}
		}
		if baton || (lp != nil && lp.Merge.Signed) {
			if p := g.signature(c.Hash, lp); p != "" {
				bad(p)
			}
		}
	}
	return out, checked
}

func landingName(c gitops.Commit) string {
	if len(c.Parents) >= 2 {
		return "merge commit " + gitops.Short(c.Hash)
	}
	return "landing " + gitops.Short(c.Hash)
}

// gitTrust are the keys a clone is checked with: --trusted-keys alone
// when given, else the person's own and those of the allowed-signers file
// the repository carries.
func (a *App) gitTrust(in VerifyInput, r gitops.Repo) (map[string]ed25519.PublicKey, string, error) {
	if in.TrustedKeys != "" {
		t, err := a.trustedKeys(in, "", nil)
		return t.keys, t.source, err
	}
	keys, source := a.localKeys(), "your key and its retired keys"
	path := filepath.Join(r.Top(), SignersName)
	b, err := store.ReadRegular(path)
	if err != nil {
		return nil, "", errs.New(errs.Unexpected, "reading %s: %v", path, err)
	}
	if b != nil {
		published, err := ParseSigners(path, b)
		if err != nil {
			return nil, "", err
		}
		for id, k := range published {
			keys[id] = k
		}
		source += " and those of the repository's " + SignersName
	}
	if len(keys) == 0 {
		return nil, "", errs.New(errs.NotFound, "--from-git checks signatures with public keys, and there are none: the repository has no %s and no --trusted-keys FILE was given", SignersName)
	}
	return keys, source, nil
}

// verifyFromGit is verify --from-git: the repository alone, no state.
func (a *App) verifyFromGit(_ context.Context, in VerifyInput) (VerifyResult, error) {
	r := a.repo()
	if r == nil {
		return VerifyResult{}, errs.New(errs.NotFound, "--from-git checks a git repository, and %s is not in one", a.env.Cwd)
	}
	keys, source, err := a.gitTrust(in, r)
	if err != nil {
		return VerifyResult{}, err
	}
	main, err := gitops.MainBranch(r, "")
	if err != nil {
		return VerifyResult{}, gitErr(err, "finding main")
	}
	g, commits, err := newGitAudit(r, main, keys)
	if err != nil {
		return VerifyResult{}, err
	}
	res := VerifyResult{GitChecked: true, Authenticated: true, FromGit: true, Notes: []string{"checked with " + source}}
	problems, n := g.fromGitProblems(main, commits)
	res.Problems, res.Landings = append([]Problem{}, problems...), n
	if res.Landings == 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%s holds no baton merge and no attestation: nothing was landed by baton here, or %s was not fetched", main, NotesRef))
	}
	res.OK = len(res.Problems) == 0
	return res, nil
}

// attestationProblems holds the attestations of the landings the log
// records on main against the log: one that does not check is a problem,
// a missing one a note (the launcher writes it at its next step).
func attestationProblems(r gitops.Repo, lr logRecords, main string, keys map[string]ed25519.PublicKey) ([]Problem, []string) {
	g, _, err := newGitAudit(r, main, keys)
	if err != nil {
		return nil, nil
	}
	var problems []Problem
	var notes []string
	for _, m := range lr.merges {
		full, err := gitops.ResolveCommit(r, m.commit)
		if err != nil || !g.history[full] || m.review == 0 {
			continue
		}
		if _, ok := g.notes[full]; !ok {
			notes = append(notes, fmt.Sprintf("the landing of review R%d as %s (entry %d) has no attestation in %s yet: it is written before the launcher's next step (docs/audit.md, Attestations)", m.review, gitops.Short(full), m.seq, NotesRef))
			continue
		}
		l, problem := g.landing(full)
		msgs := []string{problem}
		if problem == "" {
			msgs = g.check(full, l)
			if l.Log.Seq != m.seq || l.Log.Hash != lr.hashes[m.seq] {
				msgs = append(msgs, fmt.Sprintf("its attestation names log entry %d (%s), but the log records the landing at entry %d (%s)", l.Log.Seq, Short(l.Log.Hash), m.seq, Short(lr.hashes[m.seq])))
			}
		}
		for _, msg := range msgs {
			if msg != "" {
				problems = append(problems, Problem{"attestation", NotesRef, fmt.Sprintf("the landing of review R%d as %s (entry %d): %s", m.review, gitops.Short(full), m.seq, msg)})
			}
		}
	}
	return problems, notes
}
