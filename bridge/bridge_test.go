package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-cli/baton/internal/errs"
)

type harness struct {
	t    *testing.T
	dir  string
	now  time.Time
	warn bytes.Buffer
}

func newHarness(t *testing.T) *harness {
	return &harness{t: t, dir: t.TempDir(), now: time.Date(2025, 1, 29, 10, 0, 0, 0, time.UTC)}
}

func (h *harness) clock() time.Time {
	h.now = h.now.Add(time.Second)
	return h.now
}

func (h *harness) open(resume bool) (*Bridge, error) {
	return Open(Options{Dir: h.dir, Resume: resume, Now: h.clock, Warn: &h.warn, Cwd: h.dir})
}

func (h *harness) mustOpen(resume bool) *Bridge {
	h.t.Helper()
	b, err := h.open(resume)
	if err != nil {
		h.t.Fatalf("Open(resume=%v): %v", resume, err)
	}
	return b
}

// answer writes a correct response to the outstanding request, as a host
// with 'baton bridge respond' does.
func (h *harness) answer(output string) *Response {
	h.t.Helper()
	resp, _, err := Respond(RespondOptions{Dir: h.dir, Answer: Answer{Output: output, Duration: time.Second}, Now: h.clock()})
	if err != nil {
		h.t.Fatalf("Respond: %v", err)
	}
	return resp
}

func (h *harness) request() *Request {
	h.t.Helper()
	req, err := ReadRequest(h.dir)
	if err != nil {
		h.t.Fatalf("ReadRequest: %v", err)
	}
	return req
}

func (h *harness) writeResponse(doc string) {
	h.t.Helper()
	if err := os.WriteFile(filepath.Join(h.dir, ResponseFile), []byte(doc), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) rejected() []string {
	m, _ := filepath.Glob(filepath.Join(h.dir, RejectedPattern))
	return m
}

func wantKind(t *testing.T, err error, k errs.Kind, substr string) {
	t.Helper()
	if !errs.Is(err, k) {
		t.Fatalf("want a %s error (exit %d), got %v", k, errs.Code(&errs.Error{Kind: k}), err)
	}
	if !strings.Contains(err.Error(), substr) {
		t.Fatalf("error %q does not say %q", err, substr)
	}
}

// threeAgents is an orchestrator that asks three agents in one run, each
// prompt built from the previous answer.
func threeAgents(inv Invoker) (string, error) {
	design, err := inv.Invoke("architect", "Design a parser", InvokeOptions{PhaseName: "design"})
	if err != nil {
		return "", err
	}
	code, err := inv.Invoke("coder", "Implement: "+design, InvokeOptions{PhaseName: "implement"})
	if err != nil {
		return "", err
	}
	review, err := inv.Invoke("reviewer", "Review: "+code, InvokeOptions{PhaseName: "review", TimeoutSeconds: 30})
	if err != nil {
		return "", err
	}
	return strings.Join([]string{design, code, review}, " | "), nil
}

func TestBridgeFirstInvokeCheckpoints(t *testing.T) {
	h := newHarness(t)
	b := h.mustOpen(false)
	_, err := b.Invoke("architect", "Design a parser", InvokeOptions{PhaseName: "design", Context: map[string]any{"feature": "F001"}})
	if errs.Code(err) != 42 {
		t.Fatalf("exit %d (%v), want 42", errs.Code(err), err)
	}
	var ne *NeedAgentError
	if !errors.As(err, &ne) || ne.Request.Phase != 1 || ne.Request.PhaseName != "design" {
		t.Fatalf("want a *NeedAgentError for phase 1 design, got %#v", ne)
	}
	data, err := os.ReadFile(filepath.Join(h.dir, RequestFile))
	if err != nil {
		t.Fatal(err)
	}
	if ps := Diagnose(KindRequest, data); len(ps) > 0 {
		t.Fatalf("request invalid: %v", ps)
	}
	req := h.request()
	if req.Context.ResponsePath != filepath.Join(h.dir, ResponseFile) || req.Context.StateDir != h.dir || !filepath.IsAbs(req.Context.ResponsePath) {
		t.Fatalf("context paths: %+v", req.Context)
	}
	if req.Context.Extra["feature"] != "F001" || req.TimeoutSeconds != DefaultTimeoutSeconds || req.RequestID == ne.Request.RequestID+"x" {
		t.Fatalf("request: %+v", req)
	}
	cpData, _ := os.ReadFile(PathsIn(h.dir).Checkpoint)
	if ps := Diagnose(KindCheckpoint, cpData); len(ps) > 0 {
		t.Fatalf("checkpoint invalid: %v", ps)
	}
	cp, _ := LoadCheckpoint(PathsIn(h.dir).Checkpoint)
	if cp.CheckpointName != CheckpointPending || cp.Pending.RequestID != req.RequestID {
		t.Fatalf("checkpoint: %+v", cp)
	}
}

// Three agents in one run: every resumed run replays the earlier answers
// in order, and each phase gets its own.
func TestBridgeThreeAgentsOneRun(t *testing.T) {
	h := newHarness(t)
	var out string
	ids := map[string]bool{}
	runs := 0
	for resume := false; ; resume = true {
		runs++
		if runs > 5 {
			t.Fatal("no progress after 5 runs")
		}
		var err error
		out, err = threeAgents(h.mustOpen(resume))
		if err == nil {
			break
		}
		if errs.Code(err) != 42 {
			t.Fatalf("run %d: %v", runs, err)
		}
		req := h.request()
		if ids[req.RequestID] {
			t.Fatalf("request id %s reused", req.RequestID)
		}
		ids[req.RequestID] = true
		h.answer("<" + req.AgentName + " on " + req.Prompt + ">")
	}
	want := "<architect on Design a parser> | <coder on Implement: <architect on Design a parser>> | <reviewer on Review: <coder on Implement: <architect on Design a parser>>>"
	if out != want || runs != 4 {
		t.Fatalf("after %d runs got\n%s\nwant\n%s", runs, out, want)
	}
	cp := h.mustOpen(true).Checkpoint()
	if len(cp.AgentRequests) != 3 || len(cp.CompletedPhases) != 3 || cp.Pending != nil {
		t.Fatalf("checkpoint: %+v", cp)
	}
	for i, r := range cp.AgentRequests {
		if r.Phase != i+1 || r.Status != RecordCompleted || r.ResponseStatus != StatusSuccess {
			t.Fatalf("record %d: %+v", i, r)
		}
	}
	if exists(filepath.Join(h.dir, RequestFile)) || exists(filepath.Join(h.dir, ResponseFile)) {
		t.Fatal("request or response file left after the run")
	}
}

// Seed 000's mock invoker, used the way its usage example does.
func TestBridgeMockInvoker(t *testing.T) {
	m := NewMock(nil)
	m.AddResponse("architect", "D")
	if err := m.AddResponseJSON("coder", map[string]any{"files": 2}); err != nil {
		t.Fatal(err)
	}
	m.AddResponse("reviewer", "R")
	out, err := threeAgents(m)
	if err != nil || out != `D | {"files":2} | R` {
		t.Fatalf("got %q, %v", out, err)
	}
	if inv := m.Invocations("coder"); len(inv) != 1 || inv[0].Prompt != "Implement: D" {
		t.Fatalf("coder invocations: %+v", inv)
	}
	if inv := m.Invocations("reviewer"); inv[0].Opts.TimeoutSeconds != 30 {
		t.Fatalf("options not recorded: %+v", inv)
	}
	m.AddFailure("coder", StatusTimeout, ErrTimeout, "too slow")
	_, err = threeAgents(m)
	var ae *AgentError
	if !errors.As(err, &ae) || ae.Status != StatusTimeout {
		t.Fatalf("want an *AgentError, got %v", err)
	}
	m.Reset()
	if len(m.Invocations("")) != 0 {
		t.Fatal("Reset kept invocations")
	}
	if _, err := NewMock(nil).Invoke("nobody", "p", InvokeOptions{}); err == nil {
		t.Fatal("an unconfigured agent must fail")
	}
}

func TestBridgeStaleResponseIsRefusedAndSetAside(t *testing.T) {
	h := newHarness(t)
	_, err := threeAgents(h.mustOpen(false))
	wantKind(t, err, errs.NeedAgent, "")
	first := h.request()
	h.answer("first")
	// a run started without --resume while the answer waits: refused, the answer kept
	_, err = h.open(false)
	wantKind(t, err, errs.Conflict, "re-run it with --resume")
	if !exists(filepath.Join(h.dir, ResponseFile)) || len(h.rejected()) != 0 {
		t.Fatalf("a valid answer must never be set aside: %v", h.rejected())
	}
	// the host drops it and starts over: a new run
	os.Remove(filepath.Join(h.dir, ResponseFile))
	_, err = threeAgents(h.mustOpen(false))
	if errs.Code(err) != 42 || !strings.Contains(h.warn.String(), "is abandoned") {
		t.Fatalf("a fresh run must start over with a warning: %v / %q", err, h.warn.String())
	}
	// a host writes the old response back: refused on resume
	doc, _ := json.Marshal(map[string]any{"request_id": first.RequestID, "version": "1.0", "status": "success", "response": "first",
		"error_message": nil, "error_type": nil, "created_at": "2025-01-29T10:00:00Z", "duration_seconds": 1, "metadata": map[string]any{}})
	h.writeResponse(string(doc))
	_, err = h.open(true)
	wantKind(t, err, errs.Conflict, "does not match the outstanding request")
	if exists(filepath.Join(h.dir, ResponseFile)) || len(h.rejected()) != 1 {
		t.Fatalf("the stale response must be set aside: %v", h.rejected())
	}
	var re *RefusedError
	if !errors.As(err, &re) || !strings.HasPrefix(filepath.Base(re.SetAsideAs), ".agent-response.rejected-") {
		t.Fatalf("want a *RefusedError naming the set-aside file, got %#v", err)
	}
	// the outstanding request is still answerable
	h.answer("second")
	b := h.mustOpen(true)
	if got, err := b.Invoke("architect", "Design a parser", InvokeOptions{PhaseName: "design"}); got != "second" || err != nil {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestBridgeRefusals(t *testing.T) {
	tests := []struct {
		name  string
		setup func(h *harness) // leaves a response file and a state to resume
		kind  errs.Kind
		says  string
	}{
		{"wrong id", func(h *harness) {
			threeAgents(h.mustOpen(false))
			h.writeResponse(strings.Replace(validResponse, "32ecfadc-2b66-4daa-a7c0-a03c449fcea5", "00000000-0000-4000-8000-000000000000", 1))
		}, errs.Conflict, "its request_id 00000000-0000-4000-8000-000000000000 does not match the outstanding request"},
		{"missing id", func(h *harness) {
			threeAgents(h.mustOpen(false))
			h.writeResponse(`{"sections": ["a"]}`)
		}, errs.Conflict, "it has no request_id"},
		{"raw output", func(h *harness) {
			threeAgents(h.mustOpen(false))
			h.writeResponse("Here is the design: ...")
		}, errs.Conflict, "this looks like the agent's raw output"},
		{"response as an object", func(h *harness) {
			threeAgents(h.mustOpen(false))
			h.writeResponse(strings.Replace(with("response", `{"sections": []}`), "32ecfadc-2b66-4daa-a7c0-a03c449fcea5", h.request().RequestID, 1))
		}, errs.Conflict, `"response" is an object, not a string`},
		{"result instead of response", func(h *harness) {
			threeAgents(h.mustOpen(false))
			h.writeResponse(`{"request_id": "` + h.request().RequestID + `", "version": "1.0", "status": "success", "result": "{}", "created_at": "2025-01-29T10:00:00Z"}`)
		}, errs.Conflict, `found "result" instead of "response"`},
		{"missing fields", func(h *harness) {
			threeAgents(h.mustOpen(false))
			h.writeResponse(`{"request_id": "` + h.request().RequestID + `", "status": "success", "response": "x"}`)
		}, errs.Conflict, `missing required field "version"`},
		{"another agent's response", func(h *harness) {
			threeAgents(h.mustOpen(false))
			h.writeResponse(`{"request_id": "` + h.request().RequestID + `", "version": "1.0", "status": "success", "response": "x", "error_message": null, "error_type": null, "created_at": "2025-01-29T10:00:00Z", "duration_seconds": 1, "metadata": {"agent_name": "reviewer"}}`)
		}, errs.Conflict, "another phase's response"},
		{"response before request", func(h *harness) {
			h.writeResponse(validResponse)
		}, errs.Conflict, "there is no bridge run to answer"},
		{"response before request in a run", func(h *harness) {
			threeAgents(h.mustOpen(false))
			h.answer("design")
			h.mustOpen(true) // takes the answer; nothing asked yet
			h.writeResponse(validResponse)
		}, errs.Conflict, "no request is outstanding in run"},
		{"second resume of a consumed response", func(h *harness) {
			threeAgents(h.mustOpen(false))
			h.answer("design")
			consumed, _ := os.ReadFile(filepath.Join(h.dir, ResponseFile))
			threeAgents(h.mustOpen(true)) // consumes it, asks the coder
			h.writeResponse(string(consumed))
		}, errs.Conflict, "which was already consumed"},
		{"no response", func(h *harness) {
			threeAgents(h.mustOpen(false))
		}, errs.NotFound, "nothing to resume with: no response to request"},
		{"nothing to resume", func(h *harness) {}, errs.NotFound, "nothing to resume: no bridge run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			tt.setup(h)
			before := h.rejected()
			_, err := h.open(true)
			wantKind(t, err, tt.kind, tt.says)
			if tt.kind == errs.Conflict {
				if exists(filepath.Join(h.dir, ResponseFile)) || len(h.rejected()) != len(before)+1 {
					t.Fatalf("a refused response must be set aside, not left or consumed: %v", h.rejected())
				}
				if !strings.Contains(err.Error(), "set aside as .agent-response.rejected-") {
					t.Fatalf("the message must name the set-aside file: %v", err)
				}
			}
			// resuming again changes nothing and does not loop
			if _, err2 := h.open(true); tt.kind == errs.Conflict && errs.Is(err2, errs.Conflict) {
				t.Fatalf("a second resume refused again: %v", err2)
			}
		})
	}
}

// A host that wrote the response relative to its own directory is told so.
func TestBridgeMisplacedResponseIsPointedOut(t *testing.T) {
	h := newHarness(t)
	threeAgents(h.mustOpen(false))
	elsewhere := t.TempDir()
	os.WriteFile(filepath.Join(elsewhere, ResponseFile), []byte(validResponse), 0o644)
	_, err := Open(Options{Dir: h.dir, Resume: true, Cwd: elsewhere})
	wantKind(t, err, errs.NotFound, "written relative to another directory")
}

func TestBridgePhaseGetsOnlyItsOwnAnswer(t *testing.T) {
	h := newHarness(t)
	threeAgents(h.mustOpen(false))
	h.answer("design")
	b := h.mustOpen(true)
	// the resumed orchestrator asks something else first: a new request, not the design's answer
	got, err := b.Invoke("coder", "Implement", InvokeOptions{PhaseName: "implement"})
	wantKind(t, err, errs.NeedAgent, `phase 2 "implement", agent coder`)
	if got != "" {
		t.Fatalf("the coder got %q", got)
	}
	// an explicit phase asked with another prompt is refused
	b2, _ := Open(Options{Dir: h.dir, Resume: false, Now: h.clock})
	b2.Invoke("architect", "Design a parser", InvokeOptions{PhaseName: "design", Phase: 1})
	h.answer("design")
	b2 = h.mustOpen(true)
	_, err = b2.Invoke("architect", "Design a lexer", InvokeOptions{PhaseName: "design", Phase: 1})
	wantKind(t, err, errs.Conflict, `phase 1 of run`)
}

func TestBridgeErrorAnswerIsAnAgentError(t *testing.T) {
	h := newHarness(t)
	threeAgents(h.mustOpen(false))
	if _, _, err := Respond(RespondOptions{Dir: h.dir, Answer: Answer{Status: StatusError, ErrorMessage: "rate limited"}, Now: h.clock()}); err != nil {
		t.Fatal(err)
	}
	_, err := threeAgents(h.mustOpen(true))
	var ae *AgentError
	if !errors.As(err, &ae) || ae.Type != ErrInvocationFailed || ae.Message != "rate limited" || errs.Code(err) != 1 {
		t.Fatalf("want an *AgentError, got %v", err)
	}
}

// Seed 000's minimal response is read, with a warning that seed 004
// wants more.
func TestBridgeLenientRead(t *testing.T) {
	h := newHarness(t)
	threeAgents(h.mustOpen(false))
	h.writeResponse(`{"request_id": "` + h.request().RequestID + `", "version": "1.0", "status": "success", "response": "ok", "created_at": "2025-01-29T10:00:00.123456Z"}`)
	b := h.mustOpen(true)
	if got, err := b.Invoke("architect", "Design a parser", InvokeOptions{PhaseName: "design"}); got != "ok" || err != nil {
		t.Fatalf("got %q, %v", got, err)
	}
	if !strings.Contains(h.warn.String(), `missing required field "duration_seconds"`) {
		t.Fatalf("no warning: %q", h.warn.String())
	}
}

func TestBridgeLargePromptGoesToASideFile(t *testing.T) {
	h := newHarness(t)
	b, err := Open(Options{Dir: h.dir, Now: h.clock, MaxRequestBytes: 2000})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 3000)
	b.Invoke("coder", big, InvokeOptions{})
	data, _ := os.ReadFile(filepath.Join(h.dir, RequestFile))
	if len(data) > 2000 {
		t.Fatalf("request is %d bytes", len(data))
	}
	req := h.request()
	if req.Context.PromptFile == "" || !strings.Contains(req.Prompt, req.Context.PromptFile) || req.Context.PromptBytes != 3000 {
		t.Fatalf("request: %+v", req)
	}
	got, err := req.PromptText()
	if err != nil || got != big {
		t.Fatalf("PromptText: %d bytes, %v", len(got), err)
	}
	os.WriteFile(req.Context.PromptFile, []byte("tampered"), 0o644)
	if _, err := req.PromptText(); !errs.Is(err, errs.Invalid) {
		t.Fatalf("a changed prompt file must be refused: %v", err)
	}
}

// A process killed between moving the response in and writing the
// checkpoint leaves a state the next resume finishes.
func TestBridgeInterruptedConsumptionIsFinished(t *testing.T) {
	h := newHarness(t)
	threeAgents(h.mustOpen(false))
	req := h.request()
	h.answer("design")
	p := PathsIn(h.dir)
	cp, _ := LoadCheckpoint(p.Checkpoint)
	if err := moveInto(p.Response, p.answerFile(cp.RunID, 1, req.RequestID)); err != nil {
		t.Fatal(err)
	}
	_, err := threeAgents(h.mustOpen(true))
	if errs.Code(err) != 42 || h.request().AgentName != "coder" {
		t.Fatalf("want the next request, got %v", err)
	}
}

func TestBridgeRespondChecks(t *testing.T) {
	h := newHarness(t)
	_, _, err := Respond(RespondOptions{Dir: h.dir, Now: h.clock()})
	wantKind(t, err, errs.NotFound, "no request to answer")
	threeAgents(h.mustOpen(false))
	_, _, err = Respond(RespondOptions{Dir: h.dir, RequestID: "nope", Now: h.clock()})
	wantKind(t, err, errs.Conflict, "--request-id nope is not the outstanding request")
	h.answer("one")
	_, _, err = Respond(RespondOptions{Dir: h.dir, Now: h.clock()})
	wantKind(t, err, errs.Conflict, "already answers request")
	if _, _, err := Respond(RespondOptions{Dir: h.dir, Force: true, Answer: Answer{Output: "two"}, Now: h.clock()}); err != nil {
		t.Fatal(err)
	}
	// seed 001's host deletes the request file: the checkpoint still knows it
	os.Remove(filepath.Join(h.dir, RequestFile))
	os.Remove(filepath.Join(h.dir, ResponseFile))
	resp, path, err := Respond(RespondOptions{Dir: h.dir, Answer: Answer{Output: "three"}, Now: h.clock()})
	if err != nil || path != filepath.Join(h.dir, ResponseFile) || resp.Metadata["agent_name"] != "architect" {
		t.Fatalf("respond without the request file: %v %s %+v", err, path, resp)
	}
}

func TestBridgeInspectAndClean(t *testing.T) {
	h := newHarness(t)
	threeAgents(h.mustOpen(false))
	h.writeResponse(validResponse)
	st, err := Inspect(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pending == nil || st.Response == nil || st.Response.Accepted || !strings.Contains(st.Response.Reason, "does not match") {
		t.Fatalf("status: %+v %+v", st, st.Response)
	}
	h.open(true) // refuses and sets aside
	removed, err := Clean(h.dir)
	if err != nil || len(removed) != 3 { // request, set-aside response, store
		t.Fatalf("Clean: %v %v", removed, err)
	}
	if st, _ := Inspect(h.dir); st.RunID != "" || len(st.SetAside) != 0 {
		t.Fatalf("after clean: %+v", st)
	}
}

func TestBridgeCompleteAndPhaseData(t *testing.T) {
	h := newHarness(t)
	b := h.mustOpen(false)
	if err := b.SetData("analysis", map[string]int{"files": 3}); err != nil {
		t.Fatal(err)
	}
	b.Invoke("architect", "p", InvokeOptions{})
	h.answer("a")
	b = h.mustOpen(true)
	var got map[string]int
	if ok, err := b.Data("analysis", &got); !ok || err != nil || got["files"] != 3 {
		t.Fatalf("Data: %v %v %v", ok, err, got)
	}
	if err := b.Complete(); err != nil {
		t.Fatal(err)
	}
	if exists(PathsIn(h.dir).Checkpoint) || exists(PathsIn(h.dir).Store) {
		t.Fatal("a completed run's state must be removed")
	}
}

func TestBridgeInvokeUsage(t *testing.T) {
	b := newHarness(t).mustOpen(false)
	for _, tc := range []struct {
		agent, prompt string
		o             InvokeOptions
	}{{"", "p", InvokeOptions{}}, {"a", "", InvokeOptions{}}, {"a", "p", InvokeOptions{TimeoutSeconds: -1}}, {"a", "p", InvokeOptions{Phase: -2}}} {
		if _, err := b.Invoke(tc.agent, tc.prompt, tc.o); !errs.Is(err, errs.Usage) {
			t.Errorf("Invoke(%q, %q, %+v): %v, want a usage error", tc.agent, tc.prompt, tc.o, err)
		}
	}
	if _, err := Open(Options{Dir: "relative"}); !errs.Is(err, errs.Usage) {
		t.Fatalf("a relative state dir: %v", err)
	}
}
