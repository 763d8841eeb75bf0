package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/baton-cli/baton/internal/agentcli"
	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/broker"
	"github.com/baton-cli/baton/internal/egress"
	"github.com/baton-cli/baton/internal/runner"
)

// Where a lane runs: on this machine, or on a runner of .baton/config
// (the runner package), placed in the config's order. A remote lane's
// working copy here is where its branch passes through: pushed from it to
// the runner's clone, fetched back into it, and imported from it into the
// project as a local lane's is.

// placement is a lanes run's runners and their busy slots.
type placement struct {
	a       *App
	line    []runner.Runner
	busy    map[string]int
	down    map[string]bool // lost, or unable to start a lane: not used again in this run
	cleaned map[string]bool // the project's leftovers there removed, this run
	// unsupervised are the runners whose want of exec supervision this run
	// has told of
	unsupervised map[string]bool
	programs     []string // what the run's agents start, which runners must have
}

// newPlacement reads the runners of the project's config for a run of k
// lanes.
func (a *App) newPlacement(o runOpts, k int) (*placement, error) {
	cfg, err := a.app.Config()
	if err != nil {
		return nil, err
	}
	p := &placement{a: a, line: runner.Lineup(cfg.Runners), busy: map[string]int{}, down: map[string]bool{}, cleaned: map[string]bool{}, unsupervised: map[string]bool{}, programs: agentPrograms(o.Agent, o.AgentCmd)}
	if n := runner.Slots(p.line); p.line != nil && n < k {
		a.notice("[baton run] the project's runners have %d slots in all: at most %d of the %d lanes run at once", n, n, k)
	}
	return p, nil
}

// runsOnRunners says whether a run of one agent at a time is a run of one
// lane placed on the project's runners: it is when the project has
// runners and the run starts its agents itself.
func (a *App) runsOnRunners(o runOpts) bool {
	cfg, err := a.app.Config()
	if err != nil || len(cfg.Runners) == 0 || o.DryRun {
		return false
	}
	if checkLanes(o, 1) != nil {
		a.notice("[baton run] the project's runners take the agents baton run starts itself (--agent or --agent-cmd): this run's agents run where they ran before, on this machine or the bridge's host")
		return false
	}
	return true
}

// pick is the runner the next lane goes to (ok false: no slot is free).
func (p *placement) pick() (runner.Runner, bool) { return runner.Pick(p.line, p.busy, p.down) }

// check refuses, on the run's first use of runner on, one that lacks what
// its lanes need (the agent program, git, the sandbox it must have, this
// baton's protocol), naming each: 'baton runner check' run for the run.
func (p *placement) check(ctx context.Context, on runner.Runner) error {
	f, err := on.Probe(ctx, p.programs)
	if err != nil {
		return err
	}
	if missing := checkMissing(on, f, p.programs); len(missing) > 0 {
		return fmt.Errorf("it lacks %s ('baton runner check %s' checks it)", strings.Join(missing, "; "), on.Name)
	}
	return nil
}

// allDown names the runners out of this run when no lane can start
// anywhere for want of them ("" when a slot is free, or none is down).
func (p *placement) allDown() string {
	if _, ok := p.pick(); ok || len(p.down) == 0 {
		return ""
	}
	var names []string
	for _, r := range p.line {
		if p.down[r.Name] {
			names = append(names, r.Name)
		}
	}
	return strings.Join(names, ", ")
}

// where is what the run's lines say of a lane on r: nothing when the
// project has no runners.
func (p *placement) where(r runner.Runner) string {
	if p.line == nil {
		return ""
	}
	return " on " + r.Name
}

// take counts a lane started on r.
func (p *placement) take(r runner.Runner) { p.busy[r.Name]++ }

// release counts a lane of r ended; a runner lost stays out of this run.
func (p *placement) release(r runner.Runner, lost bool) {
	p.busy[r.Name]--
	if lost && r.Remote() && !p.down[r.Name] {
		p.down[r.Name] = true
		p.a.notice("[baton run] runner %s is out of this run: its lanes go to the other runners and this machine (check it with 'baton runner check %s')", r.Name, r.Name)
	}
}

// openRemote makes box's clone on runner on: the project's leftovers
// there removed on the run's first use of it, the branch pushed.
func (a *App) openRemote(ctx context.Context, p *placement, b *agentBox, on runner.Runner) error {
	project := runnerProject(b.place.Top)
	if !p.cleaned[on.Name] {
		if err := p.check(ctx, on); err != nil {
			return err
		}
		if err := on.Clean(ctx, project); err != nil {
			return err
		}
		p.cleaned[on.Name] = true
	}
	c := b.place.Copy
	l, err := runner.Open(ctx, on, project, b.st.Session, runner.Source{Dir: c.Dir, Branch: c.Branch, Base: c.Base, Name: b.place.Name, Email: b.place.Email})
	if err != nil {
		return err
	}
	b.remote = l
	if l.Place.Sandbox == "" {
		msg := fmt.Sprintf("runner %s offers no sandbox: session %d's agent runs there NOT confined, as its \"sandbox\": \"auto\" allows", on.Name, b.st.Session)
		a.warn("%s", msg)
		_ = a.app.NoteSandbox(msg)
		_ = a.app.LogRunNote(ctx, "runner unconfined: "+msg)
	}
	if l.Place.Lineage != "" && b.relaySupervise && !p.unsupervised[on.Name] {
		p.unsupervised[on.Name] = true
		msg := fmt.Sprintf("runner %s cannot tell an agent's own baton calls from those of the code it runs (%s): its relay serves every process the agent starts there as the agent", on.Name, l.Place.Lineage)
		a.warn("%s", msg)
		_ = a.app.LogRunNote(ctx, "lineage unavailable: "+msg)
	}
	return nil
}

// remoteProcess is the ssh that runs st's agent on the lane's runner:
// the runner's relay (runnerrelay.go) gets the lane's configuration on
// the first line of its stdin, the prompt after it. ssh gets the
// launcher's environment with nothing of baton's, and sends none of it.
func (a *App) remoteProcess(ctx context.Context, o runOpts, st step, b *agentBox) (*exec.Cmd, string) {
	place := b.remote.Place
	conf := relayConf{Token: b.relay, Supervise: b.supervised(), Preset: o.Agent, Net: netOn}
	argv := []string{"sh", "-c", execSimple(o.AgentCmd)}
	if o.Agent != "" {
		server, shell := &agentcli.MCP{Baton: place.Baton, PassEnv: []string{broker.EnvSocket}}, ""
		if o.Agent == "claude" { // the relay writes its configuration, and its shell when confined
			server.ConfigFile = place.MCPConfig()
			if place.Sandbox != "" {
				shell = filepath.Join(place.Root, agentShellDir, "bash")
			}
		}
		argv, conf.Env = a.presetCommand(o.Agent, st, server, place.Sandbox != "", shell)
	}
	if place.Sandbox != "" {
		conf.Net = o.SandboxNet
		hosts, _ := a.app.SandboxHosts()
		conf.Allow = append(slices.Clone(egress.ModelHosts[o.Agent]), hosts...)
	}
	cmd := b.remote.Agent(ctx, b.sock, argv)
	cmd.Stdin = io.MultiReader(strings.NewReader(relayLine(conf)), strings.NewReader(st.Prompt))
	cmd.Dir = b.place.Tmp
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "BATON_") && k != "AGENT_STATE_DIR" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	return cmd, strings.Join(argv, " ")
}

// fetchRemote brings the lane's branch from the runner into its working
// copy here, before it is imported.
func (b *agentBox) fetchRemote(ctx context.Context) error {
	if b.remote == nil || b.lost.Load() {
		return nil
	}
	return b.remote.Fetch(ctx, b.place.Copy.Dir)
}

// remoteCall is checkCall for an agent on a runner: its working directory
// must lie in its clone there, and is read as the same place in the
// working copy here; a path argument names a file of the runner, which
// the project does not read.
func (b *agentBox) remoteCall(c app.Call, paths []string) (string, error) {
	repo := b.remote.Place.Repo
	cwd := filepath.Clean(c.Cwd)
	if !beneath(cwd, repo) {
		return "", fmt.Errorf("the working directory %q is outside your working copy", c.Cwd)
	}
	for _, v := range paths {
		if pathArg(v) {
			return "", fmt.Errorf("the argument %q names a file on the machine you run on, which the project does not read: give its content on stdin ('-') instead", v)
		}
	}
	rel, err := filepath.Rel(repo, cwd)
	if err != nil {
		return "", errors.New("the working directory is outside your working copy")
	}
	return filepath.Join(b.place.Copy.Dir, rel), nil
}
