//go:build linux

package cli_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/baton-cli/baton/bench/gen"
	"github.com/baton-cli/baton/internal/cli"
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
	t.Cleanup(func() { tty.Close(); reader.Close() })
	return tty, reader
}

// predecessorState writes a predecessor's state of n sessions into a new
// git repository and returns its directory.
func predecessorState(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := gen.Write(dir, gen.Size{Sessions: n, Reviews: n / 5, Fixes: n / 10, Features: 20}, 1); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@example.test", "commit", "-q", "--allow-empty", "-m", "setup"}} {
		c := exec.Command("git", args...)
		c.Dir = dir
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", args[0], err, out)
		}
	}
	return dir
}

// TestAdoptionProgress: baton init adopting a predecessor's state shows
// what it is doing on one redrawn line of stderr when stderr is a
// terminal, clears it at the end, and shows nothing when it is not.
func TestAdoptionProgress(t *testing.T) {
	for _, onTTY := range []bool{true, false} {
		dir := predecessorState(t, 2500)
		var stderr io.Writer = new(bytes.Buffer)
		var got func() string
		if onTTY {
			tty, reader := openPTY(t)
			stderr = tty
			var out bytes.Buffer
			done := make(chan struct{})
			go func() { _, _ = io.Copy(&out, reader); close(done) }()
			got = func() string {
				tty.Close()
				select {
				case <-done:
				case <-time.After(5 * time.Second):
				}
				return out.String()
			}
		} else {
			got = func() string { return stderr.(*bytes.Buffer).String() }
		}
		env := cli.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: stderr, Cwd: dir, Now: time.Now,
			Getenv: func(k string) string {
				return map[string]string{"TERM": "xterm", "XDG_STATE_HOME": dir + ".state", "HOME": dir + ".home"}[k]
			}}
		if code := cli.Main([]string{"init"}, env); code != 0 {
			t.Fatalf("init: exit %d\n%s", code, got())
		}
		text := got()
		shown := strings.Contains(text, "\r\x1b[Kadopting the predecessor's state: importing its history, 2000 of 3250 records")
		if onTTY && (!shown || !strings.Contains(text, "audit log\r\x1b[K")) {
			t.Errorf("on a terminal: no progress line, or not cleared:\n%q", text)
		}
		if !onTTY && strings.Contains(text, "adopting the predecessor's state:") {
			t.Errorf("not a terminal, yet a progress line:\n%q", text)
		}
	}
}
