package app

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/baton-cli/baton/internal/ctxpack"
	"github.com/baton-cli/baton/internal/gitops"
)

// maxContextCommits is how many commits of a branch the context lists.
const maxContextCommits = 30

// gitFacts says what git knows about branch: whether it exists, its merge
// base with main, its commits and diff stat. Outside a repository it is
// only the configured main branch's name.
func (a *App) gitFacts(sn *snapshot, branch string) ctxpack.Git {
	g := ctxpack.Git{Branch: branch, Main: sn.cfg.MainBranch}
	r := a.repo()
	if r == nil {
		if g.Main == "" {
			g.Main = "main"
		}
		return g
	}
	main, head, err := mainOf(r, sn.cfg)
	if err != nil {
		if g.Main == "" {
			g.Main = "main"
		}
		return g
	}
	g.Main, g.Head = main, gitops.Short(head)
	if branch == "" {
		return g
	}
	tip, err := r.Branch(branch)
	if err != nil || tip == "" {
		return g
	}
	g.BranchExists, g.Tip = true, gitops.Short(tip)
	dir := r.Top()
	if base, err := GitOut(dir, "merge-base", main, tip); err == nil {
		g.MergeBase = gitops.Short(base)
	}
	if out, err := GitOut(dir, "log", "--reverse", "--format=%h %s", main+".."+tip); err == nil && out != "" {
		g.Commits = strings.Split(out, "\n")
		if len(g.Commits) > maxContextCommits {
			g.Commits = append([]string{"… " + strconv.Itoa(len(g.Commits)-maxContextCommits) + " earlier commits"}, g.Commits[len(g.Commits)-maxContextCommits:]...)
		}
	}
	if out, err := GitOut(dir, "diff", "--stat=100", main+"..."+tip); err == nil {
		g.DiffStat = shortStat(out)
	}
	return g
}

// maxStatLines is how many files of a diff stat the context lists.
const maxStatLines = 40

// shortStat keeps the first files of a diff stat and its summary line.
func shortStat(stat string) string {
	lines := strings.Split(stat, "\n")
	if len(lines) <= maxStatLines+1 {
		return stat
	}
	more := len(lines) - 1 - maxStatLines
	return strings.Join(append(lines[:maxStatLines], " … "+strconv.Itoa(more)+" more files", lines[len(lines)-1]), "\n")
}

// gitSince fills g with main's commits and diff stat since the time of
// the last architecture review (an ISO 8601 timestamp): what changed since.
func (a *App) gitSince(g *ctxpack.Git, since string) {
	r := a.repo()
	if r == nil || since == "" || g.Main == "" {
		return
	}
	dir := r.Top()
	from, err := GitOut(dir, "rev-list", "-1", "--before="+since, g.Main)
	if err != nil || from == "" {
		return
	}
	g.MergeBase = gitops.Short(from)
	if out, err := GitOut(dir, "log", "--reverse", "--first-parent", "--format=%h %s", from+".."+g.Main); err == nil && out != "" {
		g.Commits = strings.Split(out, "\n")
		if len(g.Commits) > maxContextCommits {
			g.Commits = append([]string{"… " + strconv.Itoa(len(g.Commits)-maxContextCommits) + " earlier commits"}, g.Commits[len(g.Commits)-maxContextCommits:]...)
		}
	}
	if out, err := GitOut(dir, "diff", "--stat=100", from, g.Main); err == nil {
		g.DiffStat = shortStat(out)
	}
}

// GitOut runs git with args in dir and returns its trimmed output.
func GitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}
