package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
)

// DefaultMaxRequestBytes is the largest request file baton writes, measured
// on the encoded JSON, prompt and context together. A prompt that would
// make it larger goes to a side file the request points to; a context that
// alone would is refused (pass large material as a file path instead).
const DefaultMaxRequestBytes = 32 << 10

// DefaultMaxInlinePrompt is the former name of DefaultMaxRequestBytes.
const DefaultMaxInlinePrompt = DefaultMaxRequestBytes

// Invoker asks an agent for an answer. *Bridge does it through the files
// and exit 42; *Mock answers from canned responses in tests.
type Invoker interface {
	Invoke(agent, prompt string, opts InvokeOptions) (string, error)
}

// InvokeOptions describe one request.
type InvokeOptions struct {
	// Phase is the request's step number in the run; 0 means the next free
	// one. A request is known by the digest of its agent, phase name,
	// prompt and context, so a resumed run gets each answer back whatever
	// the order of its calls, and a changed prompt is asked anew. With an
	// explicit Phase, a call whose digest is not that phase's is refused.
	Phase int
	// PhaseName names the step (default: the agent's name).
	PhaseName string
	// TimeoutSeconds is how long the host lets the agent run (default 120).
	TimeoutSeconds int
	// Context is added to the request's context object.
	Context map[string]any
	// Retries is how many times a request answered error or timeout is
	// asked again (with retry_count 1, 2, ...) before the failure is
	// returned. 0: never.
	Retries int
	// Checkpoint names the run's checkpoint (seed 001's checkpoint, e.g.
	// agent_generation_pending) while this request is outstanding.
	Checkpoint string
}

// Options open a bridge in a state directory.
type Options struct {
	Dir    string // the state directory, absolute
	Resume bool   // the orchestrator was re-run with --resume
	// Cwd is the process's working directory. When it is another
	// directory of the project, a copy of the request is written there too
	// (a host following seed 001 reads ./.agent-request.json) and a
	// response written there is taken.
	Cwd             string
	Now             func() time.Time
	MaxRequestBytes int       // default DefaultMaxRequestBytes
	MaxInlinePrompt int       // the former name of MaxRequestBytes
	MaxRejected     int       // set-aside responses kept (default DefaultMaxRejected)
	Warn            io.Writer // warnings (a stale response set aside, ...); nil discards
	Ctx             context.Context
	// HostToken makes every request carry a secret for its host: printed
	// with the checkpoint, kept only hashed, and required from whoever
	// answers (respond --token), so that no one else can answer it. Token,
	// when set, is the secret to use (a host loop chooses it).
	HostToken bool
	Token     string
}

// Bridge is one orchestrator process's view of a run.
type Bridge struct {
	o    Options
	p    Paths
	cp   *Checkpoint
	seen map[string]int // requests of this process by base digest: occurrences
}

// Open starts a run, or, with Resume, continues the run in o.Dir: it
// takes the response to the outstanding request (refusing, with exit 5,
// one that does not answer it) so that Invoke can replay every answer.
// Without Resume, a response that answers the outstanding request of the
// run there is not set aside: Open refuses (exit 5) and says to pass
// --resume, so a host that forgets it stops instead of asking forever.
func Open(o Options) (*Bridge, error) {
	if !filepath.IsAbs(o.Dir) {
		return nil, errs.New(errs.Usage, "bridge: the state directory %q must be absolute", o.Dir)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = o.MaxInlinePrompt
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if o.Ctx == nil {
		o.Ctx = context.Background()
	}
	b := &Bridge{o: o, p: PathsIn(o.Dir), seen: map[string]int{}}
	err := b.locked(func() error {
		cp, err := LoadCheckpoint(b.p.Checkpoint)
		if !o.Resume {
			if err != nil {
				b.warnf("%v; a new run replaces it", err)
				cp = nil
			}
			if err := b.refuseForgottenResume(cp); err != nil {
				return err
			}
			return b.startRun(cp)
		}
		if err != nil {
			return err
		}
		b.cp = cp
		return b.resume()
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

func (b *Bridge) locked(fn func() error) error { return locked(b.o.Ctx, b.o.Dir, fn) }

// reload re-reads the checkpoint under the lock: another orchestrator may
// have started a run of its own in the same state directory since.
func (b *Bridge) reload() error {
	cp, err := LoadCheckpoint(b.p.Checkpoint)
	if err != nil {
		return err
	}
	if cp == nil || cp.RunID != b.cp.RunID {
		other := "removed it"
		if cp != nil {
			other = "started run " + cp.RunID
		}
		return errs.New(errs.Conflict, "bridge: run %s is no longer the run in %s: another orchestrator %s there; one state directory holds one run at a time — re-run this orchestrator once the other has finished",
			b.cp.RunID, b.o.Dir, other)
	}
	b.cp = cp
	return nil
}

// refuseForgottenResume stops a run started without --resume while the
// answer to the outstanding request of the run there is waiting.
func (b *Bridge) refuseForgottenResume(cp *Checkpoint) error {
	pend := cp.pending()
	if pend == nil {
		return nil
	}
	path, data, err := b.responseFile(cp)
	if err != nil || data == nil {
		return err
	}
	if judge(cp, data).resp != nil {
		return errs.New(errs.Conflict, "bridge: %s answers the outstanding %s of run %s, but the orchestrator was run without --resume: re-run it with --resume to take that answer (nothing was changed; without --resume the run would start over and ask the agent again)",
			path, describeRecord(pend), cp.RunID)
	}
	if requestIDOf(data) == pend.RequestID {
		return errs.New(errs.Conflict, "bridge: %s is a response to the outstanding %s of run %s, but the orchestrator was run without --resume: re-run it with --resume, which takes the response or names what is wrong with it (nothing was changed; without --resume the run would start over and ask the agent again)",
			path, describeRecord(pend), cp.RunID)
	}
	return nil
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
		if old.Pending != nil || (old.CheckpointName != CheckpointDone && len(old.AgentRequests) > 0) {
			b.warnf("starting a new run: run %s (%d requests, checkpoint %s) is abandoned; pass --resume to continue a run", old.RunID, len(old.AgentRequests), old.CheckpointName)
		}
		if err := os.RemoveAll(b.p.runDir(old.RunID)); err != nil {
			return err
		}
		b.dropMirror(old, "")
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
	dst, err := b.setAside(b.p.Response)
	if err != nil {
		return err
	}
	b.warnf("%s was set aside as %s, not consumed: %s", b.p.Response, filepath.Base(dst), why)
	return nil
}

// setAside renames a refused response and keeps only the newest few.
func (b *Bridge) setAside(path string) (string, error) {
	dst, err := setAside(path, b.o.Now())
	if err != nil {
		return "", err
	}
	return dst, pruneRejected(filepath.Dir(path), b.o.MaxRejected)
}

func (b *Bridge) save() error {
	b.cp.UpdatedAt = b.now()
	return b.cp.save(b.p.Checkpoint)
}

// Invoke returns the agent's answer to prompt. On a resumed run whose
// response has arrived it returns it (replaying earlier answers);
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

// call is one Ask: what it asks and the key it is known by.
type call struct {
	agent, name, prompt, key string
	o                        InvokeOptions
}

// Ask is Invoke returning the whole response envelope, whatever its status.
func (b *Bridge) Ask(agent, prompt string, o InvokeOptions) (*Response, error) {
	c, err := b.newCall(agent, prompt, o)
	if err != nil {
		return nil, err
	}
	var resp *Response
	err = b.locked(func() error {
		if err := b.reload(); err != nil {
			return err
		}
		resp, err = b.ask(c)
		return err
	})
	return resp, err
}

func (b *Bridge) ask(c call) (*Response, error) {
	if c.o.Phase > 0 {
		if rec := b.cp.byPhase(c.o.Phase); rec != nil && rec.Key != c.key {
			return nil, b.phaseConflict(rec, c)
		}
	}
	attempts := b.cp.byKey(c.key)
	if len(attempts) == 0 {
		return nil, b.request(c, 0)
	}
	last := attempts[len(attempts)-1]
	switch {
	case last.Status == RecordPending:
		return nil, b.needAgent(last, "")
	case last.ResponseStatus != StatusSuccess && len(attempts) <= c.o.Retries:
		c.o.Phase = 0
		return nil, b.request(c, len(attempts))
	}
	return b.answerOf(last)
}

func (b *Bridge) newCall(agent, prompt string, o InvokeOptions) (call, error) {
	switch {
	case agent == "":
		return call{}, errs.New(errs.Usage, "bridge: Invoke needs an agent name")
	case prompt == "":
		return call{}, errs.New(errs.Usage, "bridge: Invoke needs a prompt for agent %s", agent)
	case o.Phase < 0:
		return call{}, errs.New(errs.Usage, "bridge: phase %d: phases are numbered from 1", o.Phase)
	case o.TimeoutSeconds < 0 || o.TimeoutSeconds > MaxTimeoutSeconds:
		return call{}, errs.New(errs.Usage, "bridge: timeout %d s: it must be between 1 and %d seconds", o.TimeoutSeconds, MaxTimeoutSeconds)
	case o.Retries < 0:
		return call{}, errs.New(errs.Usage, "bridge: retries %d: it cannot be negative", o.Retries)
	}
	name := o.PhaseName
	if name == "" {
		name = agent
	}
	base := requestKey(agent, name, prompt, o.Context, 0)
	n := b.seen[base]
	b.seen[base] = n + 1
	return call{agent: agent, name: name, prompt: prompt, key: requestKey(agent, name, prompt, o.Context, n), o: o}, nil
}

func (b *Bridge) phaseConflict(rec *RequestRecord, c call) error {
	return errs.New(errs.Conflict, "bridge: this run asks phase %d %q of agent %s, but phase %d of run %s is %s, asked with another prompt or context: the orchestrator's requests changed between runs, and one request must not get another's answer — re-run it without --resume to start over",
		c.o.Phase, c.name, c.agent, c.o.Phase, b.cp.RunID, describeRecord(rec))
}

// request writes a new request and checkpoints (attempt > 0: a retry).
func (b *Bridge) request(c call, attempt int) error {
	if pend := b.cp.pending(); pend != nil {
		return b.needAgent(pend, "") // one outstanding request at a time
	}
	if err := b.setAsideUnasked("it answers no request: a new request is being written"); err != nil {
		return err
	}
	phase := c.o.Phase
	if phase == 0 {
		phase = b.cp.nextPhase()
	}
	b.warnRanges(phase, c.o.TimeoutSeconds)
	req, data, err := b.newRequest(c, phase, attempt)
	if err != nil {
		return err
	}
	token, tokenHash := b.token()
	rec := RequestRecord{RequestID: req.RequestID, AgentName: c.agent, Phase: phase, PhaseName: c.name, Key: c.key, RetryCount: attempt,
		Status: RecordPending, CreatedAt: req.CreatedAt, TimeoutSeconds: req.TimeoutSeconds, TokenSHA256: tokenHash,
		RequestFile: b.rel(b.p.requestCopy(b.cp.RunID, req.RequestID))}
	if err := writeAtomic(b.p.requestCopy(b.cp.RunID, req.RequestID), data); err != nil {
		return err
	}
	b.cp.AgentRequests = append(b.cp.AgentRequests, rec)
	b.cp.Pending = &PendingRef{RequestID: req.RequestID, CreatedAt: req.CreatedAt}
	b.cp.Phase, b.cp.PhaseName = phase, c.name
	b.cp.setName(orDefault(c.o.Checkpoint, CheckpointPending))
	b.cp.RequestMirror = b.mirrorPath()
	if err := b.save(); err != nil {
		return err
	}
	if err := b.writeRequestFiles(data); err != nil {
		return err
	}
	return b.needAgent(&rec, token)
}

// token is the host token of a new request ("" when requests carry none).
func (b *Bridge) token() (string, string) {
	if !b.o.HostToken {
		return "", ""
	}
	if b.o.Token != "" {
		return b.o.Token, TokenHash(b.o.Token)
	}
	return newToken()
}

// writeRequestFiles writes the request file, and its copy in the working
// directory when that is another directory of the project.
func (b *Bridge) writeRequestFiles(data []byte) error {
	if err := writeAtomic(b.p.Request, data); err != nil {
		return err
	}
	if m := b.cp.RequestMirror; m != "" {
		if err := excludeFromGit(filepath.Dir(m)); err != nil {
			return err
		}
		return writeAtomic(m, data)
	}
	return nil
}

// mirrorPath is where a copy of the request goes: ./.agent-request.json
// when the working directory is another directory of the same project
// (below the state directory, or in the same git repository).
func (b *Bridge) mirrorPath() string {
	cwd := filepath.Clean(b.o.Cwd)
	dir := filepath.Clean(b.o.Dir)
	if b.o.Cwd == "" || cwd == dir {
		return ""
	}
	inside := strings.HasPrefix(cwd, dir+string(filepath.Separator))
	if !inside {
		c := gitCommonDir(cwd)
		inside = c != "" && c == gitCommonDir(dir)
	}
	if !inside {
		return ""
	}
	return filepath.Join(cwd, RequestFile)
}

// dropMirror removes the copy of the request (of id, or any when "").
func (b *Bridge) dropMirror(cp *Checkpoint, id string) {
	if cp == nil || cp.RequestMirror == "" {
		return
	}
	if data, _ := readIfExists(cp.RequestMirror); data != nil && (id == "" || requestIDOf(data) == id) {
		_ = os.Remove(cp.RequestMirror)
	}
}

func (b *Bridge) rel(path string) string {
	if r, err := filepath.Rel(b.o.Dir, path); err == nil {
		return r
	}
	return path
}

// warnRanges warns of values outside seed 000's ranges, which baton
// accepts (docs/bridge.md says why).
func (b *Bridge) warnRanges(phase, timeout int) {
	if phase > 9 {
		b.warnf("phase %d is outside 1-9, the range of the bridge's first schema; baton accepts it (a baton run has as many requests as it needs; see docs/bridge.md)", phase)
	}
	if timeout != 0 && (timeout < 30 || timeout > 600) {
		b.warnf("timeout_seconds %d is outside 30-600, the range of the bridge's first schema; baton accepts 1-%d (agents run from seconds to hours; see docs/bridge.md)", timeout, MaxTimeoutSeconds)
	}
}

// newRequest builds the request and its encoded form, within the size limit.
func (b *Bridge) newRequest(c call, phase, attempt int) (*Request, []byte, error) {
	timeout := c.o.TimeoutSeconds
	if timeout == 0 {
		timeout = DefaultTimeoutSeconds
	}
	req := &Request{
		RequestID: newID(), Version: Version, Phase: phase, PhaseName: c.name, AgentName: c.agent,
		Prompt: c.prompt, TimeoutSeconds: timeout, CreatedAt: b.now(), RetryCount: attempt,
		Context: Context{
			StateDir: b.o.Dir, RequestPath: b.p.Request, ResponsePath: b.p.Response, RunID: b.cp.RunID,
			PromptBytes: len(c.prompt), RequestKey: c.key, RespondCommand: FixCommand(KindResponse, b.o.Dir), Extra: c.o.Context,
		},
	}
	data, err := b.encodeRequest(req)
	if err != nil || len(data) <= b.o.MaxRequestBytes {
		return req, data, err
	}
	req.Context.PromptSHA256 = sha256Hex([]byte(c.prompt))
	req.Context.PromptFile = b.p.promptFile(b.cp.RunID, req.RequestID)
	req.Prompt = fmt.Sprintf("The prompt for this request is %d bytes, too large to inline. It is in %s (sha256 %s): read that file and follow it as your prompt.",
		len(c.prompt), req.Context.PromptFile, req.Context.PromptSHA256)
	if data, err = b.encodeRequest(req); err != nil {
		return nil, nil, err
	}
	if len(data) > b.o.MaxRequestBytes {
		ctx, _ := encodeJSON(c.o.Context)
		return nil, nil, errs.New(errs.Usage, "bridge: the request for agent %s would be %d bytes encoded, over the limit of %d bytes (--max-request-bytes) even with its %d-byte prompt moved to a side file: its context is %d bytes encoded. Pass large material as a file: write it to a file and put the file's absolute path in the context (such as {\"input_file\": \"/path/to/material\"}); nothing was written",
			c.agent, len(data), b.o.MaxRequestBytes, len(c.prompt), len(ctx))
	}
	return req, data, writeAtomic(req.Context.PromptFile, []byte(c.prompt))
}

func (b *Bridge) encodeRequest(req *Request) ([]byte, error) {
	data, err := encodeJSON(req)
	if err != nil {
		return nil, err
	}
	if ps := Diagnose(KindRequest, data); len(ps) > 0 {
		return nil, errs.New(errs.Usage, "bridge: the request for agent %s is invalid: %s", req.AgentName, joinProblems(ps))
	}
	return data, nil
}

// NeedAgentError is the checkpoint Invoke returns (wrapped in an
// errs.NeedAgent error): which request waits, and where.
type NeedAgentError struct {
	Request      RequestRecord
	RequestPath  string
	ResponsePath string
	StateDir     string
	// Token is the host token of a request that carries one: only the host
	// that ran the orchestrator learns it, from this error.
	Token string
}

func (e *NeedAgentError) Error() string {
	cmd := FixCommand(KindResponse, e.StateDir)
	tok := ""
	if e.Token != "" {
		cmd = strings.Replace(cmd, " respond ", " respond --token "+e.Token+" ", 1)
		tok = fmt.Sprintf(" (host token %s: only the host that ran the orchestrator may answer)", e.Token)
	}
	return fmt.Sprintf("need agent: %s is in %s; run the agent, write its answer with '%s' (it goes to %s), then re-run the orchestrator with --resume%s",
		describeRecord(&e.Request), e.RequestPath, cmd, e.ResponsePath, tok)
}

func (b *Bridge) needAgent(rec *RequestRecord, token string) error {
	ne := &NeedAgentError{Request: *rec, RequestPath: b.p.Request, ResponsePath: b.p.Response, StateDir: b.o.Dir, Token: token}
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
	if err := json.Unmarshal(stripBOM(data), &resp); err != nil || resp.RequestID != rec.RequestID {
		return nil, errs.New(errs.Invalid, "bridge: %s does not hold the answer to %s; re-run without --resume to start over", path, describeRecord(rec))
	}
	return &resp, nil
}

// Answer is the answer recorded for a phase of the run: the response when
// it was taken, an errs.NeedAgent error while it is outstanding, an
// errs.NotFound error when the run has no such phase.
func (b *Bridge) Answer(phase int) (*Response, error) {
	rec := b.cp.byPhase(phase)
	switch {
	case rec == nil:
		return nil, errs.New(errs.NotFound, "bridge: run %s has no phase %d", b.cp.RunID, phase)
	case rec.Status == RecordPending:
		return nil, b.needAgent(rec, "")
	}
	return b.answerOf(rec)
}

// Complete ends the run: no request or response is left for a host to act
// on, and the run's state (checkpoint and stored answers) is removed, as
// seed 001's orchestrator removes its state file on success.
func (b *Bridge) Complete() error {
	return b.locked(func() error {
		if err := b.reload(); err != nil {
			return err
		}
		if err := b.setAsideUnasked("the run completed without asking for it"); err != nil {
			return err
		}
		if err := removeIfExists(b.p.Request); err != nil {
			return err
		}
		b.dropMirror(b.cp, "")
		b.cp.Pending = nil
		b.cp.setName(CheckpointDone)
		return os.RemoveAll(b.p.Store)
	})
}

// SetData keeps v (as JSON) in the checkpoint's phase_data under key, so
// a resumed run can read what an earlier one computed.
func (b *Bridge) SetData(key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.update(func(cp *Checkpoint) {
		if cp.PhaseData == nil {
			cp.PhaseData = map[string]json.RawMessage{}
		}
		cp.PhaseData[key] = raw
	})
}

// SetConfig merges cfg into the checkpoint's config (seed 001: the
// orchestrator's options, kept for the resumed run).
func (b *Bridge) SetConfig(cfg map[string]any) error {
	return b.update(func(cp *Checkpoint) {
		if cp.Config == nil {
			cp.Config = map[string]any{}
		}
		for k, v := range cfg {
			cp.Config[k] = v
		}
	})
}

// SetCheckpoint names the run's checkpoint (seed 001's checkpoint, such
// as templates_generated).
func (b *Bridge) SetCheckpoint(name string) error {
	if name == "" {
		return errs.New(errs.Usage, "bridge: a checkpoint name cannot be empty")
	}
	return b.update(func(cp *Checkpoint) { cp.setName(name) })
}

func (b *Bridge) update(fn func(cp *Checkpoint)) error {
	return b.locked(func() error {
		if err := b.reload(); err != nil {
			return err
		}
		fn(b.cp)
		return b.save()
	})
}

// Data reads phase_data[key] into v and reports whether it was there.
func (b *Bridge) Data(key string, v any) (bool, error) {
	raw, ok := b.cp.PhaseData[key]
	if !ok {
		return false, nil
	}
	return true, json.Unmarshal(raw, v)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
