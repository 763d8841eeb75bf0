//go:build linux && (amd64 || arm64)

package lineage

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/baton-cli/baton/internal/sandbox"
)

// scenario is an agent's run: its command (a /bin/sh script unless argv
// is given), the files it needs, and the verdict each labelled call of
// baton must get.
type scenario struct {
	name   string
	script string
	argv   []string
	files  map[string]string
	needs  []string // programs the scenario runs
	want   map[string]Kind
	// refused is how many execs the supervisor must answer itself, -1 for
	// any number
	refused int
	// hook runs between the decision on an exec and its answer
	hook func(t *testing.T, h *harness, path string, refused unix.Errno)
}

func scenarios() []scenario {
	agent, ran := Agent, Ran
	return []scenario{
		{name: "plain call", script: `baton plain`, want: map[string]Kind{"plain": agent}},
		{name: "subshell", script: `(baton sub1); (baton sub2; true)`, want: map[string]Kind{"sub1": agent, "sub2": agent}},
		{name: "pipeline", script: `baton pipe1 | cat; echo x | baton pipe2`, want: map[string]Kind{"pipe1": agent, "pipe2": agent}},
		{name: "command substitution", script: `x=$(baton cmdsub); echo "$x"`, want: map[string]Kind{"cmdsub": agent}},
		{name: "function", script: `f() { baton func; }; f`, want: map[string]Kind{"func": agent}},
		{name: "background job", script: `baton bg & wait`, want: map[string]Kind{"bg": agent}},
		{name: "the root execs baton before it settled", script: `exec baton early`, want: map[string]Kind{"early": agent}},
		{name: "make recipe", script: `make -s -f "$W/Makefile"`, needs: []string{"make"},
			files: map[string]string{"Makefile": "all:\n\tbaton make1\n\tbaton make2 && true\n"},
			want:  map[string]Kind{"make1": ran, "make2": ran}},
		{name: "sh test.sh", script: `sh "$W/test.sh"`, files: map[string]string{"test.sh": "baton shtest\n"},
			want: map[string]Kind{"shtest": ran}},
		{name: "shebang script that execs baton", script: `"$W/exec.sh"`,
			files: map[string]string{"exec.sh*": "#!/bin/sh\nexec baton shebang\n"},
			want:  map[string]Kind{"shebang": ran}},
		{name: "env", script: `env X=1 baton env`, want: map[string]Kind{"env": ran}},
		{name: "bash -c", script: `bash -c 'baton bashc1'; bash -c 'baton bashc2; true'`, needs: []string{"bash"},
			want: map[string]Kind{"bashc1": ran, "bashc2": ran}},
		{name: "git hook", needs: []string{"git"},
			script: `cd "$W/repo" && git init -q && printf '#!/bin/sh\nbaton hook\n' > .git/hooks/post-commit && chmod +x .git/hooks/post-commit &&
				git -c user.name=a -c user.email=a@b -c commit.gpgsign=false commit -q --allow-empty -m x`,
			files: map[string]string{"repo/.keep": ""}, want: map[string]Kind{"hook": ran}},
		{name: "another binary", script: `notbaton other`, want: map[string]Kind{"other": ran}},
		{name: "the root execs after a call", script: `baton before; exec /bin/sh -c 'baton after; true'`,
			want: map[string]Kind{"before": agent, "after": ran}},
		{name: "the root execs after its first call", argv: []string{"baton", "first", "--", "/bin/sh", "-c", "baton second; true"},
			want: map[string]Kind{"first": agent, "second": ran}},
		{name: "the root execs after a fork it reaped", script: `x=$(echo hi); exec /bin/sh -c 'baton reaped; true'`,
			want: map[string]Kind{"reaped": ran}},
		{name: "the root execs while a fork runs",
			script: `(i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done) & exec /bin/sh -c 'baton live; wait'`,
			want:   map[string]Kind{"live": ran}},
		{name: "exec from a thread that is not the leader", script: `threadexec baton mt`, want: map[string]Kind{"mt": ran}},
		{name: "the root execs from a thread that is not the leader", argv: []string{"threadexec", "/bin/sh", "-c", "baton mtroot"},
			want: map[string]Kind{"mtroot": agent}},
		pathSearch(), createdMeanwhile(),
	}
}

// pathSearch: a program that searches PATH itself (perl's exec, the C
// library's execvp) fails twice before it finds baton; only the exec that
// succeeds counts.
func pathSearch() scenario {
	return scenario{name: "PATH search that fails twice", needs: []string{"perl"},
		argv: []string{"perl", "-e", `$ENV{PATH} = "$ENV{W}/none1:$ENV{W}/none2:$ENV{PATH}"; ` + forkExec("search")},
		want: map[string]Kind{"search": Agent}, refused: 2}
}

// createdMeanwhile: a binary appears at the path the search tries first,
// between the supervisor's check and its answer. The answer stands: the
// search goes on to baton, and the binary created meanwhile never runs.
func createdMeanwhile() scenario {
	return scenario{name: "a binary created between the check and the exec", needs: []string{"perl"},
		argv:  []string{"perl", "-e", `$ENV{PATH} = "$ENV{W}/late:$ENV{PATH}"; ` + forkExec("late")},
		files: map[string]string{"late/.keep": ""},
		want:  map[string]Kind{"late": Agent}, refused: 1,
		hook: func(t *testing.T, h *harness, path string, refused unix.Errno) {
			if path == filepath.Join(h.dir, "late", "baton") && refused == unix.ENOENT {
				if err := copyExec(filepath.Join(h.bin, "notbaton"), path); err != nil {
					t.Error(err)
				}
			}
		}}
}

// forkExec is the end of a perl program that forks a child to exec baton
// with label, searching PATH (execvp), and exits as the child did.
func forkExec(label string) string {
	return `my $p = fork; if ($p == 0) { exec("baton", "` + label + `") or exit 127 } waitpid($p, 0); exit($? >> 8)`
}

func TestScenarios(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	modes := []bool{false}
	if sandbox.ABI() >= sandbox.MinABI {
		modes = append(modes, true)
	}
	for _, landlock := range modes {
		for _, sc := range scenarios() {
			name := sc.name
			if landlock {
				name += " (landlock)"
			}
			t.Run(name, func(t *testing.T) { runScenario(t, sc, landlock) })
		}
	}
}

func runScenario(t *testing.T, sc scenario, landlock bool) {
	for _, p := range sc.needs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("no %s here", p)
		}
	}
	h := newHarness(t)
	h.writeFiles(t, sc.files)
	if sc.hook != nil {
		afterCheck = func(path string, e unix.Errno) { sc.hook(t, h, path, e) }
		defer func() { afterCheck = nil }()
	}
	argv := sc.argv
	if argv == nil {
		argv = []string{"/bin/sh", "-c", sc.script}
	}
	a := h.start(t, argv, landlock)
	a.wait(t)
	h.outside(t)
	stats := a.tree.Stats()
	a.tree.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	want := map[string]Kind{"outside": Outside}
	for k, v := range sc.want {
		want[k] = v
	}
	for label, k := range want {
		v, ok := h.got[label]
		t.Logf("%s: %v %s", label, v.Kind, v.Reason)
		switch {
		case !ok:
			t.Errorf("%s: no call arrived\nstdout:\n%s\nstderr:\n%s", label, &a.stdout, &a.stderr)
		case v.Kind != k:
			t.Errorf("%s: %v (%s), want %v", label, v.Kind, v.Reason, k)
		case k != Agent && v.Reason == "":
			t.Errorf("%s: %v without a reason", label, v.Kind)
		}
	}
	for label := range h.got {
		if _, ok := want[label]; !ok {
			t.Errorf("%s: a call no one expected", label)
		}
	}
	if len(h.dup) > 0 {
		t.Errorf("calls made twice: %v", h.dup)
	}
	if sc.refused >= 0 && stats.Refused != sc.refused {
		t.Errorf("the supervisor refused %d execs, want %d", stats.Refused, sc.refused)
	}
	if stats.Execs == 0 {
		t.Errorf("no exec was counted")
	}
}

// A process the agent left behind, whose parent has exited, is no longer
// of the tree. It calls once the agent's shell is gone.
func TestOrphanIsOutside(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	h := newHarness(t)
	a := h.start(t, []string{"/bin/sh", "-c", `(while kill -0 $$; do sleep 0.01; done; baton orphan) >/dev/null 2>&1 &`}, false)
	a.wait(t)
	v, ok := h.verdict("orphan", 10*time.Second)
	a.tree.Close()
	if !ok || v.Kind != Outside {
		t.Errorf("orphan: %v (arrived: %v), want outside", v, ok)
	}
}

// What the filter denies, every process of the tree is denied; under
// Landlock, the memory of another process cannot be opened for writing
// either.
func TestDenied(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	want := "ptrace=EPERM process_vm_readv=EPERM process_vm_writev=EPERM pidfd_getfd=EPERM clone_parent=EPERM clone3=ENOSYS subreaper=EPERM"
	for _, landlock := range []bool{false, true} {
		if landlock && sandbox.ABI() < sandbox.MinABI {
			continue
		}
		h := newHarness(t)
		a := h.start(t, []string{"/bin/sh", "-c", `denied; (exec 3<>/proc/$$/mem) 2>/dev/null && echo mem=ok || echo mem=refused; x32; echo x32=$?`}, landlock)
		a.wait(t)
		a.tree.Close()
		lines := strings.Split(strings.TrimSpace(a.stdout.String()), "\n")
		if len(lines) != 3 || lines[0] != want {
			t.Errorf("landlock %v: %q, want %q first", landlock, lines, want)
			continue
		}
		if x32Bit != 0 && lines[2] != "x32=159" { // killed by SIGSYS
			t.Errorf("landlock %v: an x32 call: %s, want the process killed", landlock, lines[2])
		}
		if landlock && lines[1] != "mem=refused" {
			t.Errorf("landlock: the agent's memory opened for writing: %s", lines[1])
		}
		t.Logf("landlock %v: /proc/PID/mem for writing: %s", landlock, lines[1])
	}
}

// Without the launcher's go-ahead the helper starts nothing.
func TestNoGoAhead(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	h := newHarness(t)
	marker := filepath.Join(h.dir, "ran")
	self, _ := os.Executable()
	cmd := exec.Command(self, "--", "/bin/sh", "-c", "touch "+marker)
	cmd.Args[0], cmd.Env = "lineage-helper", childEnv()
	launcher, helper, err := Pair()
	if err != nil {
		t.Fatal(err)
	}
	cmd.ExtraFiles = []*os.File{helper}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	helper.Close()
	launcher.Close()
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 125 {
		t.Errorf("helper without a launcher: %v, want exit 125", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the agent ran without the launcher's go-ahead")
	}
}

// Once the supervision is closed, or its context is done, the tree can
// exec nothing.
func TestClosedTreeExecsNothing(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	for _, how := range []string{"Close", "context"} {
		h := newHarness(t)
		ctx, cancel := context.WithCancel(context.Background())
		h.ctx = ctx
		fifo := filepath.Join(h.dir, "go")
		if err := unix.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		a := h.start(t, []string{"/bin/sh", "-c", `read x < "$W/go"; /bin/true 2>/dev/null && echo ran || echo refused`}, false)
		for end := time.Now().Add(10 * time.Second); a.tree.Stats().Execs == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(end) { // the agent's shell is not running
				t.Fatalf("the agent did not start: %s", &a.stderr)
			}
		}
		if how == "Close" {
			a.tree.Close()
		} else {
			cancel()
			<-a.tree.done
		}
		release(t, fifo)
		a.wait(t)
		a.tree.Close()
		cancel()
		if got := strings.TrimSpace(a.stdout.String()); got != "refused" {
			t.Errorf("an exec after %s: %q, want refused", how, got)
		}
	}
}

// The supervision ends by itself when the tree's last process has gone.
func TestSupervisionEndsWithTheTree(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	h := newHarness(t)
	a := h.start(t, []string{"/bin/sh", "-c", `/bin/true`}, false)
	a.wait(t)
	select {
	case <-a.tree.done:
	case <-time.After(10 * time.Second):
		t.Error("the supervision goes on after the tree has gone")
	}
	a.tree.Close()
	if s := a.tree.Stats(); s.Execs != 2 {
		t.Errorf("%+v: want 2 execs (the agent's shell, then true)", s)
	}
}

// Calls from outside the tree do not settle its root: the root may still
// exec, as it may before its own first call.
func TestOutsideCallsDoNotSettle(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	h := newHarness(t)
	fifo := filepath.Join(h.dir, "go")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	a := h.start(t, []string{"/bin/sh", "-c", `read x < "$W/go"; exec /bin/sh -c 'baton afterwait; true'`}, false)
	h.outside(t)
	release(t, fifo)
	a.wait(t)
	a.tree.Close()
	if v, ok := h.verdict("afterwait", 0); !ok || v.Kind != Agent {
		t.Errorf("afterwait: %v (arrived: %v), want agent", v, ok)
	}
}

// release writes a line to the fifo once the agent reads it, and fails
// the test if no one comes to read it.
func release(t *testing.T, fifo string) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		fd, err := unix.Open(fifo, unix.O_WRONLY|unix.O_NONBLOCK, 0)
		if err == nil {
			unix.Write(fd, []byte("go\n"))
			unix.Close(fd)
			return
		}
		if err != unix.ENXIO || time.Now().After(end) {
			t.Fatalf("no agent reads %s: %v", fifo, err)
		}
	}
}
