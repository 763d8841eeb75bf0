package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// agentRun is the outcome of one run of the agent command.
type agentRun struct {
	output      []byte
	stderrTail  string
	exitCode    int
	startErr    error
	timedOut    bool
	overflowed  bool // the output passed the cap: the agent was stopped
	interrupted bool
	duration    time.Duration
}

// runAgent runs the agent command in its own process group, the prompt on
// stdin, and stops the whole group when the request's timeout passes or
// ctx is cancelled.
func (l *loop) runAgent(ctx context.Context, req *Request, prompt string) agentRun {
	start := time.Now() // before the timeout starts: a timed-out run lasted at least the timeout
	tctx, cancel := context.WithTimeout(ctx, time.Duration(req.TimeoutSeconds)*time.Second)
	defer cancel()
	out := &cappedBuffer{max: l.o.MaxOutput, onOver: cancel}
	cmd := exec.CommandContext(tctx, "sh", "-c", l.o.AgentCmd)
	cmd.Dir = l.o.Cwd
	cmd.Env = append(withoutVar(l.o.Env, "BATON_HOST_TOKEN"), agentEnv(req, l.o.Dir)...)
	cmd.Stdin = strings.NewReader(prompt)
	tail := &tailWriter{max: 2048}
	cmd.Stdout = out
	cmd.Stderr = io.MultiWriter(l.o.Stderr, tail)
	startGroup(cmd)
	cmd.Cancel = func() error { return stopGroup(cmd) }
	cmd.WaitDelay = l.o.KillGrace
	err := cmd.Run()
	run := agentRun{output: out.buf, stderrTail: tail.String(), duration: time.Since(start), overflowed: out.over}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		run.interrupted = true
		killGroup(cmd) // whatever ignored the request to stop
	case out.over:
		run.output = nil
		killGroup(cmd)
	case errors.Is(tctx.Err(), context.DeadlineExceeded):
		run.timedOut = true
		killGroup(cmd)
	case errors.As(err, &ee):
		run.exitCode = ee.ExitCode()
	case err != nil:
		run.startErr = err
	}
	return run
}

func agentEnv(req *Request, dir string) []string {
	env := []string{"BATON_SESSION=" + sessionCredential(req)}
	return append(env,
		"BATON_STATE_DIR="+dir,
		"BATON_REQUEST_ID="+req.RequestID,
		"BATON_REQUEST_FILE="+PathsIn(dir).Request,
		"BATON_RESPONSE_FILE="+req.ResponsePathIn(dir),
		"BATON_AGENT="+req.AgentName,
		"BATON_PHASE="+strconv.Itoa(req.Phase),
		"BATON_PHASE_NAME="+req.PhaseName,
		"BATON_TIMEOUT_SECONDS="+strconv.Itoa(req.TimeoutSeconds),
	)
}

// sessionCredential is the credential of the session the orchestrator
// opened for this request (context.env.BATON_SESSION): the agent gets it
// and nothing of the host's own binding.
func sessionCredential(req *Request) string {
	env, _ := req.Context.Extra["env"].(map[string]any)
	v, _ := env["BATON_SESSION"].(string)
	return v
}

// answer turns the run into the envelope's contents: the output on
// success; an error or timeout envelope, without partial output, otherwise.
func (r agentRun) answer(req *Request, maxOutput int) Answer {
	a := Answer{Duration: r.duration}
	switch {
	case r.overflowed:
		a.Status, a.ErrorType = StatusError, ErrInvocationFailed
		a.ErrorMessage = fmt.Sprintf("the agent wrote more than %d bytes of output (the loop's --max-output) and was stopped; raise --max-output, or have the agent write large results to a file and answer with its path", maxOutput)
	case r.timedOut:
		a.Status, a.ErrorType = StatusTimeout, ErrTimeout
		a.ErrorMessage = fmt.Sprintf("agent %s did not answer within %d seconds (the request's timeout_seconds) and was stopped", req.AgentName, req.TimeoutSeconds)
	case r.startErr != nil:
		a.Status, a.ErrorType = StatusError, ErrAgentNotFound
		a.ErrorMessage = fmt.Sprintf("the agent command could not be started: %v", r.startErr)
	case r.exitCode == 126 || r.exitCode == 127:
		a.Status, a.ErrorType = StatusError, ErrAgentNotFound
		a.ErrorMessage = fmt.Sprintf("the agent command was not found or not executable (exit %d)%s", r.exitCode, r.stderrSuffix())
	case r.exitCode != 0:
		a.Status, a.ErrorType = StatusError, ErrInvocationFailed
		a.ErrorMessage = fmt.Sprintf("the agent command exited %d%s", r.exitCode, r.stderrSuffix())
	default:
		a.Status, a.Output = StatusSuccess, string(r.output)
	}
	return a
}

func (r agentRun) stderrSuffix() string {
	if s := strings.TrimSpace(r.stderrTail); s != "" {
		return ": " + s
	}
	return ""
}

// cappedBuffer keeps up to max bytes; past that it keeps nothing more,
// records the overflow and calls onOver (which stops the agent), so that
// an agent's output never takes more memory than the cap.
type cappedBuffer struct {
	max    int
	buf    []byte
	over   bool
	onOver func()
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.over {
		return len(p), nil
	}
	if len(c.buf)+len(p) > c.max {
		c.over, c.buf = true, nil
		c.onOver()
		return len(p), nil
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// withoutVar is env without the variable name.
func withoutVar(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	max int
	buf []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *tailWriter) String() string { return string(t.buf) }
