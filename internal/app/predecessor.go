package app

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/prompts"
	"github.com/baton-cli/baton/internal/scripts"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

// Predecessor is what 'baton run --prompts' needs to run the predecessor's
// prompt files in place of its orchestrator.
type Predecessor struct {
	Dir          string // the directory holding its prompt files
	InputFile    string // the brownfield start's free-form input ("": none)
	FeatureCount int    // FEATURE_COUNT for its INITIALIZER (how many features to write)
	brownfield   bool   // the BROWNFIELD_INITIALIZER session is still to open
	// files are the prompt files as the run read them at its start, by
	// name: every session of the run is given these, so that an agent
	// that edits a later role's prompt file (REVIEW's, say) does not
	// write that role's instructions.
	files map[string][]byte
}

// UsePredecessor makes the run's prompts the predecessor's files in p.Dir.
func (a *App) UsePredecessor(p *Predecessor) error {
	if fi, err := os.Stat(p.Dir); err != nil || !fi.IsDir() {
		return errs.New(errs.NotFound, "--prompts: %s is not a directory: give the directory holding the predecessor's prompt files (coding_prompt.md, reviewer_prompt.md, ...)", p.Dir)
	}
	if missing := prompts.CheckPredecessorDir(p.Dir); len(missing) > 0 {
		return errs.New(errs.NotFound, "--prompts: %s lacks %s: the directory holds the predecessor's prompt files, one per role; nothing was opened", p.Dir, strings.Join(missing, ", "))
	}
	p.brownfield = p.InputFile != ""
	p.files = map[string][]byte{}
	for _, name := range prompts.PredecessorFiles {
		b, err := os.ReadFile(filepath.Join(p.Dir, name))
		if err != nil {
			return errs.New(errs.NotFound, "--prompts: %v: nothing was opened", err)
		}
		p.files[name] = b
	}
	a.pred = p
	return nil
}

// predecessorStep adapts the next step to the predecessor's prompts: the
// brownfield start's first session is BROWNFIELD_INITIALIZER; IMPLEMENT and
// BUGFIX name their branch themselves (its prompts run 'git checkout -b').
func (a *App) predecessorStep(p *Planned) {
	if a.pred == nil {
		return
	}
	if a.pred.brownfield && p.Role == workflow.PhaseInitializer {
		p.Role = "BROWNFIELD_INITIALIZER"
	}
	if p.Role == workflow.PhaseImplement || p.Role == workflow.PhaseBugfix {
		p.Branch = ""
	}
}

// renderPredecessor renders role's predecessor prompt file with its
// placeholders.
func (a *App) renderPredecessor(d prompts.Data, role string) (string, error) {
	values := d.Values(filepath.Base(a.pred.InputFile), a.pred.FeatureCount)
	if name, ok := prompts.PredecessorFiles[strings.ToUpper(role)]; ok && a.pred.files[name] != nil {
		path := filepath.Join(a.pred.Dir, name)
		if now, err := os.ReadFile(path); err != nil || !bytes.Equal(now, a.pred.files[name]) {
			a.warn("%s changed since this run started: the %s session is given the prompt as the run read it then; look at the change before the next run", path, role)
		}
		return prompts.Substitute(string(a.pred.files[name]), values), nil
	}
	out, err := prompts.RenderPredecessor(a.pred.Dir, role, values)
	var pe *prompts.Error
	if errors.As(err, &pe) {
		return "", errs.New(errs.NotFound, "%v; no session was opened", pe)
	}
	return out, err
}

// OpenedPredecessorStep notes that the step of role was opened: the
// brownfield start happens once.
func (a *App) OpenedPredecessorStep(role string) {
	if a.pred != nil && role == "BROWNFIELD_INITIALIZER" {
		a.pred.brownfield = false
	}
}

// PreparePredecessor readies the project for the predecessor's prompts
// before the first session: a git repository (its INITIALIZER runs 'git
// add .' before any baton command), the state and its session summaries
// (progress/ in the state directory, which its prompts commit with the
// state) kept out of git, git's hint to force-add an ignored path turned
// off, the drop-in scripts in scripts/, and the brownfield input copied
// into the project as its orchestrator did.
func (a *App) PreparePredecessor() error {
	dir, _, err := a.StateDirs()
	if err != nil {
		return err
	}
	top := a.env.Cwd
	if r := a.repo(); r != nil {
		top = r.Top()
	} else if _, err := GitOut(top, "init", "-q", "-b", "main"); err != nil {
		return errs.New(errs.Unexpected, "--prompts: %s is not in a git repository and 'git init' failed: %v", top, err)
	}
	if _, err := a.excludeState(dir, "progress/"); err != nil {
		return err
	}
	if _, err := GitOut(top, "config", "advice.addIgnoredFile", "false"); err != nil {
		return errs.New(errs.Unexpected, "--prompts: %v", err)
	}
	if err := a.predecessorScripts(top); err != nil {
		return err
	}
	if a.pred.InputFile != "" {
		return copyInput(a.pred.InputFile, top)
	}
	return nil
}

// predecessorScripts installs baton's drop-in scripts in top/scripts;
// scripts of another kind found there (the predecessor's own, or its link
// to them) are kept under another name, as 'baton init --scripts' keeps
// them, and named.
func (a *App) predecessorScripts(top string) error {
	dir := filepath.Join(top, "scripts")
	_, moved, err := scripts.Install(dir)
	if err != nil {
		return errs.New(errs.Unexpected, "installing the drop-in scripts into %s: %v", dir, err)
	}
	for _, m := range moved {
		a.notice("[baton run] %s was not baton's drop-in script: kept as %s; the prompts' scripts/ calls now go through baton", m.From, m.To)
	}
	return nil
}

// copyInput copies the brownfield input into the project under its own
// name, as the predecessor did (its prompt reads {{INPUT_FILE}} there).
func copyInput(src, top string) error {
	dst := filepath.Join(top, filepath.Base(src))
	if abs, err := filepath.Abs(src); err == nil && abs == dst {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return errs.New(errs.NotFound, "--input-file: %v", err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return errs.New(errs.Unexpected, "--input-file: copying into the project: %v", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("--input-file: copying into the project: %w", err)
	}
	return out.Close()
}

// PredecessorWorktree installs the drop-in scripts again and checks out
// what the predecessor's prompt for role takes for granted: IMPLEMENT and BUGFIX branch off what is checked out
// ('git checkout -b'), so they start on main; GLOBAL_FIX commits where it
// stands, so it starts on its refactor branch (made from main). A checkout
// with uncommitted changes is left as it is, with a warning.
func (a *App) PredecessorWorktree(role, branch string) {
	r := a.repo()
	if r == nil {
		return
	}
	// the drop-in scripts every session runs are baton's again: a session
	// that rewrote one (to turn a later REVIEW's verdict into a PASS, say)
	// scripts no other session; what it left is kept aside and named
	if err := a.predecessorScripts(r.Top()); err != nil {
		a.warn("%s session: %v", role, err)
	}
	cfg := store.DefaultConfig()
	if s, err := a.openStore(""); err == nil {
		if c, err := s.LoadConfig(); err == nil {
			cfg = c
		}
	}
	main, _, err := mainOf(r, cfg)
	if err != nil {
		return
	}
	var args []string
	switch {
	case role == workflow.PhaseImplement || role == workflow.PhaseBugfix:
		args = []string{"checkout", "-q", main}
	case role == workflow.PhaseGlobalFix && branch != "":
		args = []string{"checkout", "-q", "-b", branch, main}
		if _, err := r.Branch(branch); err == nil {
			args = []string{"checkout", "-q", branch}
		}
	default:
		return
	}
	top := r.Top()
	if out, err := GitOut(top, "status", "--porcelain", "--untracked-files=no"); err != nil || out != "" {
		a.warn("%s has uncommitted changes: the %s session starts where it is (git %s not run)", top, role, strings.Join(args, " "))
		return
	}
	if _, err := GitOut(top, args...); err != nil {
		a.warn("%s session: %v", role, err)
	}
}
