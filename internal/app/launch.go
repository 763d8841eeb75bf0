package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"

	"github.com/baton-cli/baton/internal/agentcli"
	"github.com/baton-cli/baton/internal/ctxpack"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/prompts"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

// The run loop's steps (baton run): the front end drives the loop and runs
// the agents; these decide and record.

// RunNext is what runs next in a run: Next, refused (errs.Conflict) while
// a session is still open.
func (a *App) RunNext(ctx context.Context, c Caller) (NextResult, error) {
	return a.as(c).nextStep(ctx)
}

// BecomeLauncher gives this App a launcher's authority for the rest of its
// life: the person's key, held in memory, and the project's launcher lock.
// A caller bound to a session is refused.
func (a *App) BecomeLauncher(c Caller) error {
	b := a.as(c)
	if err := b.becomeLauncher(); err != nil {
		return err
	}
	a.launch = b.launch
	return nil
}

// PlanStep names the next session's branch when the workflow left it open
// and renders its prompt, opening nothing.
func (a *App) PlanStep(ctx context.Context, c Caller, n NextResult) (Planned, error) {
	return a.as(c).planStep(ctx, n)
}

// RenderPrompt renders the prompt of an assignment with its context
// package.
func (a *App) RenderPrompt(ctx context.Context, c Caller, w Assignment) (string, error) {
	a = a.as(c)
	var out string
	err := a.snapshot(ctx, func(sn *snapshot) (err error) { out, err = a.renderPrompt(sn, w); return })
	return out, err
}

// AgentOptions are an agent preset's options for role, from .baton/config
// and the repository.
func (a *App) AgentOptions(role string) agentcli.Options { return a.as(Caller{}).agentOptions(role) }

// StateDirs are the state directory and its .baton directory.
func (a *App) StateDirs() (dir, batonDir string, err error) {
	s, err := a.openStore("")
	if err != nil {
		return "", "", err
	}
	return s.Dir, s.BatonDir(), nil
}

// Child is an App for another front end in this process (baton run's
// in-process commands): it shares this one's launcher and key file.
func (a *App) Child(env Env, opts *Options, sink Sink) *App {
	b := New(env, opts, sink)
	b.keyFile, b.launch, b.remote = a.keyFile, a.launch, a.remote
	return b
}

// SetKeyFile makes the person's key the one at path (the demo's
// throwaway key); KeyFile says which it is ("" for the person's own).
func (a *App) SetKeyFile(path string) { a.keyFile = path }

// KeyFile is the key file SetKeyFile set.
func (a *App) KeyFile() string { return a.keyFile }

// HasPersonKey says whether the person has a key (an unreadable one is an
// error).
func (a *App) HasPersonKey() (bool, error) {
	key, err := a.loadKey()
	return key != nil, err
}

// NewKeyAt writes a new key at path (a throwaway key, such as the
// demo's).
func NewKeyAt(path string) (KeyResult, error) {
	k, err := writeNewKey(path, nil)
	if err != nil {
		return KeyResult{}, err
	}
	return KeyResult{Path: k.Path, KeyID: k.ID}, nil
}

// AnchorPaths are where the audit log's anchors for the state directory
// dir live outside the project (none when there is no home).
func (a *App) AnchorPaths(dir string) []string {
	write, _ := a.anchorPaths(dir)
	return write
}

// nextStep reads what runs next.
func (a *App) nextStep(ctx context.Context) (NextResult, error) {
	var n NextResult
	err := a.snapshot(ctx, func(sn *snapshot) error {
		if sn.prog == nil {
			return firstProblemOr(sn, missing(sn.s, progress.FileName, "baton init"))
		}
		if len(sn.open.Open) > 0 {
			s := sn.open.Open[0]
			return errs.New(errs.Conflict, "session %d (%s) is still open: let its agent finish, or end it yourself (see 'baton session end --help') before 'baton run'", s.SessionID, s.AgentType)
		}
		n = sn.next()
		return nil
	})
	return n, err
}

// becomeLauncher gives this process a launcher's authority: the person's
// key, held in memory for the run. A call bound to a session is an agent's
// and never launches.
func (a *App) becomeLauncher() error {
	if err := workflow.Launches(a.insideSession()); err != nil {
		return err
	}
	if a.launch != nil {
		return nil
	}
	key, err := a.loadKey()
	if err != nil {
		return err
	}
	if key == nil {
		path, _ := a.keyPath()
		return errs.New(errs.Policy, "baton run opens its agents' sessions with the person's own key, and there is none at %s: nothing was opened; a person sets up their key before the first run", path)
	}
	id, err := randomHex(8)
	if err != nil {
		return err
	}
	s, err := a.openStore("")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.BatonDir(), 0o755); err != nil {
		return err
	}
	// held while the run lasts: a session opened meanwhile by anyone but
	// this launcher is refused (an agent cannot launch for itself)
	lock := flock.New(launcherLockPath(s.BatonDir()))
	if ok, err := lock.TryLock(); err != nil || !ok {
		return errs.New(errs.Conflict, "another 'baton run' is driving this project (%s is held): let it finish", lock.Path())
	}
	a.launch = &launcher{keyID: key.ID, keyPath: key.Path, runID: id, lock: lock, outside: a.lockOutside(s.Dir)}
	key.wipe()
	return nil
}

// lockOutside takes the run's locks beside the log's anchors outside the
// project (best effort), so that deleting .baton/launcher.lock does not
// make the run look stopped: beside a watched anchor only where it is.
func (a *App) lockOutside(stateDir string) []*flock.Flock {
	write, watch := a.anchorPaths(stateDir)
	var held []*flock.Flock
	for i, p := range append(write, watch...) {
		if i < len(write) {
			_ = os.MkdirAll(filepath.Dir(p), 0o700)
		} else if _, err := os.Stat(p); err != nil {
			continue // a watched anchor that is not there
		}
		l := flock.New(runLockPath(p))
		if ok, err := l.TryLock(); err == nil && ok {
			held = append(held, l)
		}
	}
	return held
}

// promptBudget is the token budget of the context package a prompt carries.
const promptBudget = ctxpack.DefaultBudget

// Planned is the next session, before it is opened: its assignment (with
// the session id it will get) and its rendered prompt.
type Planned struct {
	Assignment
	Prompt string `json:"prompt"`
}

// planStep names the next session's branch when the workflow left it open
// and renders its prompt, opening nothing. A prompt template that cannot
// be rendered is a usage error naming the file and line.
func (a *App) planStep(ctx context.Context, n NextResult) (Planned, error) {
	p := Planned{Assignment: Assignment{Role: n.Phase, Feature: Deref(n.Feature), Branch: Deref(n.Branch), Reason: n.Reason}}
	err := a.snapshot(ctx, func(sn *snapshot) error {
		p.Session = sn.prog.NextSessionID()
		if sn.open != nil && sn.open.MaxID() >= p.Session {
			p.Session = sn.open.MaxID() + 1
		}
		if p.Branch == "" {
			p.Branch = workflow.WorkBranchName(p.Role, p.Feature, p.Session)
		}
		a.predecessorStep(&p)
		var err error
		p.Prompt, err = a.renderPrompt(sn, p.Assignment)
		return err
	})
	return p, err
}

// renderPrompt renders the prompt of w with its context package.
func (a *App) renderPrompt(sn *snapshot, w Assignment) (string, error) {
	in := a.contextInput(sn, w)
	pkg := ctxpack.Build(in, promptBudget)
	if a.pred != nil {
		return a.renderPredecessor(a.promptData(sn, w, in, pkg), w.Role)
	}
	out, err := prompts.Render(filepath.Join(sn.s.BatonDir(), "prompts"), a.promptData(sn, w, in, pkg))
	var pe *prompts.Error
	if errors.As(err, &pe) {
		return "", errs.New(errs.Usage, "%v — correct the template (or remove it to use the built-in one); no session was opened", pe)
	}
	return out, err
}

// agentOptions are the preset's options for role from .baton/config and
// the repository.
func (a *App) agentOptions(role string) agentcli.Options {
	var o agentcli.Options
	s, err := a.openStore("")
	if err != nil {
		return o
	}
	cfg, err := s.LoadConfig()
	if err != nil {
		cfg = store.DefaultConfig()
	}
	o.Model, o.MaxTurns, o.Role, o.Allow = cfg.Agent.ModelFor(role), cfg.Agent.MaxTurns, role, cfg.Agent.Allow
	top := s.Dir
	if r := a.repo(); r != nil {
		top = r.Top()
	}
	o.TestCommand = testCommand(top, cfg.TestCommand)
	o.WritableDirs = []string{s.Dir}
	if gd, err := GitOut(top, "rev-parse", "--path-format=absolute", "--git-common-dir"); err == nil && gd != "" {
		o.WritableDirs = append(o.WritableDirs, filepath.Clean(gd))
	}
	return o
}
