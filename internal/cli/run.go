package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/baton-cli/baton/bridge"
	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/workflow"
)

// runOpts are `baton run`'s options.
type runOpts struct {
	AgentCmd    string
	MaxSessions int
	Timeout     time.Duration
	Resume      bool
	DryRun      bool
	Agent       string // a preset: claude, codex
	Follow      bool
	Sandbox     string // on, auto, off ("": the project's config)
	SandboxNet  string // model, on, off
	// StallTimeout ends an agent silent this long (0: the project's
	// stall_timeout).
	StallTimeout time.Duration
	MaxCost      float64 // the run's budget in US dollars (0: the project's)
	// The predecessor's prompt files (--prompts), its brownfield start
	// (--input-file) and its INITIALIZER's feature count.
	Prompts, InputFile string
	FeatureCount       int
	// Agents is how many sessions run at once (0: "agents" in .baton/config).
	Agents int
}

func (a *App) newRunCmd() *cobra.Command {
	var o runOpts
	c := &cobra.Command{
		Use:   "run",
		Short: "Drive the agents: next role, its prompt, its session, until DONE",
		Long: `Run the dev-session loop. Each step computes the next role and features from the files,
renders that role's prompt (built in, or .baton/prompts/ROLE.md; with --prompts DIR the
predecessor's prompt file for the role, its {{PLACEHOLDER}}s filled), opens the role's session, and
runs the agent:

  with --agent claude|codex  baton runs Claude Code or Codex with a preset command line (the
                        prompt on stdin, non-interactive, every tool under --sandbox, else the allowlist
                        --dry-run prints (.baton/config "agent": {"allow": [...]});
                        the role's model from "agent" in .baton/config);
  with --agent-cmd CMD  baton runs CMD itself (sh -c), the prompt on stdin, BATON_BROKER set;
                        either way with a timeout, a progress line on stderr showing the agent's
                        latest output (--follow streams all of it), and a log per session in
                        .baton/logs/ with the prompt, the output and the exit;
  without it            baton checkpoints through the agent bridge: it writes
                        .agent-request.json and exits 42; a host runs the agent, answers with
                        'baton bridge respond', and runs 'baton run --resume'.

After each agent baton checks what it recorded: a session it left open is ended as ERROR with a
failure signature. An agent that writes nothing for --stall-timeout is ended as stalled. The
usage each agent's CLI reports is recorded with its session (an --agent-cmd agent may write it to
$BATON_USAGE_FILE). The loop stops at DONE (exit 0), STOPPED (exit 3: a person decides),
--max-sessions before DONE (exit 7), or before a session past --max-cost (exit 8). A missing
agent program is exit 4 before anything is opened; --dry-run prints the next prompt and the
agent's command line, and opens nothing.

By default (auto, or "sandbox" in .baton/config) each agent works in a clone of the
repository of its own, its branch checked out, confined by the kernel (Linux Landlock): it can
write only its clone, its temp directory and a home and caches of its own, cannot read your key,
and reaches the state only through baton, whose calls go to this run. Its branch comes back
when it ends. Without an OS sandbox, or outside a git repository, --sandbox fails (exit 4) and
auto runs the agents unconfined with a warning; --sandbox=off runs them unconfined. A call the sandbox's broker refuses stops the run for a person.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.runLoop(c.Context(), o) },
	}
	f := c.Flags()
	f.StringVar(&o.AgentCmd, "agent-cmd", "", "command that runs an agent (prompt on stdin, its session's broker in BATON_BROKER)")
	f.IntVar(&o.MaxSessions, "max-sessions", 50, "stop after this many agent sessions")
	f.DurationVar(&o.Timeout, "timeout", 30*time.Minute, "how long one agent may run")
	f.BoolVar(&o.Resume, "resume", false, "continue a run checkpointed through the bridge (exit 42)")
	f.BoolVar(&o.DryRun, "dry-run", false, "print the next session's prompt and exit, opening nothing")
	f.StringVar(&o.Agent, "agent", "", "run a preset agent CLI: claude (Claude Code), codex, or claude-predecessor (Claude Code as the predecessor ran it; --prompts with claude uses it)")
	f.BoolVar(&o.Follow, "follow", false, "stream the agent's output to stderr as it runs")
	f.Float64Var(&o.MaxCost, "max-cost", 0, "stop for a person before a session would start once this run has spent this many US dollars (default: \"budget\" in .baton/config, else none)")
	f.DurationVar(&o.StallTimeout, "stall-timeout", 0, "end an agent that writes nothing this long as ERROR (stalled) (default: \"stall_timeout\" in .baton/config, else 10m)")
	f.StringVar(&o.Sandbox, "sandbox", "", "run each agent in its own clone behind an OS sandbox: on (the default of a bare --sandbox; fail without one), auto (fall back with a warning) or off (default: \"sandbox\" in .baton/config, else auto)")
	f.Lookup("sandbox").NoOptDefVal = app.SandboxOn
	f.StringVar(&o.SandboxNet, "sandbox-net", netModel, "with --sandbox: model (the agent CLI's model API and sandbox_hosts in .baton/config, through baton's proxy), on (the launcher's network) or off (none)")
	f.StringVar(&o.Prompts, "prompts", "", "run the predecessor's prompt files in DIR (coding_prompt.md, reviewer_prompt.md, ...) in place of baton's")
	f.StringVar(&o.InputFile, "input-file", "", "with --prompts: start with BROWNFIELD_INITIALIZER turning this free-form file into features and bugs")
	f.IntVar(&o.Agents, "agents", 0, "run up to this many agent sessions at once, each in its own working copy (default: \"agents\" in .baton/config, else 1)")
	f.IntVar(&o.FeatureCount, "feature-count", 0, "with --prompts: {{FEATURE_COUNT}}, how many features the INITIALIZER writes (default: the feature list's, else 50)")
	return c
}

// step is one agent session the loop runs.
type step struct {
	Role, Feature, Branch, Reason string
	Session                       int
	Prompt                        string
	mark                          *app.RunMark // what .baton/run.json says of this step (agent-cmd runs)
	Credential                    string       // handed to the agent, and to no one else
}

// runLoop runs the steps, stopping on SIGINT, SIGTERM or SIGHUP: the
// agent's process group is killed, its session ended as ERROR (failure
// interrupted), and baton exits 130, 143 or 129; the next run continues.
func (a *App) runLoop(ctx context.Context, o runOpts) error {
	ctx, sig := withTermSignals(ctx)
	defer sig.stop()
	return sig.exitFor(a.runSteps(ctx, o))
}

func (a *App) runSteps(ctx context.Context, o runOpts) error {
	if o.MaxSessions < 1 {
		return errs.New(errs.Usage, "--max-sessions: must be at least 1, got %d", o.MaxSessions)
	}
	k, err := a.useAgents(o)
	if err != nil {
		return err
	}
	if err := a.usePrompts(o); err != nil {
		return err
	}
	if o.DryRun {
		return a.dryRun(ctx, o)
	}
	if err := a.checkAgentOpts(o); err != nil {
		return err
	}
	if err := a.brownfieldStart(ctx, o); err != nil {
		return err
	}
	if o.Resume {
		if err := a.refuseInsideSession("baton run --resume"); err != nil {
			return err
		}
	}
	if err := a.app.BecomeLauncher(a.caller()); err != nil {
		return err
	}
	if err := nonDumpable(); err != nil {
		return errs.New(errs.Unexpected, "%v", err)
	}
	stateDir, _, err := a.app.StateDirs()
	if err != nil {
		return err
	}
	if o.Prompts != "" {
		if err := a.app.PreparePredecessor(); err != nil {
			return err
		}
	}
	var br *bridge.Bridge
	if o.AgentCmd == "" && o.Agent == "" {
		if br, err = bridge.Open(bridge.Options{Dir: stateDir, Resume: o.Resume, Cwd: a.env.Cwd, Now: a.env.Now, Warn: a.messages(),
			Ctx: ctx, HostToken: true, Token: a.env.Getenv("BATON_HOST_TOKEN")}); err != nil {
			return err
		}
		if o.Resume {
			if err := a.resumeStep(ctx, br); err != nil {
				return err
			}
		}
	} else if o.Resume {
		return errs.New(errs.Usage, "--resume continues a bridge run; with --agent-cmd there is nothing to resume")
	} else if err := a.reclaimDeadRun(ctx); err != nil {
		return err
	} else {
		defer a.app.UnmarkRun() // a run that returns is not a killed one
	}
	if err := a.prepareSandbox(ctx, o, br == nil); err != nil {
		return err
	}
	if k > 1 || a.runsOnRunners(o) {
		return a.runLanes(ctx, o, k)
	}
	var ran []runSession
	var last *step
	for n := 0; n < o.MaxSessions; n++ {
		if done, err := a.runStep(ctx, o, br, &ran, &last); done {
			return err
		}
	}
	return a.maxSessionsReached(ctx, o, ran, last)
}

// maxSessionsReached ends a run at --max-sessions: what the last session
// did is verified first, so that it stops the run as any other would.
func (a *App) maxSessionsReached(ctx context.Context, o runOpts, ran []runSession, last *step) error {
	if err := a.verifyRun(ctx, last); err != nil {
		return err
	}
	next, err := a.app.RunNext(ctx, a.caller())
	if err != nil {
		return err
	}
	if err := a.emitRun(next, ran, "max-sessions"); err != nil {
		return err
	}
	return errs.New(errs.MaxSessions, "the run stopped after --max-sessions %d before DONE; run it again to continue", o.MaxSessions)
}

// runStep drives one session of the run; done says the run is over (DONE,
// STOPPED, a bridge checkpoint, or err).
func (a *App) runStep(ctx context.Context, o runOpts, br *bridge.Bridge, ran *[]runSession, last **step) (done bool, err error) {
	if err := a.verifyRun(ctx, *last); err != nil {
		return true, err
	}
	if err := a.landQueue(ctx); err != nil {
		return true, err
	}
	next, err := a.app.RunNext(ctx, a.caller())
	if err != nil {
		return true, err
	}
	switch next.Phase {
	case workflow.PhaseDone:
		a.notice("[baton run] DONE: %s", next.Reason)
		if br != nil {
			if err := br.Complete(); err != nil {
				return true, err
			}
		}
		return true, a.emitRun(next, *ran, "done")
	case workflow.PhaseStopped:
		if next.Rule == workflow.RuleLoop {
			b, _ := json.Marshal(failureSignature{Code: workflow.RuleLoop, Message: next.Reason, StageID: "RUN", Severity: "error"})
			a.notice("[baton run] STOPPED: failure signature %s", b)
		}
		return true, errs.New(errs.Policy, "the run is STOPPED for a person: %s (see 'baton status'; the README's 'The workflow' says how a person resumes it)", next.Reason)
	}
	if err := a.checkBudget(ctx, o, next.Features); err != nil {
		return true, err
	}
	st, err := a.openMarkedStep(ctx, next, br == nil)
	if err != nil {
		return true, err
	}
	if br != nil {
		a.logSession(st, "the agent bridge (.agent-request.json)", nil, "pending: the answer comes through the bridge")
		_, err := br.Invoke(st.Role, st.Prompt, bridge.InvokeOptions{PhaseName: phaseName(st), TimeoutSeconds: int(o.Timeout / time.Second),
			Context: map[string]any{"session": st.Session, "role": st.Role, "feature": st.Feature, "branch": st.Branch, "env": map[string]string{"BATON_SESSION": st.Credential}}})
		return true, err // the first request of this process checkpoints: exit 42
	}
	if o.Prompts != "" {
		a.app.PredecessorWorktree(st.Role, st.Branch)
	}
	failure := a.runAgent(ctx, o, st)
	if ctx.Err() != nil {
		return true, a.interrupted(ctx, st)
	}
	*ran = append(*ran, runSession{Session: st.Session, Role: st.Role, Features: app.IDList(progress.Nullable(st.Feature)), Branch: st.Branch, Failure: failure})
	*last = &st
	if err := a.checkStep(ctx, st, failure); err != nil {
		if verr := a.verifyRun(ctx, *last); verr != nil {
			return true, verr // what the agent did is why its session could not be ended
		}
		return true, err
	}
	a.recordUsage(ctx, st)
	if err := a.stopOnAttempts(st, failure); err != nil {
		return true, err
	}
	a.app.UnmarkRun()
	return false, nil
}

// runSession is one agent session a run drove.
type runSession struct {
	Session  int               `json:"session_id"`
	Role     string            `json:"agent_type"`
	Features []string          `json:"features"`
	Branch   string            `json:"branch"`
	Failure  *failureSignature `json:"failure_signature"`
}

// emitRun prints, under --json, what a run did and where it stopped (the
// text form is the notices already printed).
func (a *App) emitRun(next app.NextResult, ran []runSession, stopped string) error {
	if !a.g.JSON {
		return nil
	}
	if ran == nil {
		ran = []runSession{}
	}
	return a.writeJSON(a.env.Stdout, map[string]any{"stopped": stopped, "next": next, "sessions": ran})
}

// verifyRun runs the checks of 'baton verify' before the run goes on: any
// problem ends the run as STOPPED, for a person, with a failure signature
// saying what happened and after which session (last; nil before the
// first session of this run).
// The landings of the last step that have no attestation yet (an agent
// merged in its own process, which holds no key to sign one) get theirs
// first.
func (a *App) verifyRun(ctx context.Context, last *step) error {
	if _, err := a.app.Attest(ctx, a.caller()); err != nil {
		a.warn("the attestations of the landings could not be written: %v", err)
	}
	res, err := a.stepApp(true).Verify(ctx, app.Caller{}, app.VerifyInput{})
	if err != nil {
		return a.stepErr(err, "--json", "verify")
	}
	if res.OK {
		return nil
	}
	when, stage := "before this run's first session", "RUN"
	if last != nil {
		when, stage = fmt.Sprintf("after session %d (%s)", last.Session, last.Role), last.Role
	}
	msgs := make([]string, 0, len(res.Problems))
	for _, p := range res.Problems {
		msgs = append(msgs, fmt.Sprintf("[%s] %s", p.Check, p.Message))
	}
	sig := failureSignature{Code: "verify_failed", Message: fmt.Sprintf("%s, verify found %d problem(s): %s", when, len(res.Problems), strings.Join(msgs, "; ")), StageID: stage, Severity: "error"}
	b, _ := json.Marshal(sig)
	a.notice("[baton run] STOPPED: failure signature %s", b)
	return errs.New(errs.Policy, "the run is STOPPED for a person: %s (see 'baton verify')", sig.Message)
}

// openMarkedStep opens the next step; a run that runs its agents itself
// keeps .baton/run.json meanwhile (see runmark.go), so that a kill of this
// process is settled by the next run.
func (a *App) openMarkedStep(ctx context.Context, next app.NextResult, marked bool) (step, error) {
	var mark *app.RunMark
	if marked {
		mark = &app.RunMark{PID: os.Getpid(), StartedAt: jsondoc.Timestamp(a.env.Now())}
		a.app.MarkRun(mark)
	}
	st, err := a.openStep(ctx, next)
	st.mark = mark
	if mark != nil && st.Session > 0 {
		mark.Session = st.Session
		a.app.MarkRun(mark)
	}
	if err != nil && ctx.Err() != nil && st.Session > 0 {
		return st, a.interrupted(ctx, st)
	}
	return st, err
}

// interruptCleanup bounds the cleanup after a signal: ending the session
// takes the state lock with this deadline of its own.
const interruptCleanup = 15 * time.Second

// interrupted ends a step stopped by a signal: its agent was killed (with
// its process group), and its session, if still open, is ended as ERROR
// with failure signature interrupted — under a context of its own, since
// the run's is cancelled.
func (a *App) interrupted(ctx context.Context, st step) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), interruptCleanup)
	defer cancel()
	f := &failureSignature{Code: "interrupted", Message: "baton run was interrupted by a signal; the agent and its process group were killed", StageID: st.Role, Severity: "error"}
	if err := a.checkStep(cctx, st, f); err != nil {
		return errs.New(errs.Interrupted, "interrupted during session %d (%s), and ending it failed: %v; end it with 'baton session end -o ERROR' before the next run", st.Session, st.Role, err)
	}
	if st.mark != nil {
		a.app.UnmarkRun()
	}
	return errs.New(errs.Interrupted, "interrupted during session %d (%s): the agent was stopped and the session ended as ERROR (interrupted); run 'baton run' again to continue", st.Session, st.Role)
}

// phaseName ties a bridge request to its session, so that a resumed run
// knows which session the answer belongs to.
func phaseName(st step) string { return fmt.Sprintf("session-%d-%s", st.Session, st.Role) }

// resumeStep takes the answer to the run's outstanding request and checks
// the session it was for.
func (a *App) resumeStep(ctx context.Context, br *bridge.Bridge) error {
	cp := br.Checkpoint()
	if len(cp.AgentRequests) == 0 {
		return nil
	}
	last := cp.AgentRequests[len(cp.AgentRequests)-1]
	var id int
	var role string
	if _, err := fmt.Sscanf(last.PhaseName, "session-%d-%s", &id, &role); err != nil {
		return errs.New(errs.Invalid, "bridge: the run's last request %q was not made by 'baton run'; start a new run without --resume", last.PhaseName)
	}
	resp, err := br.Answer(last.Phase)
	var out string
	if err == nil {
		out, err = resp.Text(), resp.Err(last.AgentName)
	}
	var failure *failureSignature
	if err != nil {
		if errs.Is(err, errs.NeedAgent) || errs.Is(err, errs.Conflict) || errs.Is(err, errs.Invalid) {
			return err
		}
		failure = &failureSignature{Code: "tool_failure", Message: err.Error(), Severity: "error"}
	}
	st := step{Role: role, Session: id}
	a.logBridgeAnswer(st, out, err)
	return a.checkStep(ctx, st, failure)
}

// openStep renders the next step's prompt, then opens its session: a
// prompt that cannot be rendered opens nothing.
func (a *App) openStep(ctx context.Context, n app.NextResult) (step, error) {
	p, err := a.app.PlanStep(ctx, a.caller(), n)
	if err != nil {
		return step{}, err
	}
	st := step{Role: p.Role, Feature: p.Feature, Branch: p.Branch, Reason: p.Reason, Prompt: p.Prompt}
	args := []string{"session", "start", "--agent", st.Role}
	if st.Feature != "" {
		args = append(args, "--feature", st.Feature)
	}
	if st.Branch != "" {
		args = append(args, "--branch", st.Branch)
	}
	res, err := a.stepApp(true).SessionStart(ctx, app.Caller{}, app.SessionStartInput{Agent: st.Role, Features: st.Feature, Branch: st.Branch})
	if err != nil {
		return st, a.stepErr(err, append([]string{"--json"}, args...)...)
	}
	st.Session, st.Credential = res.SessionID, res.Env["BATON_SESSION"]
	a.app.OpenedPredecessorStep(st.Role)
	if st.Session != p.Session { // another session started meanwhile
		p.Session = st.Session
		st.Prompt, err = a.app.RenderPrompt(ctx, a.caller(), p.Assignment)
	}
	return st, err
}

// failureSignature is recorded when an agent did not finish its session.
type failureSignature = progress.FailureSignature

// runAgent runs --agent-cmd for one step; a failure describes how the
// agent process ended badly (nil when it exited 0).
func (a *App) runAgent(ctx context.Context, o runOpts, st step) *failureSignature {
	actx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	actx, stall := a.watchStall(actx, o)
	defer stall.stop()
	box, err := a.openBox(actx, st, a.superviseAgents(o), false, false)
	if err != nil {
		a.notice("[baton run] %s session %d: its broker could not be set up: %v", st.Role, st.Session, err)
		return &failureSignature{Code: "tool_failure", Message: fmt.Sprintf("the agent's broker could not be set up: %v", err), StageID: st.Role, Severity: "error"}
	}
	st = withMCPNote(o, box, st)
	cmd, command, cleanup, err := a.agentProcess(actx, o, st, box)
	if err != nil {
		box.close(ctx)
		return &failureSignature{Code: "tool_failure", Message: err.Error(), StageID: st.Role, Severity: "error"}
	}
	defer cleanup()
	out := a.newAgentOutput(o)
	out.onWrite = stall.touch
	cmd.Stdout, cmd.Stderr = out, out
	if cmd.SysProcAttr == nil { // the sandbox may have set its own (a network namespace)
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start := a.env.Now()
	stop := a.progressLine(st, start, out.progress())
	err = cmd.Start()
	if err == nil {
		if serr := box.started(actx, cmd.Process.Pid); serr != nil {
			a.notice("[baton run] %s session %d: the agent's execs could not be supervised, and it was stopped: %v", st.Role, st.Session, serr)
		}
		if st.mark != nil {
			st.mark.AgentPGID = cmd.Process.Pid
			a.app.MarkRun(st.mark)
		}
		err = cmd.Wait()
	}
	stop()
	a.collectUsage(o, st, cmd, out.Bytes())
	tried := box.close(ctx)
	a.logSession(st, command, out.Bytes(), exitText(err))
	if tried != nil {
		a.tried = tried
		a.notice("[baton run] %s session %d: %s", st.Role, st.Session, tried.Message)
		return tried
	}
	took := a.env.Now().Sub(start).Round(time.Millisecond)
	switch {
	case stall.fired() && ctx.Err() == nil:
		return a.stalledFailure(st, stall)
	case errors.Is(actx.Err(), context.DeadlineExceeded):
		a.notice("[baton run] %s session %d timed out after %s", st.Role, st.Session, o.Timeout)
		return &failureSignature{Code: "timeout", Message: fmt.Sprintf("the agent ran past --timeout %s and was killed", o.Timeout), StageID: st.Role, Severity: "error"}
	case err != nil:
		a.notice("[baton run] %s session %d: agent failed after %s: %v", st.Role, st.Session, took, err)
		return &failureSignature{Code: "tool_failure", Message: fmt.Sprintf("the agent command failed: %v", err), StageID: st.Role, Severity: "error"}
	}
	a.notice("[baton run] %s session %d finished in %s", st.Role, st.Session, took)
	return nil
}

// progressLine shows role, feature and elapsed time on stderr while an
// agent runs: a line rewritten each second on a terminal, else a start
// line.
func (a *App) progressLine(st step, start time.Time, latest func() string) func() {
	label := fmt.Sprintf("[baton run] %s %s session %d", st.Role, app.OrDash(st.Feature), st.Session)
	f, ok := a.env.Stderr.(*os.File)
	if !ok || !a.interactive(f) || latest == nil {
		a.notice("%s started", label)
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(f, "\r\033[K")
				return
			case <-t.C:
				fmt.Fprintf(f, "\r\033[K%s", progressText(label, time.Since(start).Round(time.Second), latest()))
			}
		}
	}()
	return func() { close(done) }
}

// progress shows what a long operation is doing on one redrawn line of
// stderr when it is a terminal; elsewhere it shows nothing.
func (a *App) progress(format string, args ...any) {
	f, ok := a.env.Stderr.(*os.File)
	if !ok || !a.interactive(f) {
		return
	}
	fmt.Fprintf(f, "\r\033[K%s", safeText(fmt.Sprintf(format, args...)))
	a.progressShown = true
}

// endProgress clears the progress line, if one is shown.
func (a *App) endProgress() {
	if a.progressShown {
		fmt.Fprint(a.env.Stderr, "\r\033[K")
		a.progressShown = false
	}
}

// interactive says whether f is a terminal that can redraw a line: a real
// terminal (not /dev/null or a pipe), TERM not dumb, and not under --json.
// Anything else gets plain lines.
func (a *App) interactive(f *os.File) bool {
	if a.g.JSON || a.env.Getenv("TERM") == "dumb" || a.env.Getenv("TERM") == "" {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}

// checkStep checks what the agent recorded: a session it left open is
// ended as ERROR with a failure signature, which the workflow then retries
// or stops on.
func (a *App) checkStep(ctx context.Context, st step, failure *failureSignature) error {
	open, err := a.app.SessionCurrent(ctx, app.Caller{})
	if err != nil {
		return err
	}
	i := slices.IndexFunc(open.Sessions, func(s progress.OpenSession) bool { return s.SessionID == st.Session })
	if i < 0 {
		return nil // the agent ended its session
	}
	if rec := open.Sessions[i].RecordedAs; rec > 0 { // recorded with progress add-session
		a.notice("[baton run] session %d (%s) recorded its work as session %d: closing it", st.Session, st.Role, rec)
		_, err = a.stepApp(false).SessionEnd(ctx, app.Caller{}, app.SessionEndInput{Session: st.Session, Outcome: "SUCCESS", Summary: "closed by baton run", Severity: "error"})
		return a.stepErr(err, "session", "end", "--session", strconv.Itoa(st.Session), "-o", "SUCCESS", "-s", "closed by baton run")
	}
	if failure == nil {
		failure = &failureSignature{Code: "plan_invalid", Message: "the agent finished without ending its session", StageID: st.Role, Severity: "error"}
	}
	a.notice("[baton run] session %d (%s) was left open: ending it as ERROR (%s)", st.Session, st.Role, failure.Code)
	_, err = a.stepApp(false).SessionEnd(ctx, app.Caller{}, app.SessionEndInput{Session: st.Session, Outcome: "ERROR", Summary: "baton run: " + failure.Message,
		Failure: failure.Code, Severity: failure.Severity})
	return a.stepErr(err, "session", "end", "--session", strconv.Itoa(st.Session), "-o", "ERROR", "-s", "baton run: "+failure.Message, "--failure", failure.Code, "--failure-severity", failure.Severity)
}

// agentEnviron is the environment an agent starts with: the launcher's,
// without any session binding or role of its own.
func agentEnviron(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "BATON_SESSION", "BATON_ROLE", "BATON_HOST_TOKEN":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// stepApp is the application as the run's own steps call it — as the
// command line would with only --state-dir given — with the warnings of a
// --json call (kept out of the run's output, as that call's document kept
// them) or of a plain one (on stderr).
func (a *App) stepApp(asJSON bool) *app.App {
	sink := &App{env: a.env}
	sink.g.JSON = asJSON
	return a.app.Child(app.Env{Stdin: a.env.Stdin, Getenv: a.env.Getenv, Cwd: a.env.Cwd, Now: a.env.Now}, &app.Options{StateDir: a.g.StateDir, Agents: a.g.Agents}, sink)
}

// stepErr names the step that failed as the command it is: "baton ARGS:
// err" (nil for nil).
func (a *App) stepErr(err error, args ...string) error {
	if err == nil {
		return nil
	}
	if a.g.StateDir != "" {
		args = append([]string{"--state-dir", a.g.StateDir}, args...)
	}
	return fmt.Errorf("baton %s: %w", strings.Join(args, " "), err)
}

// sub runs a baton command in this process with extra environment,
// returning its stdout; its stderr goes to ours.
func (a *App) sub(ctx context.Context, env map[string]string, args ...string) ([]byte, error) {
	var out bytes.Buffer
	e := a.env
	e.Stdout = &out
	e.Getenv = func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return a.env.Getenv(k)
	}
	if a.g.StateDir != "" {
		args = append([]string{"--state-dir", a.g.StateDir}, args...)
	}
	sub := &App{env: e}
	sub.app = a.app.Child(app.Env{Stdin: e.Stdin, Getenv: e.Getenv, Cwd: e.Cwd, Now: e.Now}, &sub.g.Options, sub)
	root := sub.newRootCmd()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(a.env.Stderr)
	err := root.ExecuteContext(ctx)
	if err != nil {
		return out.Bytes(), fmt.Errorf("baton %s: %w", strings.Join(args, " "), err)
	}
	return out.Bytes(), nil
}
