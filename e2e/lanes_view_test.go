//go:build linux

package e2e

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: the side a program writes to, and the
// side that reads what it wrote.
func openPTY(t *testing.T) (tty, reader *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	reader = os.NewFile(uintptr(fd), "/dev/ptmx")
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 100}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close(); reader.Close() })
	return tty, reader
}

// runOnPTY runs baton run --agents 2 on a project of three features with
// stderr on a pseudo-terminal and TERM term, and returns what the
// terminal received.
func runOnPTY(t *testing.T, term string) string {
	dir, agent := laneProject(t, 3, `{"agents": 2, "architecture_interval": 100, "gate": {"command": "sleep 0.5", "timeout": "1m"}}`)
	tty, reader := openPTY(t)
	var out bytes.Buffer
	done := make(chan struct{})
	go func() { _, _ = io.Copy(&out, reader); close(done) }()
	// the agent says what it does, then takes its time
	c := batonCmd(dir, "run", "--agent-cmd", "echo working on it; exec sh "+agent, "--max-sessions", "20")
	gitEnv(c)
	c.Env = append(c.Env, "TERM="+term, "LANE_AGENT_SLEEP=1.6")
	c.Stdout, c.Stderr = io.Discard, tty
	err := c.Run()
	tty.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	if err != nil {
		t.Fatalf("baton run: %v\n%q", err, out.String())
	}
	mustBaton(t, dir, "verify")
	return out.String()
}

// TestLanesLiveView: on a terminal a lanes run shows, below its log lines,
// one line per lane (item, role, session, elapsed, the agent's latest
// line), the queue and the counts, redrawn in place and taken off the
// screen at the end; with TERM=dumb it prints the log lines alone.
func TestLanesLiveView(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	t.Run("terminal", func(t *testing.T) {
		text := runOnPTY(t, "xterm")
		clear := "\x1b[2K\x1b[1A\x1b[2K" // termenv's ClearLines: erase, up, erase
		if n := strings.Count(text, clear); n < 4 {
			t.Errorf("the view was redrawn %d times, want at least 4:\n%q", n, text)
		}
		for _, want := range []string{
			`── 2 of 2 lanes busy`,
			`  F00[12] IMPLEMENT session [12] — 1s — working on it`,
			`  queue: empty`,
			`  landed 0 · to do 3`,
			`  landed 1 · to do 2`,
			`  queue: F00[123].* — the gate runs on F00[123]`,
			`\[baton run\] landed F003`,
			`\[baton run\] DONE`,
		} {
			if !regexp.MustCompile(want).MatchString(text) {
				t.Errorf("no line matching %q on the terminal:\n%q", want, text)
			}
		}
		// the view is gone at the end: the last thing shown is the DONE line
		end := text[strings.LastIndex(text, "[baton run] DONE"):]
		if strings.Contains(end, "── ") {
			t.Errorf("the view is still on the screen after DONE:\n%q", end)
		}
	})
	t.Run("TERM=dumb", func(t *testing.T) {
		text := runOnPTY(t, "dumb")
		if strings.Contains(text, "\x1b[") || strings.Contains(text, "── ") {
			t.Errorf("TERM=dumb: escape sequences or a view:\n%q", text)
		}
		if !strings.Contains(text, "[baton run] IMPLEMENT F001 session 1 started") || !strings.Contains(text, "[baton run] DONE") {
			t.Errorf("TERM=dumb: the plain log lines are missing:\n%q", text)
		}
	})
}
