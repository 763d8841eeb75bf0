package cmd

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/errs"
	"github.com/baton-cli/baton/features"
	"github.com/baton-cli/baton/gitops"
	"github.com/baton-cli/baton/jsondoc"
	"github.com/baton-cli/baton/progress"
	"github.com/baton-cli/baton/reviews"
	"github.com/baton-cli/baton/scripts"
	"github.com/baton-cli/baton/store"
)

type initOpts struct {
	Name       string
	Scripts    bool
	ScriptsDir string
	Hooks      bool
}

type initResult struct {
	StateDir string   `json:"state_dir"`
	Created  []string `json:"created"`
	Kept     []string `json:"kept"`
	Excluded []string `json:"excluded"`
	Scripts  []string `json:"scripts"`
	// ScriptBackups are the files --scripts found in its way (the
	// predecessor's scripts), kept under another name.
	ScriptBackups []scripts.Moved `json:"script_backups,omitempty"`
	Hooks         []string        `json:"hooks"`
	Baseline      string          `json:"git_baseline,omitempty"`
	// Migrated is what adopting a predecessor's state did (absent when
	// there was none to adopt).
	Migrated *migratedResult `json:"migrated,omitempty"`
}

func (a *App) newInitCmd() *cobra.Command {
	var o initOpts
	c := &cobra.Command{
		Use:   "init",
		Short: "Set up baton's state in a project (files, .baton/, git exclude, optional scripts and hooks)",
		Long: `Create progress.json, reviews.json and feature_list.json where missing (existing files are
kept), .baton/ with the default config, and entries in the repository's info/exclude so that no
checkout, merge or 'git add .' touches the state. In a repository, main's head is recorded in
.baton/git.json: 'baton verify' accounts for every commit on main after it. --scripts installs the
drop-in scripts/progress.py, reviews.py and features.py that hand predecessor-style calls to baton.
--hooks installs git hooks (pre-commit, pre-merge-commit, reference-transaction) refusing commits
and ref updates on main (a person's override is in the README, 'Git'); hooks baton did not write
are never overwritten.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.runInit(c.Context(), c.CommandPath(), o) },
	}
	c.Flags().StringVarP(&o.Name, "name", "n", "", "project name (default: the directory's name)")
	c.Flags().BoolVar(&o.Scripts, "scripts", false, "install scripts/progress.py, reviews.py, features.py")
	c.Flags().StringVar(&o.ScriptsDir, "scripts-dir", "scripts", "where --scripts installs them (relative to the state directory)")
	c.Flags().BoolVar(&o.Hooks, "hooks", false, "install git hooks refusing commits onto main")
	return c
}

func (a *App) runInit(ctx context.Context, cmdPath string, o initOpts) error {
	a.creating = true
	s, err := a.openStore("")
	if err != nil {
		return err
	}
	if gd := gitops.GitDirAt(s.Dir); gd != "" {
		return errs.New(errs.Usage, "%s is a git directory (a bare repository, or the .git of one): baton's state belongs in a repository's worktree, beside the code the agents change. Nothing was written; clone the repository ('git clone %s work') and run 'baton init' in the clone", s.Dir, gd)
	}
	res := initResult{StateDir: s.Dir, Created: []string{}, Kept: []string{}, Excluded: []string{}, Scripts: []string{}, Hooks: []string{}}
	if o.Name == "" {
		o.Name = filepath.Base(s.Dir)
	}
	if err := os.MkdirAll(s.BatonDir(), 0o755); err != nil {
		return err
	}
	err = a.update(ctx, cmdPath, "", func(st *state) error {
		if err := st.initControl(&res); err != nil {
			return err
		}
		var kept []string
		for _, name := range []string{features.FileName, reviews.FileName, progress.FileName} {
			old, err := st.tx.Read(name)
			if err != nil {
				return err
			}
			if old != nil {
				res.Kept = append(res.Kept, s.Path(name))
				kept = append(kept, name)
				continue
			}
			switch name {
			case features.FileName:
				st.feat = features.New()
			case reviews.FileName:
				st.rev = reviews.New()
			case progress.FileName:
				st.prog, st.progNew = progress.New(o.Name, 0, st.stamp(), a.head()), true
				if f, ok, err := st.featuresOpt(); err == nil && (!ok || len(f.All()) == 0) {
					// nothing to implement yet: the initializer writes the feature list
					if err := st.prog.SetStatus("current_phase", "INITIALIZER"); err != nil {
						return err
					}
				}
			}
			st.touch(name)
			res.Created = append(res.Created, s.Path(name))
		}
		// validate what was kept, so a broken file is reported now
		if _, _, err := st.featuresOpt(); err != nil {
			return err
		}
		if _, _, err := st.reviewsOpt(); err != nil {
			return err
		}
		if _, _, err := st.progressOpt(); err != nil {
			return err
		}
		scriptsDir := "" // --scripts replaces them: nothing to say about them
		if !o.Scripts {
			scriptsDir = filepath.Join(s.Dir, "scripts")
		}
		m, err := st.adoptPredecessor(kept, scriptsDir)
		res.Migrated = m
		return err
	})
	if err != nil {
		return err
	}
	excluded, err := a.excludeState(s.Dir, res.Migrated == nil)
	if err != nil {
		return err
	}
	res.Excluded = append(res.Excluded, excluded...)
	cfg, err := s.LoadConfig()
	if err != nil {
		return err
	}
	if o.Hooks {
		if _, res.Hooks, err = a.installHooks(cfg); err != nil {
			return err
		}
	}
	if o.Scripts {
		dir := o.ScriptsDir
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(s.Dir, dir)
		}
		if res.Scripts, res.ScriptBackups, err = scripts.Install(dir); err != nil {
			return errs.New(errs.Unexpected, "installing scripts into %s: %v", dir, err)
		}
	}
	return a.emit(res, func(w io.Writer) {
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
}

// initControl creates, in the init transaction, the control files that do
// not exist: the default config, and in a repository the record of main's
// head. Files the audit log records are never recreated: the drift check
// has already refused a transaction in which one went missing.
func (st *state) initControl(res *initResult) error {
	s := st.tx.Store()
	old, err := st.tx.Read(configName)
	if err != nil {
		return err
	}
	if old == nil {
		st.tx.Write(configName, append(jsondoc.Pretty(store.DefaultConfig()), '\n'))
		st.touch(configName)
		res.Created = append(res.Created, s.ConfigPath())
	}
	cfg, err := s.LoadConfig()
	if err != nil {
		return err
	}
	b, err := st.app.baseline(cfg)
	if b == nil || err != nil {
		return err
	}
	if old, err := st.tx.Read(baselineName); err != nil || old != nil {
		return err
	}
	st.tx.Write(baselineName, b)
	st.touch(baselineName)
	res.Baseline = s.Path(baselineName)
	return nil
}

// stateEntries are the info/exclude patterns that keep state out of code
// branches.
var stateEntries = []string{"/" + progress.FileName, "/" + reviews.FileName, "/" + features.FileName, "/.baton/"}

// excludeState adds the state files to the repository's info/exclude when
// dir is the top of a main worktree, and warns about any already tracked.
func (a *App) excludeState(dir string, warnTracked bool) ([]string, error) {
	if store.MainWorktree(dir) != dir {
		return nil, nil
	}
	gitDir := filepath.Join(dir, ".git")
	if fi, err := os.Stat(gitDir); err != nil || !fi.IsDir() {
		return nil, nil
	}
	path := filepath.Join(gitDir, "info", "exclude")
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	text, add := gitops.WithExcludes(old, "# baton state: kept out of code branches", stateEntries)
	if len(add) > 0 {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := store.WriteFileAtomic(path, text, 0o644); err != nil {
			return nil, err
		}
	}
	tracked, err := gitops.Tracked(dir, []string{progress.FileName, reviews.FileName, features.FileName})
	if err == nil && len(tracked) > 0 && warnTracked {
		a.warn("%s tracked by git: a checkout or merge can rewind them. Run: git rm --cached %s && git commit", strings.Join(tracked, ", "), strings.Join(tracked, " "))
	}
	return add, nil
}
