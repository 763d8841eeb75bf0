package app

import (
	"fmt"
	"os"
	"strings"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/store"
)

// Untracked is one branch on which init stopped git tracking the state
// files: its head before, and the commit init made on it (empty in a dry
// run).
type Untracked struct {
	Branch    string   `json:"branch"`
	Paths     []string `json:"paths"`
	From      string   `json:"from"`
	To        string   `json:"to,omitempty"`
	Worktrees []string `json:"worktrees,omitempty"`
}

// untrackMessage is the commit message of init's untracking commits.
const untrackMessage = "baton init: stop tracking the state files\n\nprogress.json, reviews.json and feature_list.json are baton's state: kept out of\ncode branches so that no checkout, merge or stash rewinds or deletes them.\nTheir contents stay in the working tree, unchanged."

// untrackState stops git tracking the state files on every local branch
// whose tip carries them, one commit each, keeping the files as they are.
// It acts only on a state directory at the top of a main worktree that
// has no audit log yet: afterwards main moves only by recorded merges.
func (a *App) untrackState(s *store.Store, dry bool) ([]Untracked, error) {
	if store.MainWorktree(s.Dir) != s.Dir || gitops.GitDirAt(s.Dir) != "" {
		return nil, nil
	}
	if fi, err := os.Stat(s.EventsPath()); err == nil && fi.Size() > 0 {
		return nil, nil
	}
	if anchors, broken := s.Anchors(); len(anchors) > 0 || len(broken) > 0 {
		return nil, nil
	}
	if _, err := gitops.Locate(s.Dir); err != nil {
		return nil, nil
	}
	carriers, err := gitops.Carriers(s.Dir, stateFiles)
	if err != nil {
		return nil, errs.New(errs.Unexpected, "listing the branches that track the state files: %v", err)
	}
	var out []Untracked
	for _, c := range carriers {
		u := Untracked{Branch: c.Branch, Paths: c.Paths, From: c.Head, Worktrees: c.Worktrees}
		if !dry {
			if u.To, err = gitops.Untrack(s.Dir, c, untrackMessage); err != nil {
				return out, errs.New(errs.Unexpected, "stopping git tracking %s on branch %s: %v; the files are unchanged, and 'baton init' again finishes the branches left", strings.Join(c.Paths, ", "), c.Branch, err)
			}
		}
		out = append(out, u)
	}
	return out, nil
}

// untrackedNames names the branches untracked, with their new commits.
func untrackedNames(list []Untracked) []string {
	var out []string
	for _, u := range list {
		out = append(out, fmt.Sprintf("%s (%s)", u.Branch, gitops.Short(u.To)))
	}
	return out
}

// recordUntracked adds the untracking commits to the init entry's record.
func (st *state) recordUntracked(list []Untracked) {
	rec, _ := st.record.(map[string]any)
	if rec == nil {
		rec = map[string]any{}
	}
	rec["untracked"] = list
	st.record = rec
	note := "stopped git tracking the state files on " + strings.Join(untrackedNames(list), ", ")
	if st.summary == "" {
		st.summary = note
	} else {
		st.summary += "; " + note
	}
}
