package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/baton-cli/baton/internal/errs"
)

// ExitNeedAgent is the orchestrator exit status that asks for an agent.
const ExitNeedAgent = 42

// DefaultMaxAttempts is how many times a loop answers one request (the
// same agent, phase name, prompt and context) before it decides the
// orchestrator is not making progress.
const DefaultMaxAttempts = 3

// DefaultMaxOutput caps the agent output a loop keeps (bytes).
const DefaultMaxOutput = 16 << 20

// exitNames names an orchestrator's exit status as baton's own exit codes
// do (README, 'baton --help'): an orchestrator that is baton, or follows
// its codes, means what baton means.
var exitNames = map[int]string{
	1: "unexpected error", 2: "usage error", 3: "refused by policy", 4: "not found", 5: "conflict",
	6: "invalid state file", 42: "need agent", 130: "interrupted", 129: "hung up", 143: "terminated",
}

// exitKinds carries an orchestrator's failure out as the same exit status
// where baton has one.
var exitKinds = map[int]errs.Kind{2: errs.Usage, 3: errs.Policy, 4: errs.NotFound, 5: errs.Conflict, 6: errs.Invalid}

// LoopOptions configure the host loop.
type LoopOptions struct {
	Dir           string   // the state directory, absolute; given to both as $BATON_STATE_DIR
	Orchestrator  []string // the orchestrator's argv; --resume is appended after the first run
	AgentCmd      string   // a shell command: the prompt on stdin, the answer on stdout
	MaxIterations int      // orchestrator runs at most (0: no limit; the guard is per request)
	MaxAttempts   int      // answers to one request at most (default DefaultMaxAttempts)
	MaxOutput     int      // agent output kept, bytes (default DefaultMaxOutput); more is an error answer
	Resume        bool     // the run is already under way: answer what is outstanding, pass --resume
	Cwd           string
	Env           []string  // the children's base environment
	Stdout        io.Writer // the orchestrator's stdout
	Stderr        io.Writer // progress lines, the orchestrator's and the agent's stderr
	Now           func() time.Time
	KillGrace     time.Duration // between asking a process to stop and killing it (default 2s)
	// Token is the host token the loop gives the orchestrator
	// ($BATON_HOST_TOKEN) and puts in every answer; default: a random one.
	// A loop that continues another's run (--resume) needs that loop's token
	// to answer a request that carries one.
	Token string
}

// LoopResult is what a loop did.
type LoopResult struct {
	Iterations int        `json:"iterations"`
	ExitCode   int        `json:"orchestrator_exit_code"`
	Completed  bool       `json:"completed"`
	Agents     []AgentRun `json:"agents"`
}

// AgentRun is one agent invocation of a loop.
type AgentRun struct {
	RequestID       string  `json:"request_id"`
	AgentName       string  `json:"agent_name"`
	Phase           int     `json:"phase"`
	PhaseName       string  `json:"phase_name"`
	Status          string  `json:"status"`
	ErrorType       string  `json:"error_type,omitempty"`
	DurationSeconds float64 `json:"duration_seconds"`
}

type loop struct {
	token    string         // the host token given to the orchestrator
	attempts map[string]int // answers per request key
	o        LoopOptions
	p        Paths
	res      *LoopResult
	answered map[string]bool // request ids this loop wrote responses to
	last     *Request        // the request answered before the latest run
	before   string          // the id of a request left from before a fresh loop
}

// Loop is seed 001's host: it runs the orchestrator; on exit 42 it runs the
// agent command on the request's prompt within the request's timeout,
// writes the response (an error or timeout envelope when the agent fails or
// overruns) and re-runs the orchestrator with --resume, until the
// orchestrator exits 0, fails, or has run MaxIterations times. When ctx is
// cancelled (Ctrl-C) it stops its children and returns an errs.Interrupted
// error, leaving the run resumable with Resume.
func Loop(ctx context.Context, o LoopOptions) (*LoopResult, error) {
	if len(o.Orchestrator) == 0 {
		return nil, errs.New(errs.Usage, "bridge loop: no orchestrator command (write it after --)")
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.KillGrace <= 0 {
		o.KillGrace = 2 * time.Second
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	tok := o.Token
	if tok == "" {
		tok, _ = newToken()
	}
	l := &loop{o: o, p: PathsIn(o.Dir), res: &LoopResult{Agents: []AgentRun{}}, answered: map[string]bool{}, token: tok, attempts: map[string]int{}}
	return l.res, l.run(ctx)
}

func (l *loop) run(ctx context.Context) error {
	resume := l.o.Resume
	if resume {
		if err := l.answerLeftover(ctx); err != nil {
			return err
		}
	} else if data, err := readIfExists(l.p.Request); err == nil && data != nil {
		l.before = requestIDOf(data)
	}
	for {
		l.res.Iterations++
		code, err := l.runOrchestrator(ctx, resume)
		if err != nil {
			return err
		}
		l.res.ExitCode = code
		if code != ExitNeedAgent {
			return l.finished(code)
		}
		if err := l.checkTaken(); err != nil {
			return err
		}
		req, err := l.takeRequest()
		if err != nil {
			return err
		}
		if l.o.MaxIterations > 0 && l.res.Iterations >= l.o.MaxIterations {
			return l.limitReached(req)
		}
		if err := l.answerOnce(ctx, req); err != nil {
			return err
		}
		l.last, resume = req, true
	}
}

func (l *loop) logf(format string, args ...any) {
	fmt.Fprintf(l.o.Stderr, "bridge loop: "+format+"\n", args...)
}

// answerLeftover answers a request a previous loop left outstanding (it
// was interrupted while the agent ran) before resuming.
func (l *loop) answerLeftover(ctx context.Context) error {
	if exists(l.p.Response) || l.o.AgentCmd == "" {
		return nil
	}
	req, err := ReadRequest(l.o.Dir)
	if errs.Is(err, errs.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if req.Prompt == "" {
		return nil // a record without its request: the orchestrator's resume says what is wrong
	}
	l.logf("request %s (phase %d %q, agent %s) is outstanding: answering it before resuming", req.RequestID, req.Phase, req.PhaseName, req.AgentName)
	return l.answer(ctx, req)
}

func (l *loop) runOrchestrator(ctx context.Context, resume bool) (int, error) {
	argv := slices.Clone(l.o.Orchestrator)
	if resume && !slices.Contains(argv[1:], "--resume") {
		argv = append(argv, "--resume")
	}
	l.logf("run %d: %s", l.res.Iterations, strings.Join(argv, " "))
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = l.o.Cwd
	cmd.Env = append(slices.Clone(l.o.Env), "BATON_STATE_DIR="+l.o.Dir, "BATON_BRIDGE_ITERATION="+strconv.Itoa(l.res.Iterations), "BATON_HOST_TOKEN="+l.token)
	cmd.Stdout, cmd.Stderr = l.o.Stdout, l.o.Stderr
	// a process group of its own: a stop reaches everything the
	// orchestrator started, and nothing of it outlives the loop
	startGroup(cmd)
	cmd.Cancel = func() error { return interruptGroup(cmd) }
	cmd.WaitDelay = l.o.KillGrace
	err := cmd.Run()
	if ctx.Err() != nil {
		killGroup(cmd)
		return 0, errs.New(errs.Interrupted, "bridge loop: interrupted while the orchestrator ran (run %d); its checkpoint is kept: continue with: %s", l.res.Iterations, l.resumeCommand())
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() < 0:
		return 0, errs.New(errs.Unexpected, "bridge loop: the orchestrator was killed (%v) on run %d", ee, l.res.Iterations)
	case errors.As(err, &ee):
		return ee.ExitCode(), nil
	case err != nil:
		return 0, errs.New(errs.NotFound, "bridge loop: cannot run the orchestrator %q: %v", argv[0], err)
	}
	return 0, nil
}

// finished reports an orchestrator exit other than 42.
func (l *loop) finished(code int) error {
	if code == 0 {
		l.res.Completed = true
		l.logf("the orchestrator finished (exit 0) after %d runs and %d agent invocations", l.res.Iterations, len(l.res.Agents))
		return nil
	}
	name := exitNames[code]
	if name == "" {
		name = "an error"
	}
	if code == errs.ExitInterrupted {
		return errs.New(errs.Interrupted, "bridge loop: the orchestrator was interrupted (exit 130) on run %d; continue with: %s", l.res.Iterations, l.resumeCommand())
	}
	kind, ok := exitKinds[code]
	if !ok {
		kind = errs.Unexpected
	}
	next := "fix the cause, then run the loop again"
	if l.res.Iterations > 1 || l.o.Resume {
		next = "its state is kept: fix the cause, then continue with: " + l.resumeCommand()
	}
	return errs.New(kind, "bridge loop: the orchestrator exited %d (%s) on run %d; the loop stopped — %s", code, name, l.res.Iterations, next)
}

// checkTaken makes sure a resumed orchestrator that asks for an agent again
// took the response it was given: one still lying there, or a run whose
// checkpoint does not record it, means the orchestrator is not resuming and
// would be asked the same thing forever.
func (l *loop) checkTaken() error {
	prev := l.last
	if prev == nil {
		return nil
	}
	l.last = nil
	data, err := readIfExists(prev.ResponsePathIn(l.o.Dir))
	if err != nil {
		return err
	}
	taken := data == nil || requestIDOf(data) != prev.RequestID
	if taken {
		if cp, err := LoadCheckpoint(l.p.Checkpoint); err == nil && cp != nil {
			rec := cp.byID(prev.RequestID)
			taken = rec != nil && rec.Status == RecordCompleted
		}
	}
	if taken {
		return nil
	}
	return errs.New(errs.Conflict, "bridge loop: the orchestrator exited 42 on run %d without taking the response to request %s (phase %d %q, agent %s): it is not resuming — does it pass --resume on to the bridge? Stopping rather than asking the agent again",
		l.res.Iterations, prev.RequestID, prev.Phase, prev.PhaseName, prev.AgentName)
}

// takeRequest reads the request an orchestrator left when it exited 42.
func (l *loop) takeRequest() (*Request, error) {
	data, err := readIfExists(l.p.Request)
	if err != nil {
		return nil, err
	}
	if data == nil {
		return nil, errs.New(errs.NotFound, "bridge loop: the orchestrator exited 42 (need agent) but wrote no request at %s; it must use the state directory the loop gives it in its environment (see 'baton bridge loop --help')", l.p.Request)
	}
	req, err := parseRequest(l.p.Request, data)
	if err != nil {
		return nil, err
	}
	if req.RequestID == l.before {
		return nil, errs.New(errs.NotFound, "bridge loop: the orchestrator exited 42 (need agent) but wrote no new request: %s holds request %s, which was there before this loop started", l.p.Request, req.RequestID)
	}
	if n := l.attempts[requestKeyOf(req)]; n >= l.o.MaxAttempts {
		return nil, errs.New(errs.Conflict, "bridge loop: the orchestrator asked again for request %s (phase %d %q, agent %s, retry_count %d) after this loop answered the same request %d times (--max-attempts %d): it is not making progress on it. Stopping rather than asking the agent again; see its answers in %s",
			req.RequestID, req.Phase, req.PhaseName, req.AgentName, req.RetryCount, n, l.o.MaxAttempts, l.p.Store)
	}
	if l.answered[req.RequestID] {
		return nil, errs.New(errs.Conflict, "bridge loop: the orchestrator exited 42 again for request %s, which this loop already answered (%s): it is not reading the response — does it pass --resume on to the bridge? Stopping rather than asking the agent again",
			req.RequestID, req.ResponsePathIn(l.o.Dir))
	}
	return req, nil
}

func (l *loop) limitReached(req *Request) error {
	ne := &NeedAgentError{Request: RequestRecord{RequestID: req.RequestID, AgentName: req.AgentName, Phase: req.Phase, PhaseName: req.PhaseName},
		RequestPath: l.p.Request, ResponsePath: req.ResponsePathIn(l.o.Dir), StateDir: l.o.Dir}
	msg := fmt.Sprintf("bridge loop: stopped after %d orchestrator runs (--max-iterations %d): %s is still outstanding in %s; continue with: %s",
		l.res.Iterations, l.o.MaxIterations, describeRecord(&ne.Request), l.p.Request, l.resumeCommand())
	return &errs.Error{Kind: errs.NeedAgent, Msg: msg, Err: ne}
}

// answerOnce answers req unless a response to it is already waiting.
func (l *loop) answerOnce(ctx context.Context, req *Request) error {
	data, err := readIfExists(req.ResponsePathIn(l.o.Dir))
	if err != nil {
		return err
	}
	if data != nil && requestIDOf(data) == req.RequestID {
		l.logf("a response to request %s is already waiting: resuming without running the agent", req.RequestID)
		l.answered[req.RequestID] = true
		return nil
	}
	return l.answer(ctx, req)
}

// answer runs the agent on req and writes its response.
func (l *loop) answer(ctx context.Context, req *Request) error {
	if l.o.AgentCmd == "" {
		return l.noAgent(req)
	}
	prompt, err := req.PromptText()
	if err != nil {
		return err
	}
	l.logf("agent %s for request %s (phase %d %q), timeout %ds", req.AgentName, req.RequestID, req.Phase, req.PhaseName, req.TimeoutSeconds)
	run := l.runAgent(ctx, req, prompt)
	if run.interrupted {
		return errs.New(errs.Interrupted, "bridge loop: interrupted while agent %s answered request %s: no response was written and the request stays outstanding; continue with: %s",
			req.AgentName, req.RequestID, l.resumeCommand())
	}
	ans := run.answer(req, l.o.MaxOutput)
	ans.Metadata = map[string]any{"host_token": l.token}
	resp, err := NewResponse(req, ans, l.o.Now())
	if err != nil {
		return err
	}
	path := l.p.Response
	if err := l.writeAnswer(ctx, req, resp); err != nil {
		return err
	}
	l.answered[req.RequestID] = true
	l.attempts[requestKeyOf(req)]++
	l.res.Agents = append(l.res.Agents, AgentRun{RequestID: req.RequestID, AgentName: req.AgentName, Phase: req.Phase, PhaseName: req.PhaseName,
		Status: resp.Status, ErrorType: deref(resp.ErrorType), DurationSeconds: resp.DurationSeconds})
	l.logf("agent %s: %s in %.1fs; response written to %s", req.AgentName, resp.Status, resp.DurationSeconds, path)
	return nil
}

func (l *loop) noAgent(req *Request) error {
	ne := &NeedAgentError{Request: RequestRecord{RequestID: req.RequestID, AgentName: req.AgentName, Phase: req.Phase, PhaseName: req.PhaseName},
		RequestPath: l.p.Request, ResponsePath: req.ResponsePathIn(l.o.Dir), StateDir: l.o.Dir}
	return &errs.Error{Kind: errs.NeedAgent, Msg: "bridge loop: no --agent-cmd to run; " + ne.Error(), Err: ne}
}

// resumeCommand is the command that continues this loop: with --resume
// once the orchestrator has checkpointed a run, else the same loop again
// (a resume with no run to resume would only fail). A request that
// carries a host token needs this loop's token.
func (l *loop) resumeCommand() string {
	parts := []string{"baton bridge loop --resume --state-dir", shellQuote(l.o.Dir)}
	cp, err := LoadCheckpoint(l.p.Checkpoint)
	switch {
	case err == nil && cp == nil && !exists(l.p.Request):
		parts = []string{"baton bridge loop --state-dir", shellQuote(l.o.Dir)}
	case err == nil && cp.pending() != nil && cp.pending().TokenSHA256 != "":
		parts = append([]string{"BATON_HOST_TOKEN=" + l.token}, parts...)
	}
	if l.o.AgentCmd != "" {
		parts = append(parts, "--agent-cmd", shellQuote(l.o.AgentCmd))
	}
	parts = append(parts, "--")
	for _, a := range l.o.Orchestrator {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// requestKeyOf is the key a loop counts a request's answers by.
func requestKeyOf(req *Request) string {
	if k := req.Context.RequestKey; k != "" {
		return k
	}
	return req.RequestID
}

// writeAnswer writes the response under the state lock, if the run's
// checkpoint (when there is one) still holds req as outstanding.
func (l *loop) writeAnswer(ctx context.Context, req *Request, resp *Response) error {
	return locked(ctx, l.o.Dir, func() error {
		cp, err := LoadCheckpoint(l.p.Checkpoint)
		if err != nil {
			return err
		}
		if cp != nil {
			if pend := cp.pending(); pend == nil || pend.RequestID != req.RequestID {
				return errs.New(errs.Conflict, "bridge loop: request %s is no longer outstanding in %s (another orchestrator replaced the run?); its answer was not written", req.RequestID, l.o.Dir)
			}
		}
		return WriteResponse(l.p.Response, resp)
	})
}
