package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/baton-cli/baton/bridge"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/scripts"
	"github.com/baton-cli/baton/internal/store"
)

// InitInput is what init takes.
type InitInput struct {
	Name       string `json:"name,omitempty"`        // project name (default: the directory's)
	Scripts    bool   `json:"scripts,omitempty"`     // install the drop-in scripts
	ScriptsDir string `json:"scripts_dir,omitempty"` // where, relative to the state directory
	Hooks      bool   `json:"hooks,omitempty"`       // install the git hooks
	DryRun     bool   `json:"dry_run,omitempty"`     // say what init would do, write nothing
}

// InitResult is what init created, kept and installed.
type InitResult struct {
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
	// Untracked are the branches on which init stopped git tracking the
	// state files (in a dry run: would stop).
	Untracked []Untracked `json:"untracked,omitempty"`
	DryRun    bool        `json:"dry_run,omitempty"`
	// Migrated is what adopting a predecessor's state did (absent when
	// there was none to adopt).
	Migrated *Migrated `json:"migrated,omitempty"`
}

// initControl creates, in the init transaction, the control files that do
// not exist: the default config, and in a repository the record of main's
// head. Files the audit log records are never recreated: the drift check
// has already refused a transaction in which one went missing.
func (st *state) initControl(res *InitResult) error {
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

// stateEntries are the files baton writes in the state directory, which
// info/exclude keeps out of code branches.
var stateEntries = []string{progress.FileName, reviews.FileName, features.FileName, ".baton/", bridge.RequestFile, bridge.ResponseFile}

// excludeState lists the state in the info/exclude of the repository
// enclosing dir (wherever in its worktree the state directory is). It is
// idempotent: every command that may create state runs it before its
// first write. extra names more files of the state directory.
func (a *App) excludeState(dir string, extra ...string) ([]string, error) {
	add, err := gitops.Exclude(dir, "# baton state: kept out of code branches", append(append([]string(nil), stateEntries...), extra...))
	if err != nil {
		return nil, errs.New(errs.Unexpected, "keeping the state out of git (info/exclude): %v", err)
	}
	a.excluded = append(a.excluded, add...)
	return add, nil
}

// warnTracked warns about state files git already tracks (a checkout or
// merge can rewind them), when dir is the top of a main worktree.
func (a *App) warnTracked(dir string) {
	if store.MainWorktree(dir) != dir {
		return
	}
	tracked, err := gitops.Tracked(dir, []string{progress.FileName, reviews.FileName, features.FileName})
	if err == nil && len(tracked) > 0 {
		a.warn("%s tracked by git: a checkout or merge can rewind them. baton stops tracking them only before its audit log begins; README, 'Migrating from the predecessor', says what to do now", strings.Join(tracked, ", "))
	}
}

// Init sets up baton's state in a project: the files where missing, .baton/, the git exclude, optionally the drop-in scripts and the hooks.
func (a *App) Init(ctx context.Context, c Caller, in InitInput) (InitResult, error) {
	var out InitResult
	err := a.as(c).runInit(ctx, "baton init", in, &out)
	return out, err
}

func (a *App) runInit(ctx context.Context, cmdPath string, o InitInput, dst *InitResult) error {
	a.creating = true
	s, err := a.openStore("")
	if err != nil {
		return err
	}
	if gd := gitops.GitDirAt(s.Dir); gd != "" {
		return errs.New(errs.Usage, "%s is a git directory (a bare repository, or the .git of one): baton's state belongs in a repository's worktree, beside the code the agents change. Nothing was written; clone the repository ('git clone %s work') and run 'baton init' in the clone", s.Dir, gd)
	}
	res := InitResult{StateDir: s.Dir, Created: []string{}, Kept: []string{}, Excluded: []string{}, Scripts: []string{}, Hooks: []string{}}
	if o.Name == "" {
		o.Name = filepath.Base(s.Dir)
	}
	if o.DryRun {
		return a.initDryRun(s, &res, dst)
	}
	if err := os.MkdirAll(s.BatonDir(), 0o755); err != nil {
		return err
	}
	err = a.update(ctx, cmdPath, "", func(st *state) error {
		// before main's head is recorded: the untracking commit is the start
		if res.Untracked, err = a.untrackState(s, false); err != nil {
			return err
		}
		if err := st.initControl(&res); err != nil {
			return err
		}
		kept, err := st.initFiles(s, o.Name, &res)
		if err != nil {
			return err
		}
		scriptsDir := "" // --scripts replaces them: nothing to say about them
		if !o.Scripts {
			scriptsDir = filepath.Join(s.Dir, "scripts")
		}
		res.Migrated, err = st.adoptPredecessor(kept, scriptsDir, untrackedNames(res.Untracked))
		if len(res.Untracked) > 0 {
			st.recordUntracked(res.Untracked)
		}
		return err
	})
	if err != nil {
		return err
	}
	if err := a.initOutside(s, o, &res); err != nil {
		return err
	}
	*dst = res
	return nil
}

// initDryRun says what init would do in s, writing nothing: the state
// files it would create or keep, and the branches on which it would stop
// git tracking them.
func (a *App) initDryRun(s *store.Store, res *InitResult, dst *InitResult) error {
	res.DryRun = true
	for _, file := range stateFiles {
		if _, err := os.Stat(s.Path(file)); err == nil {
			res.Kept = append(res.Kept, s.Path(file))
		} else {
			res.Created = append(res.Created, s.Path(file))
		}
	}
	var err error
	if res.Untracked, err = a.untrackState(s, true); err != nil {
		return err
	}
	*dst = *res
	return nil
}

// initFiles creates the state files that are missing and validates the
// ones kept, so that a broken file is reported now. It returns the names
// of the files kept.
func (st *state) initFiles(s *store.Store, name string, res *InitResult) ([]string, error) {
	a := st.app
	var kept []string
	for _, file := range []string{features.FileName, reviews.FileName, progress.FileName} {
		old, err := st.tx.Read(file)
		if err != nil {
			return nil, err
		}
		if old != nil {
			res.Kept = append(res.Kept, s.Path(file))
			kept = append(kept, file)
			continue
		}
		switch file {
		case features.FileName:
			st.feat = features.New()
		case reviews.FileName:
			st.rev = reviews.New()
		case progress.FileName:
			st.prog, st.progNew = progress.New(name, 0, st.stamp(), a.head()), true
			if f, ok, err := st.featuresOpt(); err == nil && (!ok || len(f.All()) == 0) {
				// nothing to implement yet: the initializer writes the feature list
				if err := st.prog.SetStatus("current_phase", "INITIALIZER"); err != nil {
					return nil, err
				}
			}
		}
		st.touch(file)
		res.Created = append(res.Created, s.Path(file))
	}
	if _, _, err := st.featuresOpt(); err != nil {
		return nil, err
	}
	if _, _, err := st.reviewsOpt(); err != nil {
		return nil, err
	}
	_, _, err := st.progressOpt()
	return kept, err
}

// initOutside does init's work outside the state files: git's exclude,
// the hooks and the drop-in scripts.
func (a *App) initOutside(s *store.Store, o InitInput, res *InitResult) error {
	if _, err := a.excludeState(s.Dir); err != nil {
		return err
	}
	if res.Migrated == nil { // adopting a predecessor's state lists them once, with the rest
		a.warnTracked(s.Dir)
	}
	res.Excluded = append(res.Excluded, a.excluded...)
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
	return nil
}
