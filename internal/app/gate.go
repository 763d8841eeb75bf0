package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/sandbox"
	"github.com/baton-cli/baton/internal/workcopy"
	"github.com/baton-cli/baton/internal/workflow"
)

// The gate: the project's command, run on a merged tree in a clean working
// copy of its own, with no session credential and no state directory in
// its environment. What it did is kept as evidence (GateRun).

// GateRun is one run of the gate, as the audit log keeps it.
type GateRun struct {
	Command string `json:"command"`
	Tree    string `json:"tree"` // the merged tree it ran on
	Onto    string `json:"onto"` // main's head the tree merges onto
	Head    string `json:"head"` // the queued branch's head (the last one's, for a batch)
	// Batch is the reviews of the queued items merged onto main one after
	// another and gated together, in queue order (none: one item).
	Batch      []int  `json:"batch,omitempty"`
	ExitCode   int    `json:"exit_code"`
	TimedOut   bool   `json:"timed_out,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	Digest     string `json:"output_sha256"`
	Tail       string `json:"output_tail"`
}

// Passed says whether the gate passed.
func (g GateRun) Passed() bool { return g.ExitCode == 0 && !g.TimedOut }

// GateRunner starts cmd (its directory, environment and output set) and
// waits for it; a front end that confines its agents confines it with
// pol first, as an agent in the gate's working copy.
type GateRunner func(ctx context.Context, cmd *exec.Cmd, pol sandbox.Policy) error

// RunGate runs the gate unconfined.
func RunGate(_ context.Context, cmd *exec.Cmd, _ sandbox.Policy) error { return cmd.Run() }

// gateTail is how much of the gate's output the log keeps.
const (
	gateTailBytes = 4096
	gateTailLines = 40
)

// gateRun runs gate g on tree (main at onto, merged) in a fresh working
// copy, removed after.
func (a *App) gateRun(ctx context.Context, r gitops.Repo, run GateRunner, g workflow.Gate, into, onto, tree string) (GateRun, error) {
	res := GateRun{Command: g.Command, Tree: tree, Onto: onto}
	src, err := sandboxSource(r, r.Top())
	if err != nil {
		return res, err
	}
	dir, err := os.MkdirTemp("", "baton-gate-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	wc, err := workcopy.Make(ctx, src, filepath.Join(dir, "tree"), "", into)
	if err != nil {
		return res, fmt.Errorf("making the gate's working copy: %w", err)
	}
	if err := wc.Checkout(ctx, tree); err != nil {
		return res, fmt.Errorf("checking out the merged tree %s for the gate: %w", gitops.Short(tree), err)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return res, err
	}
	timeout, _ := time.ParseDuration(g.Timeout) // checked when the config was read
	gctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(gctx, "sh", "-c", g.Command)
	cmd.Dir, cmd.Env = wc.Dir, append(gateEnviron(os.Environ()), "TMPDIR="+tmp)
	out := &tailWriter{sum: sha256.New()}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	pol := a.sandboxPolicy(&SandboxPlace{Top: r.Top(), StateDir: a.stateDirOr(), Copy: wc, Tmp: tmp}, false)
	start := time.Now()
	err = run(gctx, cmd, pol)
	res.DurationMS = time.Since(start).Milliseconds()
	if ctx.Err() != nil {
		return res, ctx.Err() // interrupted: nothing to record
	}
	var ee *exec.ExitError
	switch {
	case errors.Is(gctx.Err(), context.DeadlineExceeded):
		res.TimedOut, res.ExitCode = true, -1
		fmt.Fprintf(out, "\n[baton] the gate ran past its timeout %s and was killed\n", g.Timeout)
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	case err != nil:
		res.ExitCode = 127
		fmt.Fprintf(out, "\n[baton] the gate could not run: %v\n", err)
	}
	res.Digest, res.Tail = "sha256:"+hex.EncodeToString(out.sum.Sum(nil)), out.tail()
	return res, nil
}

// gateEnviron is the gate's environment: the launcher's, without any
// session binding, role or state directory of baton's.
func gateEnviron(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "BATON_") || k == "AGENT_STATE_DIR" || k == "TMPDIR" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// tailWriter digests everything written and keeps the end of it.
type tailWriter struct {
	sum hash.Hash
	buf []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.sum.Write(p)
	w.buf = append(w.buf, p...)
	if len(w.buf) > 2*gateTailBytes {
		w.buf = append([]byte(nil), w.buf[len(w.buf)-gateTailBytes:]...)
	}
	return len(p), nil
}

// tail is the last lines written, at most gateTailLines and gateTailBytes.
func (w *tailWriter) tail() string {
	b := w.buf
	if len(b) > gateTailBytes {
		b = b[len(b)-gateTailBytes:]
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > gateTailLines {
		lines = lines[len(lines)-gateTailLines:]
	}
	return strings.ToValidUTF8(strings.Join(lines, "\n"), "?")
}

// stateDirOr is the state directory ("" when it cannot be found).
func (a *App) stateDirOr() string {
	s, err := a.openStore(progress.FileName)
	if err != nil {
		return ""
	}
	return filepath.Clean(s.Dir)
}
