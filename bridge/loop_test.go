package bridge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-cli/baton/internal/errs"
)

// TestMain lets the test binary act as a Go orchestrator (a real process)
// for the loop tests: BRIDGE_TEST_ORCHESTRATOR names its behaviour.
func TestMain(m *testing.M) {
	if role := os.Getenv("BRIDGE_TEST_ORCHESTRATOR"); role != "" {
		os.Exit(testOrchestrator(role, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// testOrchestrator is an orchestrator's main: the three-agent run, falling
// back when an agent fails, the result written to result.txt.
func testOrchestrator(role string, args []string) int {
	dir := os.Getenv("BATON_STATE_DIR")
	err := func() error {
		if role == "ignores-resume" {
			args = nil
		}
		if role == "one" {
			b, err := Open(Options{Dir: dir, Resume: slices.Contains(args, "--resume"), Warn: os.Stderr})
			if err != nil {
				return err
			}
			out, err := b.Invoke("emitter", "Emit", InvokeOptions{})
			var ae *AgentError
			if errors.As(err, &ae) {
				out, err = "error: "+ae.Message, nil
			}
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, "result.txt"), []byte(out), 0o644); err != nil {
				return err
			}
			return b.Complete()
		}
		if role == "token" { // as 'baton run' does: requests carry the host token the loop gives
			b, err := Open(Options{Dir: dir, Resume: slices.Contains(args, "--resume"), Warn: os.Stderr, HostToken: true, Token: os.Getenv("BATON_HOST_TOKEN")})
			if err != nil {
				return err
			}
			out, err := threeAgents(b)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, "result.txt"), []byte(out), 0o644); err != nil {
				return err
			}
			return b.Complete()
		}
		if role == "race" {
			b, err := Open(Options{Dir: dir, Warn: os.Stderr})
			if err != nil {
				return err
			}
			_, err = b.Invoke(os.Getenv("RACE_AGENT"), "Do it", InvokeOptions{})
			return err
		}
		b, err := Open(Options{Dir: dir, Resume: slices.Contains(args, "--resume"), Warn: os.Stderr, MaxRequestBytes: 3000})
		if err != nil {
			return err
		}
		var inv Invoker = fallback{b}
		if os.Getenv("BRIDGE_TEST_TIMEOUT") != "" {
			inv = shortTimeout{inv}
		}
		ask := threeAgents
		if role == "big" {
			ask = bigPrompt
		}
		out, err := ask(inv)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "result.txt"), []byte(out), 0o644); err != nil {
			return err
		}
		return b.Complete()
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "orchestrator:", err)
	}
	return errs.Code(err)
}

// bigPrompt asks with a prompt too large to inline in the request.
func bigPrompt(inv Invoker) (string, error) {
	return inv.Invoke("summarizer", strings.Repeat("y", 5000), InvokeOptions{})
}

// fallback answers "fallback(agent)" when an agent fails, as seed 001's
// orchestrator falls back to hard-coded detection.
type fallback struct{ inv Invoker }

func (f fallback) Invoke(agent, prompt string, o InvokeOptions) (string, error) {
	out, err := f.inv.Invoke(agent, prompt, o)
	var ae *AgentError
	if errors.As(err, &ae) {
		return fmt.Sprintf("fallback(%s: %s)", agent, ae.Status), nil
	}
	return out, err
}

// shortTimeout asks every agent with a one-second timeout.
type shortTimeout struct{ inv Invoker }

func (s shortTimeout) Invoke(agent, prompt string, o InvokeOptions) (string, error) {
	o.TimeoutSeconds = 1
	return s.inv.Invoke(agent, prompt, o)
}

type loopRun struct {
	dir            string
	stdout, stderr bytes.Buffer
}

func runLoop(t *testing.T, ctx context.Context, role, agentCmd string, edit func(*LoopOptions)) (*loopRun, *LoopResult, error) {
	t.Helper()
	lr := &loopRun{dir: t.TempDir()}
	o := LoopOptions{
		Dir: lr.dir, Orchestrator: []string{os.Args[0]}, AgentCmd: agentCmd, Cwd: lr.dir,
		Env: append(os.Environ(), "BRIDGE_TEST_ORCHESTRATOR="+role), Stdout: &lr.stdout, Stderr: &lr.stderr,
		KillGrace: 500 * time.Millisecond,
	}
	if edit != nil {
		edit(&o)
	}
	res, err := Loop(ctx, o)
	return lr, res, err
}

func (lr *loopRun) result(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(lr.dir, "result.txt"))
	if err != nil {
		t.Fatalf("no result: %v\nstderr:\n%s", err, lr.stderr.String())
	}
	return string(data)
}

// An agent that answers: the prompt comes on stdin, the answer is stdout.
const echoAgent = `printf '%s<%s>' "$BATON_AGENT" "$(cat)"`

func TestBridgeLoopThreeAgents(t *testing.T) {
	lr, res, err := runLoop(t, context.Background(), "three", echoAgent, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, lr.stderr.String())
	}
	want := "architect<Design a parser> | coder<Implement: architect<Design a parser>> | reviewer<Review: coder<Implement: architect<Design a parser>>>"
	if got := lr.result(t); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if res.Iterations != 4 || len(res.Agents) != 3 || !res.Completed {
		t.Fatalf("result: %+v", res)
	}
	for i, a := range res.Agents {
		if a.Phase != i+1 || a.Status != StatusSuccess {
			t.Fatalf("agent run %d: %+v", i, a)
		}
	}
}

func TestBridgeLoopFailingAgentGetsAnErrorEnvelope(t *testing.T) {
	agent := `cat >/dev/null; if [ "$BATON_AGENT" = coder ]; then echo 'quota exceeded' >&2; exit 3; fi; echo ok`
	lr, res, err := runLoop(t, context.Background(), "three", agent, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, lr.stderr.String())
	}
	if got := lr.result(t); got != "ok\n | fallback(coder: error) | ok\n" {
		t.Fatalf("got %q", got)
	}
	a := res.Agents[1]
	if a.Status != StatusError || a.ErrorType != ErrInvocationFailed {
		t.Fatalf("coder run: %+v", a)
	}
	if !strings.Contains(lr.stderr.String(), "quota exceeded") {
		t.Fatal("the agent's stderr is not shown")
	}
}

func TestBridgeLoopAgentOverrunsItsTimeout(t *testing.T) {
	agent := `cat >/dev/null; if [ "$BATON_AGENT" = architect ]; then sleep 30; fi; echo ok`
	start := time.Now()
	lr, res, err := runLoop(t, context.Background(), "three", agent, func(o *LoopOptions) {
		o.Env = append(o.Env, "BRIDGE_TEST_TIMEOUT=1")
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, lr.stderr.String())
	}
	if time.Since(start) > 20*time.Second {
		t.Fatal("the overrunning agent was not stopped")
	}
	if got := lr.result(t); !strings.HasPrefix(got, "fallback(architect: timeout) | ") {
		t.Fatalf("got %q", got)
	}
	if a := res.Agents[0]; a.Status != StatusTimeout || a.ErrorType != ErrTimeout || a.DurationSeconds < 1 {
		t.Fatalf("architect run: %+v", a)
	}
}

func TestBridgeLoopStopsAtTheLimit(t *testing.T) {
	lr, res, err := runLoop(t, context.Background(), "three", echoAgent, func(o *LoopOptions) { o.MaxIterations = 2 })
	wantKind(t, err, errs.NeedAgent, "stopped after 2 orchestrator runs (--max-iterations 2)")
	if res.Iterations != 2 || len(res.Agents) != 1 {
		t.Fatalf("result: %+v", res)
	}
	// the request stays outstanding; --resume goes on to the end
	res2, err := Loop(context.Background(), LoopOptions{Dir: lr.dir, Orchestrator: []string{os.Args[0]}, AgentCmd: echoAgent, Cwd: lr.dir,
		Env: append(os.Environ(), "BRIDGE_TEST_ORCHESTRATOR=three"), Resume: true})
	if err != nil || !res2.Completed || len(res2.Agents) != 2 {
		t.Fatalf("resume: %v %+v", err, res2)
	}
	lr.result(t)
}

// An orchestrator that ignores --resume would ask for the same request
// again: the bridge refuses to start over while the answer waits (exit 5),
// keeps the answer, and the loop stops instead of asking forever.
func TestBridgeLoopRefusesToAskTheSameRequestTwice(t *testing.T) {
	lr, res, err := runLoop(t, context.Background(), "ignores-resume", echoAgent, nil)
	wantKind(t, err, errs.Conflict, "the orchestrator exited 5 (conflict) on run 2")
	if res.Iterations != 2 || len(res.Agents) != 1 {
		t.Fatalf("the loop must stop at the second run: %+v", res)
	}
	if !strings.Contains(lr.stderr.String(), "re-run it with --resume") || !exists(filepath.Join(lr.dir, ResponseFile)) {
		t.Fatalf("the answer must be kept and the orchestrator told to resume: %s", lr.stderr.String())
	}
}

func TestBridgeLoopOrchestratorFailure(t *testing.T) {
	script := filepath.Join(t.TempDir(), "orch.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho 'analysis failed' >&2\nexit 3\n"), 0o755)
	lr, _, err := runLoop(t, context.Background(), "", echoAgent, func(o *LoopOptions) { o.Orchestrator = []string{script} })
	wantKind(t, err, errs.Policy, "the orchestrator exited 3 (refused by policy)")
	if errs.Code(err) != 3 || !strings.Contains(lr.stderr.String(), "analysis failed") {
		t.Fatalf("exit %d, stderr %q", errs.Code(err), lr.stderr.String())
	}
}

func TestBridgeLoopWithoutAnAgentStopsAtTheFirstRequest(t *testing.T) {
	_, _, err := runLoop(t, context.Background(), "three", "", nil)
	wantKind(t, err, errs.NeedAgent, "no --agent-cmd")
}

// Ctrl-C while an agent runs: the agent is stopped, no response is
// written, exit 130; --resume answers the request again and finishes.
func TestBridgeLoopInterruptIsResumable(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	started := filepath.Join(dir, "agent-started")
	agent := `cat >/dev/null; touch ` + started + `; sleep 30; echo late`
	go func() {
		for !exists(started) {
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
	}()
	o := LoopOptions{Dir: dir, Orchestrator: []string{os.Args[0]}, AgentCmd: agent, Cwd: dir,
		Env: append(os.Environ(), "BRIDGE_TEST_ORCHESTRATOR=three"), KillGrace: 500 * time.Millisecond}
	start := time.Now()
	_, err := Loop(ctx, o)
	if errs.Code(err) != 130 || !strings.Contains(err.Error(), "the request stays outstanding") {
		t.Fatalf("want exit 130, got %d: %v", errs.Code(err), err)
	}
	if time.Since(start) > 20*time.Second || exists(filepath.Join(dir, ResponseFile)) || !exists(filepath.Join(dir, RequestFile)) {
		t.Fatal("the interrupt must stop the agent promptly and leave the request, without a response")
	}
	o.AgentCmd, o.Resume = echoAgent, true
	res, err := Loop(context.Background(), o)
	if err != nil || !res.Completed || len(res.Agents) != 3 {
		t.Fatalf("resume: %v %+v", err, res)
	}
}

// A prompt too large for the request reaches the agent whole, from its
// side file.
func TestBridgeLoopLargePrompt(t *testing.T) {
	lr, _, err := runLoop(t, context.Background(), "big", `wc -c | tr -d ' '`, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, lr.stderr.String())
	}
	if got := lr.result(t); got != "5000\n" {
		t.Fatalf("the agent got %q bytes, want 5000", got)
	}
}

// Ctrl-C while the orchestrator runs: it is asked to stop, exit 130.
func TestBridgeLoopInterruptDuringOrchestrator(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	go func() {
		for !exists(started) {
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	_, err := Loop(ctx, LoopOptions{Dir: dir, Orchestrator: []string{"sh", "-c", "touch " + started + "; sleep 30"}, Cwd: dir, KillGrace: 200 * time.Millisecond})
	if errs.Code(err) != 130 || !strings.Contains(err.Error(), "interrupted while the orchestrator ran (run 1)") {
		t.Fatalf("want exit 130, got %d: %v", errs.Code(err), err)
	}
	if time.Since(start) > 20*time.Second {
		t.Fatal("the orchestrator was not stopped")
	}
}

// runOrchestratorProcess runs the test orchestrator role as its own
// process in the state directory dir and returns its exit status.
func runOrchestratorProcess(t *testing.T, dir, role string, env ...string) int {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), "BRIDGE_TEST_ORCHESTRATOR="+role, "BATON_STATE_DIR="+dir), env...)
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Errorf("running the orchestrator: %v", err)
		return -1
	}
	return 0
}

func errorsAs[T any](err error, target *T) bool { return errors.As(err, target) }

// 200 MB of agent output: the loop keeps at most its --max-output, stops
// the agent, and answers with an error naming the cap, in bounded memory.
func TestBridgeLoopLargeOutputIsBounded(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	lr, res, err := runLoop(t, context.Background(), "one", "cat >/dev/null; head -c 200000000 /dev/zero", func(o *LoopOptions) { o.MaxOutput = 1 << 20 })
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("%v\n%s", err, lr.stderr.String())
	}
	if got := lr.result(t); !strings.Contains(got, "more than 1048576 bytes of output (the loop's --max-output)") {
		t.Fatalf("result %q", got)
	}
	if res.Agents[0].Status != StatusError {
		t.Fatalf("agents %+v", res.Agents)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Fatalf("the loop allocated %d MB for 200 MB of output capped at 1 MB", alloc>>20)
	}
}

// Output within the cap is kept byte for byte, invalid UTF-8 included.
func TestBridgeLoopOutputKeptByteForByte(t *testing.T) {
	agent := `cat >/dev/null; printf 'caf\303\251 \377\376 raw\000bytes'; head -c 3000000 /dev/zero`
	lr, _, err := runLoop(t, context.Background(), "one", agent, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, lr.stderr.String())
	}
	want := "caf\xc3\xa9 \xff\xfe raw\x00bytes" + strings.Repeat("\x00", 3000000)
	if got := lr.result(t); got != want {
		t.Fatalf("result differs: %d bytes, want %d; starts %q", len(got), len(want), got[:min(len(got), 40)])
	}
}

// A run whose requests carry a host token: the loop answers with the token
// it gave the orchestrator; interrupted, it says how to continue with that
// token, and a loop given it finishes the run. The agent never sees it.
func TestBridgeLoopHostToken(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	hang := `if [ "$BATON_AGENT" = coder ]; then touch started; sleep 30; fi; env | grep -c BATON_HOST_TOKEN; cat >/dev/null`
	go func() {
		for !exists(filepath.Join(dir, "started")) {
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
	}()
	_, _, err := runLoop(t, ctx, "token", hang, func(o *LoopOptions) { o.Dir, o.Cwd = dir, dir })
	wantKind(t, err, errs.Interrupted, "continue with: BATON_HOST_TOKEN=")
	tok := regexp.MustCompile(`BATON_HOST_TOKEN=([0-9a-f]+) `).FindStringSubmatch(err.Error())
	if tok == nil {
		t.Fatalf("no token in %q", err)
	}
	// another loop without the token cannot answer; with it, it finishes
	_, _, err = runLoop(t, context.Background(), "token", echoAgent, func(o *LoopOptions) { o.Dir, o.Cwd, o.Resume = dir, dir, true })
	wantKind(t, err, errs.Conflict, "the orchestrator exited 5")
	lr, _, err := runLoop(t, context.Background(), "token", echoAgent, func(o *LoopOptions) { o.Dir, o.Cwd, o.Resume, o.Token = dir, dir, true, tok[1] })
	if err != nil {
		t.Fatalf("%v\n%s", err, lr.stderr.String())
	}
	got, _ := os.ReadFile(filepath.Join(dir, "result.txt"))
	if !strings.HasPrefix(string(got), "0\n | coder<Implement: 0>") {
		t.Fatalf("result %q (the agent must not see the token: its first answer counts the variable)", got)
	}
}
