package bridge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-cli/baton/internal/errs"
)

// reviewFiles is an orchestrator that asks one reviewer per file, with the
// default phase name: the calls differ only by their prompts.
func reviewFiles(inv Invoker, files []string) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range files {
		ans, err := inv.Invoke("reviewer", "Review "+f, InvokeOptions{})
		if err != nil {
			return out, err
		}
		out[f] = ans
	}
	return out, nil
}

// answerWith answers the outstanding request with a text naming its prompt,
// as an agent would answer that prompt and no other.
func (h *harness) answerPrompt() {
	h.t.Helper()
	req := h.request()
	h.answer("answer to: " + req.Prompt)
}

// The Go API's crossed answer: a resumed run whose calls shifted (a file
// list that gained a file) gets each answer for its own prompt only.
func TestBridgeShiftedCallsGetTheirOwnAnswers(t *testing.T) {
	h := newHarness(t)
	_, err := reviewFiles(h.mustOpen(false), []string{"b.go", "c.go"})
	wantKind(t, err, errs.NeedAgent, `"reviewer"`)
	h.answerPrompt() // b.go answered
	// the next run's list gained a.go before b.go
	files := []string{"a.go", "b.go", "c.go"}
	for i := 0; i < 5; i++ {
		got, err := reviewFiles(h.mustOpen(true), files)
		if err == nil {
			for f, ans := range got {
				if ans != "answer to: Review "+f {
					t.Fatalf("%s got %q", f, ans)
				}
			}
			return
		}
		wantKind(t, err, errs.NeedAgent, "need agent")
		h.answerPrompt()
	}
	t.Fatal("the run did not finish")
}

// The same call made twice in one run is two requests, each with its answer.
func TestBridgeRepeatedCallIsItsOwnRequest(t *testing.T) {
	h := newHarness(t)
	ask := func(b *Bridge) (string, error) {
		one, err := b.Invoke("poet", "Write a line", InvokeOptions{})
		if err != nil {
			return "", err
		}
		two, err := b.Invoke("poet", "Write a line", InvokeOptions{})
		return one + "/" + two, err
	}
	_, err := ask(h.mustOpen(false))
	wantKind(t, err, errs.NeedAgent, "phase 1")
	h.answer("first")
	_, err = ask(h.mustOpen(true))
	wantKind(t, err, errs.NeedAgent, "phase 2")
	h.answer("second")
	if got, err := ask(h.mustOpen(true)); got != "first/second" || err != nil {
		t.Fatalf("got %q, %v", got, err)
	}
}

// A request answered error is asked again up to Retries times, with
// retry_count counted.
func TestBridgeRetriesCountRetryCount(t *testing.T) {
	h := newHarness(t)
	ask := func(b *Bridge) (string, error) {
		return b.Invoke("coder", "Implement", InvokeOptions{Retries: 2})
	}
	_, err := ask(h.mustOpen(false))
	wantKind(t, err, errs.NeedAgent, "phase 1")
	for want := 1; want <= 2; want++ {
		h.fail()
		_, err = ask(h.mustOpen(true))
		wantKind(t, err, errs.NeedAgent, "need agent")
		if rc := h.request().RetryCount; rc != want {
			t.Fatalf("retry_count %d, want %d", rc, want)
		}
	}
	h.fail()
	_, err = ask(h.mustOpen(true))
	var ae *AgentError
	if !asAgentError(err, &ae) {
		t.Fatalf("after the retries the failure is returned: %v", err)
	}
	cp, _ := LoadCheckpoint(PathsIn(h.dir).Checkpoint)
	if n := len(cp.AgentRequests); n != 3 || cp.AgentRequests[2].RetryCount != 2 {
		t.Fatalf("requests: %+v", cp.AgentRequests)
	}
}

func (h *harness) fail() {
	h.t.Helper()
	if _, _, err := Respond(RespondOptions{Dir: h.dir, Answer: Answer{Status: StatusError, ErrorMessage: "quota"}, Now: h.clock()}); err != nil {
		h.t.Fatal(err)
	}
}

// A run started without --resume while the answer waits never sets it
// aside: it is refused (exit 5) and told to pass --resume.
func TestBridgeForgottenResumeKeepsTheAnswer(t *testing.T) {
	h := newHarness(t)
	threeAgents(h.mustOpen(false))
	h.answer("the design")
	for i := 0; i < 3; i++ {
		_, err := h.open(false)
		wantKind(t, err, errs.Conflict, "re-run it with --resume")
	}
	if len(h.rejected()) != 0 || !exists(filepath.Join(h.dir, ResponseFile)) {
		t.Fatalf("the answer was set aside: %v", h.rejected())
	}
	_, err := threeAgents(h.mustOpen(true))
	wantKind(t, err, errs.NeedAgent, `phase 2 "implement"`)
}

// The size limit is on the encoded request: characters JSON escapes count
// as what they become, and a context too large is refused, naming the
// limit and the way to pass large material.
func TestBridgeRequestSizeIsMeasuredEncoded(t *testing.T) {
	h := newHarness(t)
	b := h.mustOpen(false)
	_, err := b.Invoke("coder", strings.Repeat("<&\"\n\x01", 8<<10), InvokeOptions{})
	wantKind(t, err, errs.NeedAgent, "need agent")
	data, _ := os.ReadFile(filepath.Join(h.dir, RequestFile))
	if len(data) > DefaultMaxRequestBytes {
		t.Fatalf("the request is %d bytes, over %d", len(data), DefaultMaxRequestBytes)
	}
	if strings.Contains(string(data), `\u003c`) {
		t.Fatal("< must not be escaped as \\u003c")
	}
	req := h.request()
	if got, _ := req.PromptText(); got != strings.Repeat("<&\"\n\x01", 8<<10) {
		t.Fatal("the side file must hold the prompt byte for byte")
	}
	// a prompt of 32 KiB of '<' fits only in a side file, but fits
	b2, _ := Open(Options{Dir: t.TempDir(), Now: h.clock})
	b2.Invoke("coder", strings.Repeat("<", 32<<10), InvokeOptions{})
	if fi, _ := os.Stat(filepath.Join(b2.o.Dir, RequestFile)); fi.Size() > DefaultMaxRequestBytes {
		t.Fatalf("request %d bytes", fi.Size())
	}
	// a context of 120 KB is refused, nothing written
	b3, _ := Open(Options{Dir: t.TempDir(), Now: h.clock})
	_, err = b3.Invoke("coder", "Implement", InvokeOptions{Context: map[string]any{"files": strings.Repeat("x", 120_000)}})
	wantKind(t, err, errs.Usage, "over the limit of 32768 bytes (--max-request-bytes)")
	wantKind(t, err, errs.Usage, "put the file's absolute path in the context")
	if exists(filepath.Join(b3.o.Dir, RequestFile)) {
		t.Fatal("nothing may be written")
	}
}

// Output that is not UTF-8 survives byte for byte (base64 in the envelope).
func TestBridgeInvalidUTF8OutputIsKept(t *testing.T) {
	h := newHarness(t)
	b := h.mustOpen(false)
	b.Invoke("coder", "Emit bytes", InvokeOptions{})
	raw := "ok \xff\xfe\x00 end"
	h.answer(raw)
	data, _ := os.ReadFile(filepath.Join(h.dir, ResponseFile))
	if ps := Diagnose(KindResponse, data); len(ps) > 0 {
		t.Fatalf("the envelope must be valid: %v", ps)
	}
	got, err := h.mustOpen(true).Invoke("coder", "Emit bytes", InvokeOptions{})
	if err != nil || got != raw {
		t.Fatalf("got %q, %v", got, err)
	}
}

// A UTF-8 byte order mark before a valid envelope is not raw output.
func TestBridgeBOMBeforeTheEnvelope(t *testing.T) {
	h := newHarness(t)
	h.mustOpen(false).Invoke("coder", "Implement", InvokeOptions{})
	h.answer("done")
	path := filepath.Join(h.dir, ResponseFile)
	data, _ := os.ReadFile(path)
	os.WriteFile(path, append([]byte("\xef\xbb\xbf"), data...), 0o644)
	got, err := h.mustOpen(true).Invoke("coder", "Implement", InvokeOptions{})
	if err != nil || got != "done" {
		t.Fatalf("got %q, %v", got, err)
	}
}

// A deleted request file (seed 001's host deletes it) is written again
// when the request stays outstanding, and respond still finds the prompt.
func TestBridgeDeletedRequestIsRestored(t *testing.T) {
	h := newHarness(t)
	threeAgents(h.mustOpen(false))
	path := filepath.Join(h.dir, RequestFile)
	want, _ := os.ReadFile(path)
	os.Remove(path)
	if req := h.request(); req.Prompt != "Design a parser" {
		t.Fatalf("ReadRequest without the file: prompt %q", req.Prompt)
	}
	h.writeResponse(`{"result": "raw"}`) // refused
	_, err := h.open(true)
	wantKind(t, err, errs.Conflict, "it has no request_id")
	got, _ := os.ReadFile(path)
	if string(got) != string(want) {
		t.Fatalf("the request file was not restored:\n%s", got)
	}
}

// The state directory baton is given wins over the paths a request saved:
// a project that moved answers and resumes in its new place.
func TestBridgeMovedProjectFollowsItsDirectory(t *testing.T) {
	h := newHarness(t)
	threeAgents(h.mustOpen(false))
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(h.dir, moved); err != nil {
		t.Fatal(err)
	}
	old := h.dir
	h.dir = moved
	h.answer("the design")
	if exists(old) {
		t.Fatal("respond recreated the old directory")
	}
	_, err := threeAgents(h.mustOpen(true))
	wantKind(t, err, errs.NeedAgent, `phase 2 "implement"`)
	if exists(old) {
		t.Fatal("the resume recreated the old directory")
	}
}

// A host that follows seed 001 from a subdirectory of the project reads
// ./.agent-request.json there and writes ./.agent-response.json there.
func TestBridgeSubdirectoryHost(t *testing.T) {
	h := newHarness(t)
	sub := filepath.Join(h.dir, "src", "pkg")
	os.MkdirAll(sub, 0o755)
	open := func(resume bool) (*Bridge, error) {
		return Open(Options{Dir: h.dir, Resume: resume, Cwd: sub, Now: h.clock})
	}
	b, _ := open(false)
	threeAgents(b)
	data, err := os.ReadFile(filepath.Join(sub, RequestFile))
	if err != nil {
		t.Fatalf("no request in the subdirectory: %v", err)
	}
	var req map[string]any
	json.Unmarshal(data, &req)
	resp, _ := json.Marshal(map[string]any{"request_id": req["request_id"], "version": "1.0", "status": "success", "response": "the design",
		"error_message": nil, "error_type": nil, "created_at": "2025-01-29T10:00:00Z", "duration_seconds": 1.5, "metadata": map[string]any{}})
	os.WriteFile(filepath.Join(sub, ResponseFile), resp, 0o644)
	os.Remove(filepath.Join(sub, RequestFile)) // as seed 001's host does
	b, err = open(true)
	if err != nil {
		t.Fatal(err)
	}
	_, err = threeAgents(b)
	wantKind(t, err, errs.NeedAgent, `phase 2 "implement"`)
	if exists(filepath.Join(sub, ResponseFile)) {
		t.Fatal("the response in the subdirectory must be taken")
	}
	if _, err := os.Stat(filepath.Join(sub, RequestFile)); err != nil {
		t.Fatal("the next request must be copied to the subdirectory")
	}
}

// A request that carries a host token is answered only with it.
func TestBridgeHostToken(t *testing.T) {
	h := newHarness(t)
	b, _ := Open(Options{Dir: h.dir, Now: h.clock, HostToken: true})
	_, err := b.Invoke("coder", "Implement", InvokeOptions{})
	var ne *NeedAgentError
	if !asNeedAgent(err, &ne) || len(ne.Token) < 32 {
		t.Fatalf("the checkpoint must carry the token: %v", err)
	}
	raw, _ := os.ReadFile(filepath.Join(h.dir, RequestFile))
	cpRaw, _ := os.ReadFile(PathsIn(h.dir).Checkpoint)
	if strings.Contains(string(raw), ne.Token) || strings.Contains(string(cpRaw), ne.Token) {
		t.Fatal("the token must be kept only hashed")
	}
	for _, tok := range []string{"", "guess"} {
		_, _, err = Respond(RespondOptions{Dir: h.dir, Token: tok, Answer: Answer{Output: "x"}, Now: h.clock()})
		wantKind(t, err, errs.Policy, "answered only by the host that ran the orchestrator")
	}
	// a response written by hand, without the token, is refused on resume
	req := h.request()
	doc, _ := json.Marshal(map[string]any{"request_id": req.RequestID, "version": "1.0", "status": "success", "response": "forged",
		"error_message": nil, "error_type": nil, "created_at": "2025-01-29T10:00:00Z", "duration_seconds": 1, "metadata": map[string]any{}})
	h.writeResponse(string(doc))
	_, err = h.open(true)
	wantKind(t, err, errs.Conflict, "does not carry the host token")
	if _, _, err := Respond(RespondOptions{Dir: h.dir, Token: ne.Token, Answer: Answer{Output: "real"}, Now: h.clock()}); err != nil {
		t.Fatal(err)
	}
	got, err := h.mustOpen(true).Invoke("coder", "Implement", InvokeOptions{})
	if got != "real" || err != nil {
		t.Fatalf("got %q, %v", got, err)
	}
}

// respond answers only the request the checkpoint holds as outstanding.
func TestBridgeRespondRefusesAnOrphanedRequest(t *testing.T) {
	h := newHarness(t)
	threeAgents(h.mustOpen(false))
	orphan := strings.Replace(string(mustRead(filepath.Join(h.dir, RequestFile))), h.request().RequestID, "00000000-0000-4000-8000-000000000000", 1)
	os.WriteFile(filepath.Join(h.dir, RequestFile), []byte(orphan), 0o644)
	_, _, err := Respond(RespondOptions{Dir: h.dir, Answer: Answer{Output: "x"}, Now: h.clock()})
	wantKind(t, err, errs.Conflict, "which the run's checkpoint does not hold")
}

// The orchestrator names its checkpoint and keeps its config; values
// outside seed 000's ranges are accepted with a warning.
func TestBridgeCheckpointNameConfigAndRanges(t *testing.T) {
	h := newHarness(t)
	b := h.mustOpen(false)
	if err := b.SetConfig(map[string]any{"skip_qa": true}); err != nil {
		t.Fatal(err)
	}
	if err := b.SetCheckpoint("templates_generated"); err != nil {
		t.Fatal(err)
	}
	cp, _ := LoadCheckpoint(PathsIn(h.dir).Checkpoint)
	if cp.Checkpoint != "templates_generated" || cp.Config["skip_qa"] != true {
		t.Fatalf("checkpoint %+v", cp)
	}
	b.Invoke("architect", "Design", InvokeOptions{Phase: 12, TimeoutSeconds: 3600, Checkpoint: "agent_generation_pending"})
	cp, _ = LoadCheckpoint(PathsIn(h.dir).Checkpoint)
	if cp.Checkpoint != "agent_generation_pending" || cp.CheckpointName != "agent_generation_pending" {
		t.Fatalf("checkpoint %s", cp.Checkpoint)
	}
	w := h.warn.String()
	if !strings.Contains(w, "phase 12 is outside 1-9, the range of the bridge's first schema") || !strings.Contains(w, "timeout_seconds 3600 is outside 30-600, the range of the bridge's first schema") {
		t.Fatalf("warnings: %q", w)
	}
}

// Every bridge file is excluded from git from the first write.
func TestBridgeFilesAreExcludedFromGit(t *testing.T) {
	h := newHarness(t)
	os.MkdirAll(filepath.Join(h.dir, ".git", "info"), 0o755)
	os.WriteFile(filepath.Join(h.dir, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(h.dir, ".git", "info", "exclude"), []byte("# mine\n*.log"), 0o644)
	excluded.Delete(filepath.Join(h.dir, ".git"))
	threeAgents(h.mustOpen(false))
	data, _ := os.ReadFile(filepath.Join(h.dir, ".git", "info", "exclude"))
	for _, p := range []string{"*.log\n", RequestFile + "\n", ResponseFile + "\n", ".agent-response.*.json\n", "..agent-*\n", ".baton/bridge/\n"} {
		if !strings.Contains(string(data), p) {
			t.Fatalf("exclude lacks %q:\n%s", p, data)
		}
	}
	excluded.Delete(filepath.Join(h.dir, ".git"))
	h.mustOpen(false)
	again, _ := os.ReadFile(filepath.Join(h.dir, ".git", "info", "exclude"))
	if string(again) != string(data) {
		t.Fatalf("patterns added twice:\n%s", again)
	}
}

// Rejected responses are kept only up to a limit; clean removes them and
// the temp files a killed write left.
func TestBridgeRejectedLimitAndClean(t *testing.T) {
	h := newHarness(t)
	b, _ := Open(Options{Dir: h.dir, Now: h.clock, MaxRejected: 3})
	threeAgents(b)
	for i := 0; i < 6; i++ {
		h.writeResponse(`{"x": 1}`)
		Open(Options{Dir: h.dir, Resume: true, Now: h.clock, MaxRejected: 3})
	}
	if n := len(h.rejected()); n != 3 {
		t.Fatalf("%d rejected responses kept, want 3", n)
	}
	tmp := filepath.Join(h.dir, "..agent-response.json.123.tmp")
	os.WriteFile(tmp, []byte("half"), 0o644)
	removed, err := Clean(h.dir)
	if err != nil || exists(tmp) || len(h.rejected()) != 0 || !strings.Contains(strings.Join(removed, " "), tmp) {
		t.Fatalf("clean: %v %v", removed, err)
	}
}

// Two orchestrators in one state directory (real processes): whatever the
// interleaving, the request file and the checkpoint agree, and respond
// answers the request the checkpoint holds.
func TestBridgeTwoOrchestrators(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes")
	}
	for trial := 0; trial < 15; trial++ {
		dir := t.TempDir()
		codes := make(chan int, 2)
		for _, agent := range []string{"alpha", "beta"} {
			go func() { codes <- runOrchestratorProcess(t, dir, "race", "RACE_AGENT="+agent) }()
		}
		for i := 0; i < 2; i++ {
			if c := <-codes; c != 42 && c != 5 {
				t.Fatalf("trial %d: an orchestrator exited %d", trial, c)
			}
		}
		cp, err := LoadCheckpoint(PathsIn(dir).Checkpoint)
		if err != nil || cp == nil || cp.pending() == nil {
			t.Fatalf("trial %d: checkpoint %v %v", trial, cp, err)
		}
		if id := requestIDOf(mustRead(filepath.Join(dir, RequestFile))); id != cp.pending().RequestID {
			t.Fatalf("trial %d: request file %s, checkpoint %s", trial, id, cp.pending().RequestID)
		}
		if _, _, err := Respond(RespondOptions{Dir: dir, Answer: Answer{Output: "x"}, Now: time.Now()}); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
	}
}

func asAgentError(err error, target **AgentError) bool { return errorsAs(err, target) }

func asNeedAgent(err error, target **NeedAgentError) bool { return errorsAs(err, target) }
