package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/baton-cli/baton/internal/attest"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/gitops"
)

// A feature's story told from a clone: the attestations of its landings
// on main, each checked as verify --from-git checks it.

// GitLanding is one attested landing on main, with what its check found.
type GitLanding struct {
	Commit   string          `json:"commit"`
	Landing  *attest.Landing `json:"landing"`
	Problems []string        `json:"problems"`
}

// GitStory is an item's landings, oldest first.
type GitStory struct {
	ID       string       `json:"id"`
	Landings []GitLanding `json:"landings"`
}

// gitLandings reads every attested landing on main, checked, oldest
// first, with the keys' source.
func (a *App) gitLandings(in VerifyInput) ([]GitLanding, string, error) {
	r := a.repo()
	if r == nil {
		return nil, "", errs.New(errs.NotFound, "--from-git reads a git repository, and %s is not in one", a.env.Cwd)
	}
	keys, source, err := a.gitTrust(in, r)
	if err != nil {
		return nil, "", err
	}
	main, err := gitops.MainBranch(r, "")
	if err != nil {
		return nil, "", gitErr(err, "finding main")
	}
	g, commits, err := newGitAudit(r, main, keys)
	if err != nil {
		return nil, "", err
	}
	out := []GitLanding{}
	for _, c := range commits {
		if _, ok := g.notes[c.Hash]; !ok {
			continue
		}
		gl := GitLanding{Commit: c.Hash, Problems: []string{}}
		l, problem := g.landing(c.Hash)
		if problem != "" {
			gl.Problems = append(gl.Problems, problem)
		} else {
			gl.Landing = &l
			gl.Problems = append(gl.Problems, g.check(c.Hash, l)...)
			if l.Merge.Signed {
				if p := g.signature(c.Hash, &l); p != "" {
					gl.Problems = append(gl.Problems, p)
				}
			}
		}
		out = append(out, gl)
	}
	return out, source, nil
}

// ShowFromGit is the story of item id from the attestations alone.
func (a *App) ShowFromGit(ctx context.Context, c Caller, id string) (GitStory, error) {
	a = a.as(c)
	all, _, err := a.gitLandings(VerifyInput{})
	if err != nil {
		return GitStory{}, err
	}
	st := GitStory{ID: strings.TrimSpace(id), Landings: []GitLanding{}}
	for _, gl := range all {
		if l := gl.Landing; l != nil && (l.Item.ID == st.ID || contains(l.Item.Features, st.ID)) {
			st.Landings = append(st.Landings, gl)
		}
	}
	if len(st.Landings) == 0 {
		return st, errs.New(errs.NotFound, "no landing of %s on main is attested in %s (fetch it: git fetch origin %s:%s)", st.ID, NotesRef, NotesRef, NotesRef)
	}
	return st, nil
}

// ReportFromGit is the audit report's data from the attestations alone:
// one story per item, its reviews and merges, and verify --from-git.
func (a *App) ReportFromGit(ctx context.Context, c Caller) (ReportData, error) {
	a = a.as(c)
	all, source, err := a.gitLandings(VerifyInput{})
	if err != nil {
		return ReportData{}, err
	}
	r := a.repo()
	d := ReportData{Project: filepath.Base(r.Top()), StateDir: "the git repository alone (" + NotesRef + ", checked with " + source + ")", Events: []LogLine{}, Refused: []LogLine{}}
	byItem := map[string]int{}
	for _, gl := range all {
		l := gl.Landing
		if l == nil {
			continue
		}
		i, ok := byItem[l.Item.ID]
		if !ok {
			i, byItem[l.Item.ID] = len(d.Stories), len(d.Stories)
			d.Stories = append(d.Stories, Story{ID: l.Item.ID, Name: l.Item.Branch, Kind: storyKind(l.Item.Kind), Passes: true, Sessions: []map[string]any{}, Reviews: []map[string]any{},
				Fixes: []map[string]any{}, Issues: []StoryIssue{}, Commits: []storyCommit{}, Merges: []StoryMerge{}, Gates: []StoryGate{}, Refused: []LogLine{}, Events: []LogLine{}, Warnings: gl.Problems})
		}
		d.Stories[i].addLanding(*l)
		d.Merges = append(d.Merges, StoryMerge{ReviewID: lastReview(*l), Verdict: "PASS", Branch: l.Item.Branch, MergeCommit: l.Merge.Commit, MergedOnto: l.Merge.Onto, MergedAt: l.Log.At})
		for _, rv := range l.Reviews {
			d.Reviews = append(d.Reviews, ReportReview{ID: rv.ID, Verdict: rv.Verdict, Agent: rv.Role, Features: strings.Join(l.Item.Features, ", "), Branch: l.Item.Branch, Range: rv.From + ".." + rv.To})
		}
	}
	if d.Verify, err = a.verifyFromGit(ctx, VerifyInput{}); err != nil {
		d.Verify, d.VerifyError = VerifyResult{Problems: []Problem{}}, err.Error()
	}
	return d, nil
}

// addLanding adds a landing's sessions, reviews, merge and gate run.
func (st *Story) addLanding(l attest.Landing) {
	for _, s := range l.Sessions {
		st.Sessions = append(st.Sessions, map[string]any{"session_id": s.ID, "agent_type": s.Role, "commit_range": map[string]any{"from": s.From, "to": s.To}})
		for _, c := range s.Commits {
			st.addCommit(storyCommit{Hash: c, SessionID: s.ID, Role: s.Role})
		}
	}
	for _, rv := range l.Reviews {
		st.Reviews = append(st.Reviews, map[string]any{"review_id": rv.ID, "verdict": rv.Verdict, "agent_type": rv.Role, "session_id": rv.Session, "branch": l.Item.Branch,
			"commit_range": map[string]any{"from": rv.From, "to": rv.To}})
	}
	st.Merges = append(st.Merges, StoryMerge{ReviewID: lastReview(l), Verdict: "PASS", Branch: l.Item.Branch, MergeCommit: l.Merge.Commit, MergedOnto: l.Merge.Onto, MergedAt: l.Log.At})
	if g := l.Gate; g != nil {
		st.Gates = append(st.Gates, StoryGate{Seq: l.Log.Seq, GateRun: GateRun{Command: g.Command, Tree: g.Tree, ExitCode: g.ExitCode, Digest: g.Digest}})
	}
	at := l.Log.At
	st.FinishedAt = &at
}

func lastReview(l attest.Landing) int {
	if len(l.Reviews) == 0 {
		return 0
	}
	return l.Reviews[len(l.Reviews)-1].ID
}

// storyKind is an attested item's kind as a story names it.
func storyKind(kind string) string {
	switch kind {
	case "bug":
		return "BUG"
	case "debt":
		return "DEBT"
	}
	return "FEAT"
}

// String is a landing's one-line account.
func (gl GitLanding) String() string {
	if gl.Landing == nil {
		return fmt.Sprintf("%s: %s", gitops.Short(gl.Commit), strings.Join(gl.Problems, "; "))
	}
	m := gl.Landing.Merge
	how := "merge commit"
	if m.FastForward {
		how = "fast-forward"
	}
	return fmt.Sprintf("%s (%s onto %s, head %s, tree %s), log entry %d at %s", gitops.Short(m.Commit), how, gitops.Short(m.Onto), gitops.Short(m.Head), gitops.Short(m.Tree), gl.Landing.Log.Seq, gl.Landing.Log.At)
}
