package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
)

// ReadRequest reads the outstanding request of the state directory dir:
// .agent-request.json, or, when a host has already deleted it (seed 001's
// host does), the copy the run keeps of it.
func ReadRequest(dir string) (*Request, error) {
	p := PathsIn(dir)
	cp, err := LoadCheckpoint(p.Checkpoint)
	if err != nil {
		return nil, err
	}
	pend := cp.pending()
	data, err := readIfExists(p.Request)
	if err != nil {
		return nil, err
	}
	if data == nil && pend != nil && pend.RequestFile != "" {
		if data, err = readIfExists(filepath.Join(dir, pend.RequestFile)); err != nil {
			return nil, err
		}
	}
	if data != nil {
		req, err := parseRequest(p.Request, data)
		if err != nil {
			return nil, err
		}
		req.followDir(p, cp)
		return req, nil
	}
	if pend != nil {
		return requestFromRecord(p, cp, pend), nil
	}
	return nil, errs.New(errs.NotFound, "bridge: no request to answer: %s does not exist and no request is outstanding in %s", p.Request, dir)
}

// followDir points the request's paths into the state directory it was
// read from: a project that moved keeps working.
func (r *Request) followDir(p Paths, cp *Checkpoint) {
	if r.Context.PromptFile != "" && cp != nil && r.Context.RunID == cp.RunID {
		r.Context.PromptFile = p.promptFile(cp.RunID, r.RequestID)
	}
	r.Context.StateDir, r.Context.RequestPath, r.Context.ResponsePath = p.Dir, p.Request, p.Response
}

// ParseRequest checks data as a request with the JSON Schema and decodes it.
func parseRequest(path string, data []byte) (*Request, error) {
	if ps := Diagnose(KindRequest, data); len(ps) > 0 {
		return nil, errs.New(errs.Invalid, "%s: not a valid agent request: %s", path, joinProblems(ps))
	}
	var req Request
	if err := json.Unmarshal(data, &req); err != nil {
		return nil, errs.New(errs.Invalid, "%s: %v", path, err)
	}
	if req.TimeoutSeconds == 0 {
		req.TimeoutSeconds = DefaultTimeoutSeconds // seed 000 makes it optional
	}
	return &req, nil
}

func requestFromRecord(p Paths, cp *Checkpoint, rec *RequestRecord) *Request {
	return &Request{
		RequestID: rec.RequestID, Version: Version, Phase: rec.Phase, PhaseName: rec.PhaseName, AgentName: rec.AgentName,
		TimeoutSeconds: rec.TimeoutSeconds, CreatedAt: rec.CreatedAt,
		Context: Context{StateDir: p.Dir, RequestPath: p.Request, ResponsePath: p.Response, RunID: cp.RunID},
	}
}

// PromptText is the request's whole prompt: the side file's content when
// the prompt was too large to inline (checked against its sha256).
func (r *Request) PromptText() (string, error) {
	if r.Context.PromptFile == "" {
		return r.Prompt, nil
	}
	data, err := os.ReadFile(r.Context.PromptFile)
	if err != nil {
		return "", errs.New(errs.NotFound, "bridge: the prompt of request %s is gone: %v", r.RequestID, err)
	}
	if want := r.Context.PromptSHA256; want != "" && want != sha256Hex(data) {
		return "", errs.New(errs.Invalid, "bridge: %s does not match the sha256 in request %s: it changed after the request was written", r.Context.PromptFile, r.RequestID)
	}
	return string(data), nil
}

// Answer is what a host knows after running an agent.
type Answer struct {
	Status       string // success (default), error or timeout
	Output       string // the agent's raw output; it becomes "response", a string
	ErrorType    string // default: INVOCATION_FAILED for error, TIMEOUT for timeout
	ErrorMessage string
	Duration     time.Duration
	Metadata     map[string]any
}

// NewResponse builds the envelope answering req, as seed 004 requires it:
// all nine fields, the output as one string, nulls where nothing applies.
func NewResponse(req *Request, a Answer, now time.Time) (*Response, error) {
	status := a.Status
	if status == "" {
		status = StatusSuccess
	}
	if !slices.Contains(WriteStatuses, status) {
		return nil, errs.New(errs.Usage, "bridge: status %q: a response's status is one of %s", status, strings.Join(WriteStatuses, ", "))
	}
	r := &Response{
		RequestID: req.RequestID, Version: Version, Status: status, CreatedAt: jsondoc.Timestamp(now),
		DurationSeconds: seconds(a.Duration), Metadata: map[string]any{},
	}
	for k, v := range a.Metadata {
		r.Metadata[k] = v
	}
	if _, ok := r.Metadata["agent_name"]; !ok && req.AgentName != "" {
		r.Metadata["agent_name"] = req.AgentName
	}
	delete(r.Metadata, "response_encoding") // baton's to set: it says how "response" is encoded
	if status == StatusSuccess || a.Output != "" {
		out, enc := encodeOutput(a.Output)
		r.Response = ptr(out)
		if enc != "" {
			r.Metadata["response_encoding"] = enc
		}
	}
	if status == StatusSuccess {
		return r, nil
	}
	r.ErrorType, r.ErrorMessage = ptr(orDefault(a.ErrorType, defaultErrorType(status))), ptr(orDefault(a.ErrorMessage, defaultErrorMessage(req, status)))
	return r, nil
}

func seconds(d time.Duration) float64 {
	if d < 0 {
		return 0
	}
	return math.Round(d.Seconds()*1000) / 1000
}

func defaultErrorType(status string) string {
	if status == StatusTimeout {
		return ErrTimeout
	}
	return ErrInvocationFailed
}

func defaultErrorMessage(req *Request, status string) string {
	if status == StatusTimeout {
		return fmt.Sprintf("agent %s did not answer within %d seconds", req.AgentName, req.TimeoutSeconds)
	}
	return fmt.Sprintf("agent %s failed", req.AgentName)
}

// SinceRequest is the time from req's creation to now, the default
// duration of an answer whose host did not time the agent.
func SinceRequest(req *Request, now time.Time) time.Duration {
	t, err := jsondoc.ParseTime(req.CreatedAt)
	if err != nil || now.Before(t) {
		return 0
	}
	return now.Sub(t)
}

// WriteResponse checks r against the response schema and writes it to
// path atomically.
func WriteResponse(path string, r *Response) error {
	data, err := encodeJSON(r)
	if err != nil {
		return err
	}
	if ps := Diagnose(KindResponse, data); len(ps) > 0 {
		return errs.New(errs.Usage, "bridge: the response would be invalid: %s", joinProblems(ps))
	}
	return writeAtomic(path, data)
}

// RespondOptions answer the outstanding request of a state directory.
type RespondOptions struct {
	Dir       string
	RequestID string // when set, the outstanding request must be this one
	Token     string // the host token, for a request that carries one
	Force     bool   // replace a response already waiting
	Answer    Answer
	// TimeAnswer: when true, Answer.Duration is taken from the request's
	// creation time to Now (the host did not time the agent).
	TimeAnswer bool
	Now        time.Time
	Ctx        context.Context
}

// Respond builds and writes the response to the outstanding request, in
// the state directory Dir (whatever paths the request names), under the
// state lock, and returns it with its path. It refuses a request the run's
// checkpoint does not hold as outstanding, and one whose host token it was
// not given.
func Respond(o RespondOptions) (resp *Response, path string, err error) {
	err = locked(o.Ctx, o.Dir, func() error {
		req, rec, err := outstanding(o.Dir)
		if err != nil {
			return err
		}
		if o.RequestID != "" && o.RequestID != req.RequestID {
			return errs.New(errs.Conflict, "bridge: --request-id %s is not the outstanding request %s (phase %d %q, agent %s); nothing was written",
				o.RequestID, req.RequestID, req.Phase, req.PhaseName, req.AgentName)
		}
		if rec.TokenSHA256 != "" && TokenHash(o.Token) != rec.TokenSHA256 {
			return errs.New(errs.Policy, "bridge: %s is answered only by the host that ran the orchestrator, with the token it printed at exit 42 (--token); nothing was written. If you are an agent working on a request, finish your work and leave the answer to your host", describeRecord(rec))
		}
		path = req.ResponsePathIn(o.Dir)
		if err := checkNoResponse(path, req, o.Force); err != nil {
			return err
		}
		a := o.Answer
		if o.TimeAnswer {
			a.Duration = SinceRequest(req, o.Now)
		}
		if rec.TokenSHA256 != "" {
			a.Metadata = withKey(a.Metadata, "host_token", o.Token)
		}
		if resp, err = NewResponse(req, a, o.Now); err != nil {
			return err
		}
		return WriteResponse(path, resp)
	})
	return resp, path, err
}

// outstanding is the request the run's checkpoint holds as outstanding,
// with its record; a request file the checkpoint does not hold (left by
// another orchestrator, or a run since replaced) is refused.
func outstanding(dir string) (*Request, *RequestRecord, error) {
	req, err := ReadRequest(dir)
	if err != nil {
		return nil, nil, err
	}
	cp, err := LoadCheckpoint(PathsIn(dir).Checkpoint)
	if err != nil {
		return nil, nil, err
	}
	if cp == nil {
		return req, &RequestRecord{RequestID: req.RequestID, AgentName: req.AgentName, Phase: req.Phase, PhaseName: req.PhaseName}, nil // another program's run: no checkpoint to compare with
	}
	rec := cp.pending()
	if rec == nil || rec.RequestID != req.RequestID {
		held := "no request is outstanding"
		if rec != nil {
			held = "the outstanding request is " + describeRecord(rec)
		}
		return nil, nil, errs.New(errs.Conflict, "bridge: %s holds request %s, which the run's checkpoint does not hold (%s): it is not answered; nothing was written", PathsIn(dir).Request, req.RequestID, held)
	}
	return req, rec, nil
}

func withKey(m map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for key, val := range m {
		out[key] = val
	}
	out[k] = v
	return out
}

func checkNoResponse(path string, req *Request, force bool) error {
	data, err := readIfExists(path)
	if err != nil || data == nil || force {
		return err
	}
	id := requestIDOf(data)
	if id == req.RequestID {
		return errs.New(errs.Conflict, "bridge: %s already answers request %s; nothing was written (pass --force to replace it)", path, id)
	}
	return errs.New(errs.Conflict, "bridge: %s already holds a response (request_id %q) that does not answer the outstanding request %s; nothing was written (pass --force to replace it)", path, id, req.RequestID)
}
