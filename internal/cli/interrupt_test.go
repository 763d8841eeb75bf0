package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// Every command readOnly names exists: a renamed read leaves no entry
// behind (the renamed command, missing from the list, is trapped as a
// write would be, which is safe but slower).
func TestReadOnlyCommandsExist(t *testing.T) {
	a := newApp(Env{Getenv: func(string) string { return "" }})
	root := a.newRootCmd()
	for path := range readOnly.Get() {
		c, rest, err := root.Find(strings.Fields(path)[1:])
		if err != nil || len(rest) > 0 || c.CommandPath() != path {
			t.Errorf("readOnly names %q, which is not a command", path)
		}
	}
}

// TestGroupRequest: which command group and subcommand the arguments run,
// global flags and their values passed over; a help request builds the
// whole group.
func TestGroupRequest(t *testing.T) {
	for _, c := range []struct {
		args       string
		group, sub string
	}{
		{"progress get-status --field current_branch", "progress", "get-status"},
		{"-d /tmp/x --json reviews get-last", "reviews", "get-last"},
		{"--jq .id features next --type bug", "features", "next"},
		{"--as HUMAN --reason why features pass F1", "features", "pass"},
		{"progress", "progress", ""},
		{"progress get-status --help", "progress", ""},
		{"help progress get-status", "", ""},
		{"session start --agent IMPLEMENT", "", ""},
		{"--state-dir progress status", "", ""},
		{"__complete progress get-", "", ""},
	} {
		g, s := groupRequest(strings.Fields(c.args))
		if g != c.group || s != c.sub {
			t.Errorf("%q: group %q sub %q, want %q %q", c.args, g, s, c.group, c.sub)
		}
	}
}

// TestLazyGroups: each subcommand the lazy groups name is built under
// that name, alone when the arguments run it, and every group's full
// tree has the same subcommands.
func TestLazyGroups(t *testing.T) {
	full := newApp(Env{Getenv: func(string) string { return "" }}).newRootCmd()
	for _, group := range []string{"progress", "reviews", "features"} {
		g, _, err := full.Find([]string{group})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range g.Commands() {
			a := newApp(Env{Getenv: func(string) string { return "" }})
			a.group, a.subName = group, c.Name()
			var built []string
			for _, b := range a.groups()[group]().Commands() {
				built = append(built, b.Name())
			}
			if len(built) != 1 || built[0] != c.Name() {
				t.Errorf("%s %s alone builds %v", group, c.Name(), built)
			}
		}
	}
}

// TestTrapReleased: a trap relays a SIGINT to its command, and its
// release says whether one came. A one-shot trap is tried in a child
// process: its registration outlives it there, as it may in a process
// that exits once the command returns.
func TestTrapReleased(t *testing.T) {
	oneShot := os.Getenv("BATON_TEST_TRAP_CHILD") == "released"
	if !oneShot {
		child := exec.Command(os.Args[0], "-test.run=^TestTrapReleased$", "-test.v")
		child.Env = append(os.Environ(), "BATON_TEST_TRAP_CHILD=released")
		out, err := child.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestTrapReleased") {
			t.Fatalf("the one-shot traps, in a child process: %v\n%s", err, out)
		}
	}
	guard := make(chan os.Signal, 4)
	signal.Notify(guard, os.Interrupt)
	defer signal.Stop(guard)
	for _, fire := range []bool{true, false} {
		a := newApp(Env{Getenv: func(string) string { return "" }, OneShot: oneShot})
		a.trapSignals = true
		c := &cobra.Command{Use: "add-session"}
		c.SetContext(context.Background())
		release := a.trapInterrupt(c)
		if fire {
			if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			<-guard
			<-c.Context().Done() // the trap relays it
		}
		release()
		if a.sigintSeen != fire {
			t.Errorf("one-shot %v, SIGINT %v: sigintSeen %v", oneShot, fire, a.sigintSeen)
		}
	}
}

// TestTrapReleasedOneShot: in a process that exits once the command
// returns, a SIGINT after the trap was released ends the process by the
// signal's default action, as before any trap (run in a child process).
func TestTrapReleasedOneShot(t *testing.T) {
	if os.Getenv("BATON_TEST_TRAP_CHILD") == "1" {
		a := newApp(Env{Getenv: func(string) string { return "" }, OneShot: true})
		a.trapSignals = true
		c := &cobra.Command{Use: "add-session"}
		c.SetContext(context.Background())
		a.trapInterrupt(c)()
		_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
		time.Sleep(5 * time.Second) // killed by then; never a pass
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestTrapReleasedOneShot$")
	cmd.Env = append(os.Environ(), "BATON_TEST_TRAP_CHILD=1")
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("the child was not ended by SIGINT: %v", err)
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Fatalf("the child ended with %v, not by SIGINT", err)
	}
}
