package bridge

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/baton-cli/baton/errs"
	"github.com/baton-cli/baton/jsondoc"
)

// DefaultMaxInlinePrompt is the largest prompt written into the request
// itself; a larger one goes to a side file the request points to, so that a
// host can always read the request.
const DefaultMaxInlinePrompt = 32 << 10

// Invoker asks an agent for an answer. *Bridge does it through the files
// and exit 42; *Mock answers from canned responses in tests.
type Invoker interface {
	Invoke(agent, prompt string, opts InvokeOptions) (string, error)
}

// InvokeOptions describe one request.
type InvokeOptions struct {
	// Phase is the request's step number in the run; 0 means the next one
	// (1, 2, 3, ... in the order of the Invoke calls). A resumed run must
	// make its requests in the same order, so each gets its own answer.
	Phase int
	// PhaseName names the step (default: the agent's name). A resumed run
	// that asks a different phase name or agent at a step is refused.
	PhaseName string
	// TimeoutSeconds is how long the host lets the agent run (default 120).
	TimeoutSeconds int
	// Context is added to the request's context object.
	Context map[string]any
}

// Options open a bridge in a state directory.
type Options struct {
	Dir    string // the state directory, absolute
	Resume bool   // the orchestrator was re-run with --resume
	// Cwd is the process's working directory, used only to point out a
	// response a host wrote relative to it instead of to the request's path.
	Cwd             string
	Now             func() time.Time
	MaxInlinePrompt int       // default DefaultMaxInlinePrompt
	Warn            io.Writer // warnings (a stale response set aside, ...); nil discards
}

// Bridge is one orchestrator process's view of a run.
type Bridge struct {
	o    Options
	p    Paths
	cp   *Checkpoint
	next int // the phase of the next Invoke without an explicit phase
}

// Open starts a run, or, with Resume, continues the run in o.Dir: it
// takes the response to the outstanding request (refusing, with exit 5,
// one that does not answer it) so that Invoke can replay every answer.
func Open(o Options) (*Bridge, error) {
	if !filepath.IsAbs(o.Dir) {
		return nil, errs.New(errs.Usage, "bridge: the state directory %q must be absolute", o.Dir)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxInlinePrompt <= 0 {
		o.MaxInlinePrompt = DefaultMaxInlinePrompt
	}
	b := &Bridge{o: o, p: PathsIn(o.Dir), next: 1}
	cp, err := LoadCheckpoint(b.p.Checkpoint)
	if !o.Resume {
		if err != nil {
			b.warnf("%v; a new run replaces it", err)
			cp = nil
		}
		return b, b.startRun(cp)
	}
	if err != nil {
		return nil, err
	}
	b.cp = cp
	if err := b.resume(); err != nil {
		return nil, err
	}
	return b, nil
}

// Paths are the bridge's files.
func (b *Bridge) Paths() Paths { return b.p }

// Checkpoint is the run's state as it stands.
func (b *Bridge) Checkpoint() *Checkpoint { return b.cp }

func (b *Bridge) now() string { return jsondoc.Timestamp(b.o.Now()) }

func (b *Bridge) warnf(format string, args ...any) {
	if b.o.Warn != nil {
		fmt.Fprintf(b.o.Warn, "WARNING: "+format+"\n", args...)
	}
}

// startRun begins a new run: what an earlier run left is dropped, and a
// response lying there is set aside — it cannot answer a request not yet made.
func (b *Bridge) startRun(old *Checkpoint) error {
	if old != nil {
		if old.CheckpointName != CheckpointDone && len(old.AgentRequests) > 0 {
			b.warnf("starting a new run: run %s (%d requests, checkpoint %s) is abandoned; pass --resume to continue a run", old.RunID, len(old.AgentRequests), old.CheckpointName)
		}
		if err := os.RemoveAll(b.p.runDir(old.RunID)); err != nil {
			return err
		}
	}
	if err := removeIfExists(b.p.Request); err != nil {
		return err
	}
	if err := b.setAsideUnasked("it was left by an earlier run"); err != nil {
		return err
	}
	now := b.now()
	b.cp = &Checkpoint{
		Version: Version, RunID: newID(), CreatedAt: now, UpdatedAt: now, OutputPath: b.o.Dir,
		Config: map[string]any{"state_dir": b.o.Dir}, PhaseData: map[string]json.RawMessage{},
		CompletedPhases: []CompletedPhase{}, AgentRequests: []RequestRecord{},
	}
	b.cp.setName(CheckpointStarted)
	return b.save()
}

// setAsideUnasked sets aside a response no request of this process asked
// for, with a warning saying why.
func (b *Bridge) setAsideUnasked(why string) error {
	if !exists(b.p.Response) {
		return nil
	}
	dst, err := setAside(b.p.Response, b.o.Now())
	if err != nil {
		return err
	}
	b.warnf("%s was set aside as %s, not consumed: %s", b.p.Response, filepath.Base(dst), why)
	return nil
}

func (b *Bridge) save() error {
	b.cp.UpdatedAt = b.now()
	return b.cp.save(b.p.Checkpoint)
}

// Invoke returns the agent's answer to prompt. On a resumed run whose
// response has arrived it returns it (replaying earlier answers in order);
// otherwise it writes a request, checkpoints, and returns an errs.NeedAgent
// error (exit 42) wrapping a *NeedAgentError: the orchestrator returns it
// from main and stops. An answer whose status is not success is returned
// as an *AgentError.
func (b *Bridge) Invoke(agent, prompt string, o InvokeOptions) (string, error) {
	resp, err := b.Ask(agent, prompt, o)
	if err != nil {
		return "", err
	}
	return resp.Text(), resp.Err(agent)
}

// Ask is Invoke returning the whole response envelope, whatever its status.
func (b *Bridge) Ask(agent, prompt string, o InvokeOptions) (*Response, error) {
	phase, name, err := b.step(agent, prompt, o)
	if err != nil {
		return nil, err
	}
	rec := b.cp.byPhase(phase)
	switch {
	case rec == nil:
		return nil, b.request(phase, name, agent, prompt, o)
	case rec.PhaseName != name || rec.AgentName != agent:
		return nil, b.phaseConflict(rec, phase, name, agent)
	case rec.Status == RecordPending:
		return nil, b.needAgent(rec)
	}
	return b.answerOf(rec)
}

func (b *Bridge) step(agent, prompt string, o InvokeOptions) (int, string, error) {
	switch {
	case agent == "":
		return 0, "", errs.New(errs.Usage, "bridge: Invoke needs an agent name")
	case prompt == "":
		return 0, "", errs.New(errs.Usage, "bridge: Invoke needs a prompt for agent %s", agent)
	case o.Phase < 0:
		return 0, "", errs.New(errs.Usage, "bridge: phase %d: phases are numbered from 1", o.Phase)
	case o.TimeoutSeconds < 0 || o.TimeoutSeconds > MaxTimeoutSeconds:
		return 0, "", errs.New(errs.Usage, "bridge: timeout %d s: it must be between 1 and %d seconds", o.TimeoutSeconds, MaxTimeoutSeconds)
	}
	phase := o.Phase
	if phase == 0 {
		phase = b.next
	}
	b.next = phase + 1
	name := o.PhaseName
	if name == "" {
		name = agent
	}
	return phase, name, nil
}

func (b *Bridge) phaseConflict(rec *RequestRecord, phase int, name, agent string) error {
	return errs.New(errs.Conflict, "bridge: this run asks phase %d %q of agent %s, but phase %d of run %s is %s: the orchestrator's requests changed between runs, and one phase must not get another's answer — re-run it without --resume to start over",
		phase, name, agent, phase, b.cp.RunID, describeRecord(rec))
}

// request writes a new request and checkpoints.
func (b *Bridge) request(phase int, name, agent, prompt string, o InvokeOptions) error {
	if pend := b.cp.pending(); pend != nil {
		return b.needAgent(pend) // one outstanding request at a time
	}
	if err := b.setAsideUnasked("it answers no request: a new request is being written"); err != nil {
		return err
	}
	req, err := b.newRequest(phase, name, agent, prompt, o)
	if err != nil {
		return err
	}
	if ps := Diagnose(KindRequest, mustJSON(req)); len(ps) > 0 {
		return errs.New(errs.Usage, "bridge: the request for agent %s is invalid: %s", agent, joinProblems(ps))
	}
	rec := RequestRecord{RequestID: req.RequestID, AgentName: agent, Phase: phase, PhaseName: name,
		Status: RecordPending, CreatedAt: req.CreatedAt, TimeoutSeconds: req.TimeoutSeconds}
	b.cp.AgentRequests = append(b.cp.AgentRequests, rec)
	b.cp.Pending = &PendingRef{RequestID: req.RequestID, CreatedAt: req.CreatedAt}
	b.cp.Phase, b.cp.PhaseName = phase, name
	b.cp.setName(CheckpointPending)
	if err := b.save(); err != nil {
		return err
	}
	if err := writeJSON(b.p.Request, req); err != nil {
		return err
	}
	return b.needAgent(&rec)
}

func (b *Bridge) newRequest(phase int, name, agent, prompt string, o InvokeOptions) (*Request, error) {
	timeout := o.TimeoutSeconds
	if timeout == 0 {
		timeout = DefaultTimeoutSeconds
	}
	req := &Request{
		RequestID: newID(), Version: Version, Phase: phase, PhaseName: name, AgentName: agent,
		Prompt: prompt, TimeoutSeconds: timeout, CreatedAt: b.now(),
		Context: Context{
			StateDir: b.o.Dir, RequestPath: b.p.Request, ResponsePath: b.p.Response, RunID: b.cp.RunID,
			PromptBytes: len(prompt), RespondCommand: FixCommand(KindResponse, b.o.Dir), Extra: o.Context,
		},
	}
	if len(prompt) <= b.o.MaxInlinePrompt {
		return req, nil
	}
	req.Context.PromptSHA256 = sha256Hex([]byte(prompt))
	req.Context.PromptFile = b.p.promptFile(b.cp.RunID, req.RequestID)
	if err := writeAtomic(req.Context.PromptFile, []byte(prompt)); err != nil {
		return nil, err
	}
	req.Prompt = fmt.Sprintf("The prompt for this request is %d bytes, too large to inline. It is in %s (sha256 %s): read that file and follow it as your prompt.",
		len(prompt), req.Context.PromptFile, req.Context.PromptSHA256)
	return req, nil
}

// NeedAgentError is the checkpoint Invoke returns (wrapped in an
// errs.NeedAgent error): which request waits, and where.
type NeedAgentError struct {
	Request      RequestRecord
	RequestPath  string
	ResponsePath string
	StateDir     string
}

func (e *NeedAgentError) Error() string {
	return fmt.Sprintf("need agent: %s is in %s; run the agent, write its answer with '%s' (it goes to %s), then re-run the orchestrator with --resume",
		describeRecord(&e.Request), e.RequestPath, FixCommand(KindResponse, e.StateDir), e.ResponsePath)
}

func (b *Bridge) needAgent(rec *RequestRecord) error {
	ne := &NeedAgentError{Request: *rec, RequestPath: b.p.Request, ResponsePath: b.p.Response, StateDir: b.o.Dir}
	return &errs.Error{Kind: errs.NeedAgent, Msg: ne.Error(), Err: ne}
}

// answerOf reads the consumed response of a completed request.
func (b *Bridge) answerOf(rec *RequestRecord) (*Response, error) {
	path := filepath.Join(b.o.Dir, rec.ResponseFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errs.New(errs.Invalid, "bridge: the answer to %s is gone (%v); re-run without --resume to start over", describeRecord(rec), err)
	}
	var resp Response
	if err := json.Unmarshal(data, &resp); err != nil || resp.RequestID != rec.RequestID {
		return nil, errs.New(errs.Invalid, "bridge: %s does not hold the answer to %s; re-run without --resume to start over", path, describeRecord(rec))
	}
	return &resp, nil
}

// Complete ends the run: the checkpoint says complete, and no request or
// response is left for a host to act on.
func (b *Bridge) Complete() error {
	if err := b.setAsideUnasked("the run completed without asking for it"); err != nil {
		return err
	}
	if err := removeIfExists(b.p.Request); err != nil {
		return err
	}
	b.cp.Pending = nil
	b.cp.setName(CheckpointDone)
	return b.save()
}

// SetData keeps v (as JSON) in the checkpoint's phase_data under key, so
// a resumed run can read what an earlier one computed.
func (b *Bridge) SetData(key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if b.cp.PhaseData == nil {
		b.cp.PhaseData = map[string]json.RawMessage{}
	}
	b.cp.PhaseData[key] = raw
	return b.save()
}

// Data reads phase_data[key] into v and reports whether it was there.
func (b *Bridge) Data(key string, v any) (bool, error) {
	raw, ok := b.cp.PhaseData[key]
	if !ok {
		return false, nil
	}
	return true, json.Unmarshal(raw, v)
}

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own structs are marshalled
	}
	return data
}
