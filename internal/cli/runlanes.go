package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/runner"
	"github.com/baton-cli/baton/internal/sandbox"
	"github.com/baton-cli/baton/internal/workflow"
)

// baton run --agents K: up to K sessions at once. Each agent works in a
// working copy of its own, served by a broker of its own (confined under
// --sandbox, as one agent is), and its branch comes back by fast-forward.
// This goroutine opens the steps the scheduler lists and settles each
// session as its agent ends; the lander lands the queue beside them. All
// the state changes go through the state lock, as every caller's do.

// lane is one running session of a lanes run.
type lane struct {
	st    step
	cmd   *exec.Cmd
	box   *agentBox
	out   *agentOutput
	start time.Time
	actx  context.Context
	stop  context.CancelFunc
	cmdln string
	stall *stallWatch
	on    runner.Runner // where the agent runs (Name "local": here)
}

// laneEnd is how a lane's agent ended.
type laneEnd struct {
	l     *lane
	err   error
	tried *failureSignature
	lost  bool // the lane's runner was lost while its agent ran
}

// landPass is what one pass of the lander did.
type landPass struct {
	res app.LandResult
	err error
}

// laneRun is the state of a lanes run, kept by its one loop.
type laneRun struct {
	o       runOpts
	k       int
	mark    *app.RunMark
	running map[int]*lane
	opened  int
	ends    chan laneEnd
	landed  chan landPass
	gates   chan string
	settled chan app.Landed
	tick    <-chan time.Time // redraws the live view (nil: no view)
	landing bool
	kick    bool
	fatal   error
	place   *placement
}

// agentsFor is how many sessions the run keeps going: --agents, else
// "agents" in .baton/config.
func (a *App) agentsFor(o runOpts) (int, error) {
	if o.Agents < 0 {
		return 0, errs.New(errs.Usage, "--agents: must be at least 1, got %d", o.Agents)
	}
	if o.Agents > 0 {
		return o.Agents, nil
	}
	cfg, err := a.app.Config()
	if err != nil {
		return 0, err
	}
	return cfg.Agents, nil
}

// useAgents is how many agents the run keeps going, refusing with K > 1
// what runs one at a time; the run's application then counts K lanes.
func (a *App) useAgents(o runOpts) (int, error) {
	k, err := a.agentsFor(o)
	if err != nil || k == 1 {
		return k, err
	}
	if !o.DryRun {
		if err := checkLanes(o, k); err != nil {
			return 0, err
		}
	}
	a.g.Agents = k
	return k, nil
}

// checkLanes refuses what runs one agent at a time, before anything starts.
func checkLanes(o runOpts, k int) error {
	switch {
	case o.Prompts != "":
		return errs.New(errs.Usage, "--prompts runs the predecessor's prompts one agent at a time: run it with --agents 1 (the project runs %d at once)", k)
	case o.AgentCmd == "" && o.Agent == "":
		return errs.New(errs.Usage, "%d agents at once need --agent or --agent-cmd: the bridge hands one agent at a time to its host (use --agents 1)", k)
	case o.Resume:
		return errs.New(errs.Usage, "--resume continues a bridge run, one agent at a time (use --agents 1)")
	}
	return nil
}

// runLanes drives up to k sessions at once until DONE, STOPPED, a signal,
// or --max-sessions.
func (a *App) runLanes(ctx context.Context, o runOpts, k int) error {
	lctx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	r := &laneRun{o: o, k: k, running: map[int]*lane{}, ends: make(chan laneEnd), landed: make(chan landPass), gates: make(chan string), settled: make(chan app.Landed), kick: true}
	r.mark = &app.RunMark{PID: os.Getpid(), StartedAt: jsondoc.Timestamp(a.env.Now())}
	var err error
	if r.place, err = a.newPlacement(o, k); err != nil {
		return err
	}
	a.app.MarkRun(r.mark)
	if !a.g.JSON {
		if a.view = a.newLaneView(); a.view != nil {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			r.tick = t.C
			defer func() { a.view.clear(); a.view = nil }()
		}
	}
	a.laneEvent("run", map[string]any{"agents": k}, "[baton run] %d agents at once", k)
	for {
		if r.fatal == nil && ctx.Err() == nil {
			a.startLanding(lctx, r)
			if err := a.openLanes(lctx, r); err != nil {
				r.fatal = err
			}
		}
		if r.fatal != nil || ctx.Err() != nil {
			stopAll()
		}
		if len(r.running) == 0 && !r.landing && (!r.kick || r.fatal != nil || ctx.Err() != nil) {
			a.view.clear()
			return a.lanesOver(ctx, r)
		}
		a.drawLanes(ctx, r, a.waitLanes(ctx, r))
	}
}

// waitLanes waits for a lane to end, a landing pass to finish, a gate
// to start, or the view's clock, and settles it; fresh says the state
// may have changed.
func (a *App) waitLanes(ctx context.Context, r *laneRun) (fresh bool) {
	select {
	case <-r.tick:
		return false
	case e := <-r.ends:
		delete(r.running, e.l.st.Session)
		r.place.release(e.l.on, e.lost)
		a.markLanes(r)
		if err := a.endLane(ctx, e); err != nil && r.fatal == nil {
			r.fatal = err
		}
		r.kick = true
	case it := <-r.settled:
		a.gateOff()
		a.landEvents(app.LandResult{Items: []app.Landed{it}})
	case p := <-r.landed:
		r.landing = false
		a.gateOff()
		if p.err != nil && r.fatal == nil && ctx.Err() == nil {
			r.fatal = p.err
		}
	case item := <-r.gates:
		if a.view != nil {
			a.view.gate = item
		}
		a.laneEvent("gate_started", map[string]any{"item": item}, "[baton run] gate started on %s", item)
	}
	return true
}

// gateOff tells the view that the gate no longer runs.
func (a *App) gateOff() {
	if a.view != nil {
		a.view.gate = ""
	}
}

// lanesOver ends the run once nothing runs: interrupted, failed, DONE,
// STOPPED, or at --max-sessions.
func (a *App) lanesOver(ctx context.Context, r *laneRun) error {
	a.app.UnmarkRun()
	if ctx.Err() != nil {
		return errs.New(errs.Interrupted, "interrupted: every lane's agent was stopped and its session ended as ERROR (interrupted); run 'baton run' again to continue")
	}
	if r.fatal != nil {
		return r.fatal
	}
	// a landing whose run was killed before its attestation was written
	// gets it here, when no later landing of this run wrote it
	if _, err := a.app.Attest(ctx, a.caller()); err != nil {
		a.warn("the attestations of the landings could not be written: %v", err)
	}
	next, err := a.app.RunNext(ctx, a.caller())
	if err != nil {
		return err
	}
	switch next.Phase {
	case workflow.PhaseDone:
		a.laneEvent("done", map[string]any{"reason": next.Reason}, "[baton run] DONE: %s", next.Reason)
		return nil
	case workflow.PhaseStopped:
		return errs.New(errs.Policy, "the run is STOPPED for a person: %s (see 'baton status'; the README's 'The workflow' says how a person resumes it)", next.Reason)
	}
	if down := r.place.allDown(); down != "" {
		return errs.New(errs.Unreachable, "the run stopped before DONE: every runner with slots is out of this run (%s), and this machine has none; check each with 'baton runner check NAME', or give this machine slots in the project's runners, then run again", down)
	}
	if r.opened < r.o.MaxSessions {
		return errs.New(errs.Policy, "the run stopped: no session could be opened for the next step, %s (%s); see 'baton next --json'", next.Phase, next.Reason)
	}
	return errs.New(errs.MaxSessions, "the run stopped after --max-sessions %d before DONE; run it again to continue", r.o.MaxSessions)
}

// startLanding starts a pass of the lander when one is asked for and none
// runs; it lands with an application of its own, beside the lanes.
func (a *App) startLanding(ctx context.Context, r *laneRun) {
	if !r.kick || r.landing {
		return
	}
	r.kick, r.landing = false, true
	lander := a.stepApp(true)
	go func() {
		res, err := lander.Land(ctx, app.Caller{}, app.LandInput{
			Gate:    a.gateRunner(),
			Started: func(item, _ string) { r.gates <- item },
			Settled: func(it app.Landed) { r.settled <- it },
		})
		r.landed <- landPass{res, err}
	}()
}

// landEvents reports what a landing pass did.
func (a *App) landEvents(res app.LandResult) {
	for _, it := range res.Items {
		f := map[string]any{"item": it.Item, "review_id": it.ReviewID, "branch": it.Branch}
		if it.Gate != nil {
			f["gate"] = it.Gate
		}
		switch it.Outcome {
		case "landed":
			f["merge_commit"] = it.MergeCommit
			a.laneEvent("landed", f, "[baton run] landed %s (%s, review R%d) as %s", it.Item, it.Branch, it.ReviewID, app.Short(it.MergeCommit))
		default:
			f["gate_review"], f["phase"], f["reason"] = it.Review, it.Phase, it.Reason
			a.laneEvent("sent_back", f, "[baton run] %s %s by gate review R%d: %s", map[string]string{"sent_back": "sent back", "rejected": "rejected"}[it.Outcome], it.Item, it.Review, it.Reason)
		}
	}
}

// openLanes opens sessions for the first runnable steps while lanes are
// free.
func (a *App) openLanes(ctx context.Context, r *laneRun) error {
	free := r.k - len(r.running)
	if free <= 0 || r.opened >= r.o.MaxSessions {
		return nil
	}
	s, err := a.app.Runnable(ctx, a.caller())
	if err != nil {
		return err
	}
	for _, want := range s.Steps[:min(free, len(s.Steps))] {
		on, ok := r.place.pick()
		if r.opened >= r.o.MaxSessions || !ok {
			break
		}
		var ids []string
		if want.Feature != nil {
			ids = features.SplitIDs(*want.Feature)
		}
		if err := a.checkBudget(ctx, r.o, ids); err != nil {
			return err
		}
		st, err := a.openStep(ctx, app.NextResult{Phase: want.Role, Feature: want.Feature, Branch: want.Branch, Rule: want.Rule, Reason: want.Reason})
		if errs.Is(err, errs.Conflict) || errs.Is(err, errs.Policy) {
			continue // the step is gone (a landing or another lane changed it): the next pass sees
		}
		if err != nil {
			return err
		}
		r.opened++
		if err := a.startLane(ctx, r, st, on); err != nil {
			return err
		}
	}
	return nil
}

// startLane starts session st's agent in its own working copy and broker,
// on runner on.
func (a *App) startLane(ctx context.Context, r *laneRun, st step, on runner.Runner) error {
	actx, stop := context.WithTimeout(ctx, r.o.Timeout)
	actx, stall := a.watchStall(actx, r.o)
	l := &lane{st: st, actx: actx, stop: func() { stall.stop(); stop() }, out: a.newAgentOutput(r.o), stall: stall, on: on}
	l.out.onWrite = stall.touch
	r.place.take(on)
	cleanup := func() {}
	var cmd *exec.Cmd
	var err error
	l.box, err = a.openBox(actx, st, a.superviseAgents(r.o), true, on.Remote())
	if err == nil && on.Remote() {
		err = a.openRemote(actx, r.place, l.box, on)
	}
	if err == nil {
		st = withMCPNote(r.o, l.box, st)
		l.st = st
		cmd, l.cmdln, cleanup, err = a.agentProcess(actx, r.o, st, l.box)
	}
	if err == nil {
		cmd.Stdout, cmd.Stderr = l.out, l.out
		if cmd.SysProcAttr == nil { // the sandbox may have set its own (a network namespace)
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Setpgid = true
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		l.start = a.env.Now()
		err = cmd.Start()
	}
	if err != nil {
		l.stop()
		cleanup()
		if l.box != nil {
			l.box.close(context.WithoutCancel(ctx))
		}
		r.place.release(on, on.Remote())
		f := &failureSignature{Code: "tool_failure", Message: fmt.Sprintf("the agent could not be started: %v", err), StageID: st.Role, Severity: "error"}
		if on.Remote() {
			f.Message = fmt.Sprintf("the agent could not be started on runner %s: %v", on.Name, err)
		}
		a.laneEvent("ended", map[string]any{"session": st.Session, "role": st.Role, "failure": f}, "[baton run] %s session %d: %s", st.Role, st.Session, f.Message)
		return a.checkStep(context.WithoutCancel(ctx), st, f)
	}
	l.cmd = cmd
	if serr := l.box.started(actx, cmd.Process.Pid); serr != nil {
		a.notice("[baton run] %s session %d: the agent's execs could not be supervised, and it was stopped: %v", st.Role, st.Session, serr)
	}
	r.running[st.Session] = l
	a.markLanes(r)
	a.laneEvent("opened", map[string]any{"session": st.Session, "role": st.Role, "feature": st.Feature, "branch": st.Branch, "runner": on.Name},
		"[baton run] %s %s session %d started%s (%d of %d lanes busy)", st.Role, app.OrDash(st.Feature), st.Session, r.place.where(on), len(r.running), r.k)
	go func() {
		err := cmd.Wait()
		lost := l.box.remote != nil && l.box.remote.Lost(context.WithoutCancel(ctx), err)
		l.box.lost.Store(lost)
		a.collectUsage(r.o, st, cmd, l.out.Bytes())
		cleanup()
		tried := l.box.close(context.WithoutCancel(ctx))
		r.ends <- laneEnd{l: l, err: err, tried: tried, lost: lost}
	}()
	return nil
}

// markLanes keeps the run mark's agent process groups current, so that a
// run killed outright has its lanes' agents stopped by the next one.
func (a *App) markLanes(r *laneRun) {
	r.mark.AgentPGIDs = r.mark.AgentPGIDs[:0]
	r.mark.Runners = nil
	for _, l := range r.running {
		if l.cmd != nil && l.cmd.Process != nil {
			r.mark.AgentPGIDs = append(r.mark.AgentPGIDs, l.cmd.Process.Pid)
		}
		if l.on.Remote() {
			if r.mark.Runners == nil {
				r.mark.Runners = map[string]string{}
			}
			r.mark.Runners[strconv.Itoa(l.st.Session)] = l.on.Name
		}
	}
	a.app.MarkRun(r.mark)
}

// endLane settles a lane whose agent ended: its log, and its session ended
// as ERROR if the agent left it open (a crash, a timeout, a signal).
func (a *App) endLane(ctx context.Context, e laneEnd) error {
	l := e.l
	defer l.stop()
	a.logSession(l.st, l.cmdln, l.out.Bytes(), exitText(e.err))
	took := a.env.Now().Sub(l.start).Round(time.Millisecond)
	var f *failureSignature
	switch {
	case e.tried != nil:
		f = e.tried
	case e.lost && ctx.Err() == nil:
		f = &failureSignature{Code: "runner_lost", Message: fmt.Sprintf("the connection to runner %s was lost while the agent ran there; the lane goes to another runner", l.on.Name), StageID: l.st.Role, Severity: "error"}
	case l.stall.fired() && ctx.Err() == nil:
		f = a.stalledFailure(l.st, l.stall)
	case ctx.Err() != nil:
		f = &failureSignature{Code: "interrupted", Message: "baton run was interrupted by a signal; the agent and its process group were killed", StageID: l.st.Role, Severity: "error"}
	case errors.Is(l.actx.Err(), context.Canceled):
		f = &failureSignature{Code: "interrupted", Message: "baton run stopped for a person while this agent ran; the agent and its process group were killed", StageID: l.st.Role, Severity: "error"}
	case errors.Is(l.actx.Err(), context.DeadlineExceeded):
		f = &failureSignature{Code: "timeout", Message: fmt.Sprintf("the agent ran past --timeout %s and was killed", a.timeoutOf(l)), StageID: l.st.Role, Severity: "error"}
	case e.err != nil:
		f = &failureSignature{Code: "tool_failure", Message: fmt.Sprintf("the agent command failed: %v", e.err), StageID: l.st.Role, Severity: "error"}
	}
	fields := map[string]any{"session": l.st.Session, "role": l.st.Role, "feature": l.st.Feature, "seconds": took.Seconds(), "runner": l.on.Name}
	if f != nil {
		fields["failure"] = f
		a.laneEvent("ended", fields, "[baton run] %s session %d ended after %s: %s", l.st.Role, l.st.Session, took, f.Message)
	} else {
		a.laneEvent("ended", fields, "[baton run] %s session %d finished in %s", l.st.Role, l.st.Session, took)
	}
	if err := a.checkStep(context.WithoutCancel(ctx), l.st, f); err != nil {
		return err
	}
	a.recordUsage(context.WithoutCancel(ctx), l.st)
	if e.tried != nil {
		a.tried = e.tried
		return a.stopOnAttempts(l.st, e.tried)
	}
	return nil
}

func (a *App) timeoutOf(l *lane) string {
	if d, ok := l.actx.Deadline(); ok {
		return d.Sub(l.start).Round(time.Second).String()
	}
	return "?"
}

// laneEvent reports one event of a lanes run: a JSON line on stdout under
// --json, else a plain line on stderr.
func (a *App) laneEvent(kind string, fields map[string]any, format string, args ...any) {
	if !a.g.JSON {
		if a.view != nil {
			a.view.print(fmt.Sprintf(format, safeArgs(args)...))
			return
		}
		fmt.Fprintf(a.env.Stderr, format+"\n", safeArgs(args)...)
		return
	}
	ev := map[string]any{"event": kind, "at": jsondoc.Timestamp(a.env.Now())}
	for k, v := range fields {
		ev[k] = v
	}
	b, _ := json.Marshal(ev)
	fmt.Fprintf(a.env.Stdout, "%s\n", b)
	a.emitted = true
}

// landQueue lands what the landing queue holds (app.Land) between the
// sessions of a run of one agent, saying on stderr what each gate run and
// landing did.
func (a *App) landQueue(ctx context.Context) error {
	in := app.LandInput{Gate: a.gateRunner(), Started: func(item, tree string) {
		a.notice("[baton run] gate started on %s (merged tree %s)", item, app.Short(tree))
	}}
	res, err := a.app.Land(ctx, a.caller(), in)
	for _, it := range res.Items {
		switch it.Outcome {
		case "landed":
			a.notice("[baton run] landed %s (%s, review R%d) as %s", it.Item, it.Branch, it.ReviewID, app.Short(it.MergeCommit))
		default:
			a.notice("[baton run] %s %s by gate review R%d: %s", map[string]string{"sent_back": "sent back", "rejected": "rejected"}[it.Outcome], it.Item, it.Review, it.Reason)
		}
	}
	return err
}

// gateRunner is how the run's gate runs: confined by the kernel, as an
// agent in the gate's working copy, when the run confines its agents
// (nil: unconfined).
func (a *App) gateRunner() app.GateRunner {
	if a.box == nil {
		return nil
	}
	return func(_ context.Context, cmd *exec.Cmd, pol sandbox.Policy) error {
		self, err := selfPath()
		if err != nil {
			return err
		}
		pj, err := json.Marshal(pol)
		if err != nil {
			return err
		}
		cmd.Path = self
		cmd.Args = append([]string{self, sandboxExecCmd, string(pj), "--"}, cmd.Args...)
		return cmd.Run()
	}
}
