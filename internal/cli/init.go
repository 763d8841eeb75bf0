package cli

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/internal/app"
)

func (a *App) newInitCmd() *cobra.Command {
	var o app.InitInput
	c := &cobra.Command{
		Use:   "init",
		Short: "Set up baton's state in a project (files, .baton/, git exclude, optional scripts and hooks)",
		Long: `Create progress.json, reviews.json and feature_list.json where missing (existing files are
kept), .baton/ with the default config, and entries in the repository's info/exclude so that no
checkout, merge or 'git add .' touches the state. In a repository, main's head is recorded in
.baton/git.json: 'baton verify' accounts for every commit on main after it. --scripts installs the
drop-in scripts/progress.py, reviews.py and features.py that hand predecessor-style calls to baton;
a script of other content found there (the predecessor's own, or a link to it) is kept as
NAME.predecessor, never overwritten. State files the predecessor wrote (no baton audit log yet) are
adopted: their recorded phase, feature and branch (recomputed only where the files prove them
over), the counters recounted, their sessions, reviews and fixes imported into the log as history,
and their anomalies listed with what to do (docs/migration.md).
--hooks installs git hooks (pre-commit, pre-merge-commit, reference-transaction) refusing commits
and ref updates on main (a person's override is in docs/git.md); hooks baton did not write
are never overwritten. State files git tracks (the predecessor committed them on whatever branch
was checked out) stop being tracked on every local branch whose tip carries them: one commit per
branch removes them from its tree, their contents stay in the working tree, so that no later
checkout, merge or stash rewinds or deletes them. --dry-run shows these steps and writes nothing.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			res, err := a.app.Init(c.Context(), a.caller(), o)
			if err != nil {
				return err
			}
			return a.emit(res, func(w io.Writer) {
				if res.DryRun {
					writeInitDryRun(w, res)
					return
				}
				printf(w, "SUCCESS: Initialized baton state in %s", res.StateDir)
				for _, p := range res.Created {
					printf(w, "  created  %s", p)
				}
				for _, p := range res.Kept {
					printf(w, "  kept     %s", p)
				}
				if len(res.Excluded) > 0 {
					printf(w, "  excluded from git: %s", strings.Join(res.Excluded, " "))
				}
				for _, m := range res.ScriptBackups {
					printf(w, "  backup   %s -> %s (found in the way of baton's scripts; kept, not overwritten)", m.From, m.To)
				}
				for _, p := range res.Scripts {
					printf(w, "  script   %s", p)
				}
				for _, u := range res.Untracked {
					printf(w, "  untracked %s on %s: commit %s (the files are kept as they are)", strings.Join(u.Paths, " "), u.Branch, short(u.To))
				}
				if res.Baseline != "" {
					printf(w, "  recorded main's head in %s", res.Baseline)
				}
				for _, p := range res.Hooks {
					printf(w, "  hook     %s", p)
				}
				if res.Migrated != nil {
					writeMigrated(w, res.Migrated)
				}
			})
		},
	}
	c.Flags().StringVarP(&o.Name, "name", "n", "", "project name (default: the directory's name)")
	c.Flags().BoolVar(&o.Scripts, "scripts", false, "install scripts/progress.py, reviews.py, features.py")
	c.Flags().StringVar(&o.ScriptsDir, "scripts-dir", "scripts", "where --scripts installs them (relative to the state directory)")
	c.Flags().BoolVar(&o.Hooks, "hooks", false, "install git hooks refusing commits onto main")
	c.Flags().BoolVar(&o.DryRun, "dry-run", false, "print what init would do (files, untracking commits) and write nothing")
	return c
}

// writeInitDryRun prints what init would do.
func writeInitDryRun(w io.Writer, res app.InitResult) {
	printf(w, "DRY RUN: baton init in %s would (nothing was written):", res.StateDir)
	for _, p := range res.Created {
		printf(w, "  create   %s", p)
	}
	for _, p := range res.Kept {
		printf(w, "  keep     %s", p)
	}
	for _, u := range res.Untracked {
		where := ""
		if len(u.Worktrees) > 0 {
			where = ", and drop them from the index of " + strings.Join(u.Worktrees, ", ")
		}
		printf(w, "  untrack  %s on %s: one commit on top of %s removing them from the branch's tree%s; the files themselves are kept", strings.Join(u.Paths, " "), u.Branch, short(u.From), where)
	}
}

// short abbreviates a commit hash as git's --short does by default.
func short(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	return h
}
