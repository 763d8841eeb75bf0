package e2e

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/baton-cli/baton/bench/gen"
)

// A runner on this machine: a real sshd on a loopback port with a
// throwaway host key, logging in as a second OS user made for the test,
// whose PATH holds this baton. The launcher reaches it with ssh -F and a
// known_hosts file holding the host key: host-key checking stays on.

// sshRunner is a runner the test started.
type sshRunner struct {
	user, home string
	uid        int
	config     string // the launcher's ssh configuration file (Host box1)
	sshd       *exec.Cmd
	dir        string // the launcher's side: keys, known_hosts, sshd_config
}

// startRunner starts sshd and the runner's user, or skips the test saying
// why the machine cannot.
func startRunner(t *testing.T, environment string) *sshRunner {
	t.Helper()
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		t.Skip("SKIP: /usr/sbin/sshd is not installed (apt-get install openssh-server): the runner tests need a real sshd")
	}
	if os.Geteuid() != 0 {
		t.Skip("SKIP: the runner tests create a second OS user (useradd) and run sshd: run them as root")
	}
	if _, err := exec.LookPath("useradd"); err != nil {
		t.Skip("SKIP: no useradd on this machine: the runner tests cannot create the runner's user")
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	r := &sshRunner{user: "batonr" + hex.EncodeToString(b[:]), dir: t.TempDir()}
	if out, err := exec.Command("useradd", "-m", "-s", "/bin/sh", r.user).CombinedOutput(); err != nil {
		t.Skipf("SKIP: useradd %s failed, so no runner user can be made here: %v\n%s", r.user, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("userdel", "-r", "-f", r.user).Run() })
	// a new account is locked ("!"), and sshd without PAM refuses a locked
	// account even a key: "*" unlocks it with no password that works
	if out, err := exec.Command("usermod", "-p", "*", r.user).CombinedOutput(); err != nil {
		t.Fatalf("usermod: %v\n%s", err, out)
	}
	u, err := user.Lookup(r.user)
	if err != nil {
		t.Fatal(err)
	}
	r.home = u.HomeDir
	r.uid, _ = strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	r.installBaton(t, r.uid, gid, environment)
	port := r.startSSHD(t)
	r.writeClientConfig(t, port)
	return r
}

// keygen makes an ed25519 key pair at path and returns its public key.
func keygen(t *testing.T, path string) string {
	t.Helper()
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "baton-e2e", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(pub))
}

// installBaton gives the runner's user this baton on its PATH, the
// launcher's client key in authorized_keys, and environment as more of
// its environment.
func (r *sshRunner) installBaton(t *testing.T, uid, gid int, environment string) {
	t.Helper()
	pub := keygen(t, filepath.Join(r.dir, "client"))
	bin, ssh := filepath.Join(r.home, "bin"), filepath.Join(r.home, ".ssh")
	for _, d := range []string{bin, ssh} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.ReadFile(batonBin)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		filepath.Join(bin, "baton"):           string(self),
		filepath.Join(ssh, "authorized_keys"): pub + "\n",
		filepath.Join(ssh, "environment"):     "PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin\n" + environment,
	}
	for p, text := range files {
		if err := os.WriteFile(p, []byte(text), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{bin, ssh, filepath.Join(bin, "baton"), filepath.Join(ssh, "authorized_keys"), filepath.Join(ssh, "environment")} {
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
}

// freePort is a loopback TCP port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startSSHD starts sshd on a loopback port with a host key of its own and
// returns the port.
func (r *sshRunner) startSSHD(t *testing.T) int {
	t.Helper()
	keygen(t, filepath.Join(r.dir, "host"))
	_ = os.MkdirAll("/run/sshd", 0o755) // sshd's privilege separation directory
	port := freePort(t)
	conf := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
PidFile %s
AuthorizedKeysFile .ssh/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitUserEnvironment yes
AllowStreamLocalForwarding yes
StreamLocalBindUnlink yes
AllowUsers %s
`, port, filepath.Join(r.dir, "host"), filepath.Join(r.dir, "sshd.pid"), r.user)
	confPath := filepath.Join(r.dir, "sshd_config")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	r.sshd = exec.Command("/usr/sbin/sshd", "-D", "-e", "-f", confPath)
	r.sshd.Stderr, _ = os.Create(filepath.Join(r.dir, "sshd.log"))
	r.sshd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.sshd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.stop() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return port
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(r.dir, "sshd.log"))
			t.Fatalf("sshd did not listen on port %d:\n%s", port, log)
		}
	}
}

// writeClientConfig writes the launcher's ssh configuration: Host box1 is
// the runner, its host key known, checking on.
func (r *sshRunner) writeClientConfig(t *testing.T, port int) {
	t.Helper()
	hostPub, err := os.ReadFile(filepath.Join(r.dir, "host.pub"))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(hostPub))
	known := fmt.Sprintf("[127.0.0.1]:%d %s %s\n", port, f[0], f[1])
	if err := os.WriteFile(filepath.Join(r.dir, "known_hosts"), []byte(known), 0o600); err != nil {
		t.Fatal(err)
	}
	r.config = filepath.Join(r.dir, "ssh_config")
	conf := fmt.Sprintf(`Host box1
  HostName 127.0.0.1
  Port %d
  User %s
  IdentityFile %s
  IdentitiesOnly yes
  UserKnownHostsFile %s
  StrictHostKeyChecking yes
`, port, r.user, filepath.Join(r.dir, "client"), filepath.Join(r.dir, "known_hosts"))
	if err := os.WriteFile(r.config, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
}

// unknownHostConfig is an ssh configuration for the runner that knows
// no host key: ssh must refuse it.
func (r *sshRunner) unknownHostConfig(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(r.config)
	if err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(r.dir, "known_hosts.empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(r.dir, "ssh_config.stranger")
	text := strings.ReplaceAll(string(b), filepath.Join(r.dir, "known_hosts"), empty)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// stop kills sshd and its sessions' processes, as a machine going away
// would; what the sessions ran is left to die with them, which the kernel
// does for the agent (dieWithSession).
func (r *sshRunner) stop() {
	if r.sshd == nil || r.sshd.Process == nil {
		return
	}
	for _, pid := range descendants(r.sshd.Process.Pid) {
		if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); strings.HasPrefix(string(comm), "sshd") {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	_ = r.sshd.Process.Kill()
	_ = r.sshd.Wait()
	r.sshd = nil
}

// uidOf is the real user id of process pid (-1 when it is gone).
func uidOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "Uid:" {
			uid, _ := strconv.Atoi(f[1])
			return uid
		}
	}
	return -1
}

// agentsOf are the processes of uid whose command line names agent.sh.
func agentsOf(uid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || uidOf(pid) != uid {
			continue
		}
		if cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); strings.Contains(string(cmd), "agent.sh") {
			out = append(out, pid)
		}
	}
	return out
}

// descendants are the processes beneath pid, read from /proc.
func descendants(pid int) []int {
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		if j := strings.LastIndexByte(s, ')'); j >= 0 {
			if f := strings.Fields(s[j+1:]); len(f) > 1 {
				parent[p], _ = strconv.Atoi(f[1])
			}
		}
	}
	var out []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// runnerProject is a lane project with runner box1 of slots lanes, the
// entry local (when given) placed as written, and the scripted agent
// somewhere both users can read it.
func runnerProject(t *testing.T, r *sshRunner, n int, runners, agentScript string) (dir, agentCmd string) {
	t.Helper()
	config := fmt.Sprintf(`{"agents": 3, "architecture_interval": 100, "lock_timeout_seconds": 60, "runners": %s}`,
		strings.ReplaceAll(runners, "CONFIG", r.config))
	dir, _ = laneProject(t, n, config)
	for _, kv := range [][]string{{"user.name", "e2e"}, {"user.email", "e2e@example.test"}} {
		if out, err := exec.Command("git", "-C", dir, "config", kv[0], kv[1]).CombinedOutput(); err != nil {
			t.Fatalf("git config: %v\n%s", err, out)
		}
	}
	shared, err := os.MkdirTemp("", "baton-runner-agent-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	if err := os.Chmod(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(shared, "agent.sh")
	if err := os.WriteFile(agent, []byte(agentScript), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, "sh " + agent
}

// runLines runs baton run in dir, calling each of its stderr lines with
// line as they come, and returns all it wrote and its error.
func runLines(t *testing.T, dir string, line func(string), args ...string) (string, error) {
	t.Helper()
	c := batonCmd(dir, args...)
	gitEnv(c)
	pr, pw := io.Pipe()
	c.Stderr, c.Stdout = pw, pw
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if line != nil {
				line(sc.Text())
			}
		}
	}()
	err := c.Wait()
	pw.Close()
	<-done
	return all.String(), err
}

// TestRunnerLanes runs three lanes, two of them on a runner over ssh and
// one here, to DONE with verify clean; 'baton runner check' passes first.
func TestRunnerLanes(t *testing.T) {
	r := startRunner(t, "")
	stranger := r.unknownHostConfig(t)
	dir, agent := runnerProject(t, r, 3, `[{"name": "box1", "ssh": "box1", "slots": 2, "ssh_config": "CONFIG"}, {"name": "stranger", "ssh": "box1", "slots": 1, "ssh_config": "`+stranger+`"}]`, gen.LaneAgent)
	unknown := baton(t, dir, "runner", "check", "stranger")
	if unknown.code != 9 || !strings.Contains(unknown.stderr, "Host key verification failed") {
		t.Fatalf("baton runner check of a host whose key is not known: %v", unknown)
	}
	check := baton(t, dir, "runner", "check", "box1", "--agent-cmd", "sh x")
	if check.code != 0 || !strings.Contains(check.stdout, "OK:") || !strings.Contains(check.stdout, "Sandbox:   landlock ABI") {
		t.Fatalf("baton runner check box1: %v", check)
	}
	missing := baton(t, dir, "runner", "check", "box1", "--agent", "no-such-agent-cli")
	if missing.code != 4 || !strings.Contains(missing.stderr, "the agent program no-such-agent-cli on its PATH") {
		t.Fatalf("baton runner check box1 with an agent CLI it lacks: %v", missing)
	}
	out, err := runLines(t, dir, nil, "run", "--agent-cmd", agent, "--max-sessions", "30")
	if err != nil {
		t.Fatalf("baton run with a runner: %v\n%s", err, out)
	}
	t.Logf("baton run:\n%s", out)
	if n := strings.Count(out, "started on box1"); n < 2 {
		t.Errorf("%d sessions ran on box1, want at least 2 (two of the three lanes):\n%s", n, out)
	}
	if !strings.Contains(out, "started on local") {
		t.Errorf("no session ran on this machine:\n%s", out)
	}
	checkLanded(t, "after the run", dir)
	if on := landedOnMain(t, dir); len(on) != 3 {
		t.Errorf("%d features landed, want 3:\n%s", len(on), out)
	}
	mustBaton(t, dir, "verify")
	logs, _ := filepath.Glob(filepath.Join(dir, ".baton", "logs", "session-*.log"))
	if len(logs) < 6 {
		t.Errorf("%d session logs, want one for each of the 6 sessions (remote ones too)", len(logs))
	}
	if left, _ := filepath.Glob(filepath.Join(r.home, ".cache", "baton", "runner", "*", "session-*")); len(left) != 0 {
		t.Errorf("the runner keeps lane places after the run: %v", left)
	}
}

// TestRunnerOneAgent runs one agent at a time (--agents 1) on the
// project's runner: a run of one lane, placed as lanes are.
func TestRunnerOneAgent(t *testing.T) {
	r := startRunner(t, "")
	dir, agent := runnerProject(t, r, 1, `[{"name": "box1", "ssh": "box1", "slots": 1, "ssh_config": "CONFIG"}, {"name": "local", "slots": 0}]`, gen.LaneAgent)
	out, err := runLines(t, dir, nil, "run", "--agents", "1", "--agent-cmd", agent, "--max-sessions", "10")
	if err != nil {
		t.Fatalf("baton run --agents 1 with a runner: %v\n%s", err, out)
	}
	if n := strings.Count(out, "started on box1"); n < 2 || strings.Contains(out, "started on local") {
		t.Errorf("%d sessions ran on box1, want every one:\n%s", n, out)
	}
	if on := landedOnMain(t, dir); len(on) != 1 {
		t.Errorf("%d features landed, want 1:\n%s", len(on), out)
	}
	mustBaton(t, dir, "verify")
}

// TestRunnerWithoutTheAgent runs lanes whose agent program the runner
// lacks: the run's first use of the runner names what it lacks, leaves it
// out, and the lanes run here to DONE.
func TestRunnerWithoutTheAgent(t *testing.T) {
	r := startRunner(t, "")
	dir, agent := runnerProject(t, r, 1, `[{"name": "box1", "ssh": "box1", "slots": 1, "ssh_config": "CONFIG"}, {"name": "local", "slots": 1}]`, gen.LaneAgent)
	tools := t.TempDir()
	only := filepath.Join(tools, "lane-agent-only-here")
	if err := os.WriteFile(only, []byte("#!/bin/sh\nexec "+agent+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := batonCmd(dir, "run", "--agent-cmd", "lane-agent-only-here", "--max-sessions", "10")
	gitEnv(c)
	c.Env = append(c.Env, "PATH="+tools+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("baton run with a runner that lacks the agent: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "could not be started on runner box1: it lacks the agent program lane-agent-only-here on its PATH") ||
		!strings.Contains(string(out), "runner box1 is out of this run") || !strings.Contains(string(out), "started on local") {
		t.Errorf("the run did not leave the runner out, naming what it lacks:\n%s", out)
	}
	if on := landedOnMain(t, dir); len(on) != 1 {
		t.Errorf("%d features landed, want 1:\n%s", len(on), out)
	}
	mustBaton(t, dir, "verify")
}

// loseRunner runs one feature's lanes with runners, stopping box1's sshd
// while its lane's agent runs; it checks that status showed the lane on
// box1 and that the session ended as ERROR runner_lost.
func loseRunner(t *testing.T, runners string) (r *sshRunner, dir, out string, err error) {
	t.Helper()
	r = startRunner(t, "LANE_AGENT_SLEEP=30\n")
	dir, agent := runnerProject(t, r, 1, runners, gen.LaneAgent)
	started := make(chan struct{})
	var once bool
	var status []byte
	out, err = runLines(t, dir, func(l string) {
		if !once && strings.Contains(l, "started on box1") {
			once = true
			close(started)
			time.Sleep(time.Second)
			status, _ = batonCmd(dir, "status").Output()
			r.stop()
		}
	}, "run", "--agent-cmd", agent, "--max-sessions", "10")
	select {
	case <-started:
	default:
		t.Fatalf("no session started on box1:\n%s", out)
	}
	if !strings.Contains(string(status), "IMPLEMENT session 1") || !strings.Contains(string(status), "on runner box1") {
		t.Errorf("baton status while the lane ran on box1 does not show it:\n%s", status)
	}
	p := string(readState(t, dir, progressName))
	if !strings.Contains(p, `"runner_lost"`) || !strings.Contains(p, `"ERROR"`) {
		t.Errorf("no session ended as ERROR runner_lost:\n%s", p)
	}
	return r, dir, out, err
}

// TestRunnerLost stops the runner's sshd while its lane's agent runs:
// the session ends as ERROR (runner_lost), the lane is retried here, and
// the run reaches DONE with verify clean.
func TestRunnerLost(t *testing.T) {
	r, dir, out, err := loseRunner(t, `[{"name": "box1", "ssh": "box1", "slots": 1, "ssh_config": "CONFIG"}, {"name": "local", "slots": 1}]`)
	if err != nil {
		t.Fatalf("baton run after the runner was lost: %v\n%s", err, out)
	}
	if !strings.Contains(out, "lost") || !strings.Contains(out, "started on local") {
		t.Errorf("the lost runner's lane was not retried here:\n%s", out)
	}
	checkLanded(t, "after the run", dir)
	if on := landedOnMain(t, dir); len(on) != 1 {
		t.Errorf("%d features landed, want 1", len(on))
	}
	mustBaton(t, dir, "verify")
	if left := agentsOf(r.uid); len(left) > 0 {
		t.Errorf("the lost runner's agent still runs there: processes %v", left)
	}
}

// TestRunnerLostNowhereElse loses the only runner of a project with no
// local slots: the run stops saying which runner is out (exit 9), with
// nothing landed and verify clean.
func TestRunnerLostNowhereElse(t *testing.T) {
	_, dir, out, err := loseRunner(t, `[{"name": "box1", "ssh": "box1", "slots": 1, "ssh_config": "CONFIG"}, {"name": "local", "slots": 0}]`)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 9 || !strings.Contains(out, "every runner with slots is out of this run (box1)") {
		t.Fatalf("a run whose only runner was lost did not stop naming it (exit 9): %v\n%s", err, out)
	}
	if on := landedOnMain(t, dir); len(on) != 0 {
		t.Errorf("%d features landed, want none", len(on))
	}
	mustBaton(t, dir, "verify")
}

// cheatingAgent tries, from the runner, to read the person's key, to
// write the state files, to merge into main through the broker, to find
// its session's credential, to call the launcher's broker on the
// forwarded socket past the runner's relay, to reach a host outside the
// egress policy (through the proxy and around it), and to end its session
// from code it ran (a shell between it and baton), and leaves a program
// running in a session of its own; it prints what each attempt gave.
const cheatingAgent = `#!/bin/sh
cat >/dev/null
setsid sh -c 'sleep 300' </dev/null >/dev/null 2>&1 &
if cat "$CHEAT_KEY" 2>/dev/null; then echo CHEAT-KEY-READ; else echo CHEAT-KEY-REFUSED; fi
if echo '{}' >> "$CHEAT_STATE/progress.json" 2>/dev/null; then echo CHEAT-STATE-WRITTEN; else echo CHEAT-STATE-REFUSED; fi
baton branch create feature/f001 >/dev/null && git switch -q feature/f001 && echo x > cheat.txt && git add cheat.txt && git commit -q -m cheat
if baton reviews add-review -a REVIEW -b feature/f001 --feature-id F001 -v PASS -s ok 2>&1; then echo CHEAT-REVIEWED; else echo CHEAT-REVIEW-REFUSED; fi
if baton reviews merge 2>&1; then echo CHEAT-MERGED; else echo CHEAT-MERGE-REFUSED; fi
if baton --as HUMAN --reason cheat reviews merge 2>&1; then echo CHEAT-HUMAN; else echo CHEAT-HUMAN-REFUSED; fi
if echo x >> "$CHEAT_RUNNER_HOME/.ssh/authorized_keys" 2>/dev/null; then echo CHEAT-RUNNER-WRITTEN; else echo CHEAT-RUNNER-REFUSED; fi
if ls "$CHEAT_RUNNER_HOME/.cache/baton/runner/"*/ >/dev/null 2>&1; then echo CHEAT-LANES-LISTED; else echo CHEAT-LANES-REFUSED; fi
if env | grep -q '^BATON_SESSION='; then echo CHEAT-CREDENTIAL; else echo CHEAT-NO-CREDENTIAL; fi
if BATON_BROKER="$(dirname "$HOME")/sock" baton progress get-status --field current_phase 2>&1; then echo CHEAT-FORWARD-ANSWERED; else echo CHEAT-FORWARD-REFUSED; fi
if curl -sS --max-time 10 https://example.com/ >/dev/null 2>&1; then echo CHEAT-EGRESS-OPEN; else echo CHEAT-EGRESS-REFUSED; fi
if curl -sS --max-time 10 --noproxy '*' http://1.1.1.1/ >/dev/null 2>&1; then echo CHEAT-DIRECT-OPEN; else echo CHEAT-DIRECT-REFUSED; fi
if sh -c 'exec baton session end -o READY_FOR_REVIEW -s planted' 2>&1; then echo CHEAT-PLANTED-RECORDED; else echo CHEAT-PLANTED-REFUSED; fi
baton progress get-status --field current_phase
exit 1
`

// TestRunnerCheatingAgent runs an agent on the runner that tries what it
// may not: every attempt is refused, main does not move, and the run
// stops for a person naming what was tried.
func TestRunnerCheatingAgent(t *testing.T) {
	r := startRunner(t, "")
	dir, agent := runnerProject(t, r, 1, `[{"name": "box1", "ssh": "box1", "slots": 1, "ssh_config": "CONFIG"}, {"name": "local", "slots": 0}]`, cheatingAgent)
	key := filepath.Join(configDir, "baton", "key")
	// the script is the agent's own program (sh execs it), so its own calls
	// are the agent's
	agent = "export CHEAT_KEY=" + key + " CHEAT_STATE=" + dir + " CHEAT_RUNNER_HOME=" + r.home + "; exec " + agent
	mainBefore := gitOut(t, dir, "rev-parse", "main")
	out, err := runLines(t, dir, nil, "run", "--agent-cmd", agent, "--max-sessions", "1")
	logs, _ := filepath.Glob(filepath.Join(dir, ".baton", "logs", "session-*.log"))
	if len(logs) == 0 {
		t.Fatalf("no session log came back from the runner:\n%s", out)
	}
	log, _ := os.ReadFile(logs[0])
	t.Logf("baton run:\n%s\nthe session's log:\n%s", out, log)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || !strings.Contains(out, "STOPPED") {
		t.Fatalf("a run whose agent cheated did not stop for a person (exit 3): %v", err)
	}
	for _, want := range []string{"CHEAT-KEY-REFUSED", "CHEAT-STATE-REFUSED", "CHEAT-REVIEW-REFUSED", "CHEAT-MERGE-REFUSED", "CHEAT-HUMAN-REFUSED", "CHEAT-RUNNER-REFUSED", "CHEAT-LANES-REFUSED", "CHEAT-NO-CREDENTIAL",
		"CHEAT-FORWARD-REFUSED", "without going through baton's relay", "CHEAT-EGRESS-REFUSED", "CHEAT-DIRECT-REFUSED",
		"CHEAT-PLANTED-REFUSED", "this call comes from a program the agent ran", "IMPLEMENT"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the session log lacks %s:\n%s", want, log)
		}
	}
	keyText, _ := os.ReadFile(key)
	if strings.Contains(string(log), strings.TrimSpace(string(keyText))) {
		t.Errorf("the person's key reached the runner's agent")
	}
	if got := gitOut(t, dir, "rev-parse", "main"); got != mainBefore {
		t.Errorf("main moved from %s to %s", mainBefore, got)
	}
	if !strings.Contains(out, "a connection to example.com:443 (CONNECT) was refused") {
		t.Errorf("the run did not report the connection the runner's egress proxy refused:\n%s", out)
	}
	audit := baton(t, dir, "log")
	for _, want := range []string{"example.com:443", "code the agent ran", "on runner box1"} {
		if !strings.Contains(audit.stdout, want) {
			t.Errorf("the audit log lacks %q:\n%s", want, audit.stdout)
		}
	}
	mustBaton(t, dir, "verify")
	var left []string
	for range 50 { // the runner's sshd sessions end as the run does
		if left = processesOf(r.uid); len(left) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("what the agent left running on the runner (a program in a session of its own) still runs: %v", left)
	}
}

// processesOf are the command lines of uid's processes.
func processesOf(uid int) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && uidOf(pid) == uid {
			cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return out
}

// gitOut is git's trimmed output in dir.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}
