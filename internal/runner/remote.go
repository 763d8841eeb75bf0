package runner

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/baton-cli/baton/internal/sandbox"
)

// The runner's side: what the launcher's ssh runs there, as the runner's
// user. Every lane lives under that user's ~/.cache/baton/runner/PROJECT/
// session-N: its clone, its temporary directory, its agent's home, and
// the forwarded broker socket.

// Place is a lane's directory on the runner, and what the runner offers.
type Place struct {
	Root     string `json:"root"`
	Repo     string `json:"repo"`
	Sock     string `json:"sock"`
	Tmp      string `json:"tmp"`
	Home     string `json:"home"`
	Protocol int    `json:"protocol"`
	Version  string `json:"version"`
	// Sandbox is the runner's sandbox ("landlock ABI N"; "" for none).
	Sandbox string `json:"sandbox"`
}

// Facts are what a runner's baton reports of its machine.
type Facts struct {
	Protocol int    `json:"protocol"`
	Version  string `json:"version"`
	Git      string `json:"git"`     // git --version ("" when missing)
	Sandbox  string `json:"sandbox"` // as Place.Sandbox
	// Programs are the agent programs asked about: name → path ("" when
	// missing).
	Programs map[string]string `json:"programs"`
}

var projectPattern = regexp.MustCompile(`^[0-9a-f]{16}$`)

// base is where the runner's lanes live, beneath the runner user's home.
func base(home string) string { return filepath.Join(home, ".cache", "baton", "runner") }

// projectDir is project's directory beneath home.
func projectDir(home, project string) (string, error) {
	if !projectPattern.MatchString(project) {
		return "", fmt.Errorf("%q is not a project key", project)
	}
	return filepath.Join(base(home), project), nil
}

// SandboxName is how a runner names its sandbox ("" for none).
func SandboxName(abi int) string {
	if abi < sandbox.MinABI {
		return ""
	}
	return "landlock ABI " + strconv.Itoa(abi)
}

// Probe reports what this machine offers a lane: version is this baton's,
// programs the agent programs to look for on PATH.
func Probe(version string, programs []string) Facts {
	f := Facts{Protocol: Protocol, Version: version, Sandbox: SandboxName(sandbox.ABI()), Programs: map[string]string{}}
	if out, err := exec.Command("git", "--version").Output(); err == nil {
		f.Git = strings.TrimSpace(string(out))
	}
	for _, p := range programs {
		f.Programs[p], _ = exec.LookPath(p)
	}
	return f
}

// Prepare makes session's place for project fresh (what a crashed run left
// there goes): an empty repository with the project's committer identity,
// its temporary directory and its agent's home.
func Prepare(home, version, project string, session int, name, email string) (Place, error) {
	dir, err := projectDir(home, project)
	if err != nil || session < 1 {
		return Place{}, fmt.Errorf("prepare: bad project key or session (%q, %d)", project, session)
	}
	root := filepath.Join(dir, "session-"+strconv.Itoa(session))
	p := Place{Root: root, Repo: filepath.Join(root, "repo"), Sock: filepath.Join(root, "sock"), Tmp: filepath.Join(root, "tmp"),
		Home: filepath.Join(root, "home"), Protocol: Protocol, Version: version, Sandbox: SandboxName(sandbox.ABI())}
	if err := os.RemoveAll(root); err != nil {
		return Place{}, err
	}
	for _, d := range []string{p.Repo, p.Tmp, filepath.Join(p.Home, ".config"), filepath.Join(p.Home, ".cache")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return Place{}, err
		}
	}
	if real, err := filepath.EvalSymlinks(root); err == nil && real != root {
		p.Root, p.Repo, p.Sock, p.Tmp, p.Home = real, filepath.Join(real, "repo"), filepath.Join(real, "sock"), filepath.Join(real, "tmp"), filepath.Join(real, "home")
	}
	steps := [][]string{{"init", "--quiet"}, {"symbolic-ref", "HEAD", "refs/heads/baton-runner-unborn"}}
	if name != "" {
		steps = append(steps, []string{"config", "user.name", name})
	}
	if email != "" {
		steps = append(steps, []string{"config", "user.email", email})
	}
	for _, s := range steps {
		if err := gitIn(p.Repo, s...); err != nil {
			return Place{}, err
		}
	}
	return p, nil
}

// Remove deletes a lane's place, root, once it is proven one.
func Remove(home, root string) error {
	if err := checkRoot(home, root); err != nil {
		return err
	}
	return os.RemoveAll(root)
}

// Clean removes every place of project.
func Clean(home, project string) error {
	dir, err := projectDir(home, project)
	if err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

var rootPattern = regexp.MustCompile(`^[0-9a-f]{16}/session-[1-9][0-9]*$`)

// checkRoot refuses a root that is not a lane's place beneath home.
func checkRoot(home, root string) error {
	b := base(home)
	if real, err := filepath.EvalSymlinks(b); err == nil {
		b = real
	}
	rel, err := filepath.Rel(b, filepath.Clean(root))
	if err != nil || !rootPattern.MatchString(filepath.ToSlash(rel)) {
		return fmt.Errorf("%q is not a lane's place on this runner", root)
	}
	if fi, err := os.Lstat(root); err != nil || !fi.IsDir() {
		return fmt.Errorf("%q is not a lane's place on this runner", root)
	}
	return nil
}

func gitIn(dir string, args ...string) error {
	cmd := exec.Command("git", append([]string{"-c", "core.hooksPath=/dev/null", "-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// devices are what an agent may write under /dev.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/shm"}

// Policy is what a lane's agent may reach on the runner: its clone, its
// temporary directory and its home read-write; everything else readable
// except the runner's other lanes; self is the baton binary, which
// it may run wherever it lies.
func Policy(home string, p Place, self string) sandbox.Policy {
	pol := sandbox.Policy{ReadOnly: sandbox.ReadRoots("/", []string{base(home)})}
	if self != "" {
		pol.ReadOnly = append(pol.ReadOnly, self)
	}
	pol.ReadWrite = append([]string{p.Repo, p.Tmp, p.Home}, devices...)
	return pol
}

// Exec becomes the lane's agent: in root's clone with branch checked out,
// with the broker at root's socket, and confined unless mode is "auto"
// and this machine has no sandbox (warn is told so). It returns only on
// failure.
func Exec(home, root, mode, branch, self string, argv, environ []string, warn func(string)) error {
	if err := checkRoot(home, root); err != nil {
		return err
	}
	p := Place{Root: root, Repo: filepath.Join(root, "repo"), Sock: filepath.Join(root, "sock"), Tmp: filepath.Join(root, "tmp"), Home: filepath.Join(root, "home")}
	if err := gitIn(p.Repo, "checkout", "--quiet", "--force", branch); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(p.Repo, ".git", "baton-broker"), []byte(p.Sock+"\n"), 0o600); err != nil {
		return err
	}
	if err := os.Chdir(p.Repo); err != nil {
		return err
	}
	waitSocket(p.Sock)
	env := agentEnv(environ, p)
	if err := dieWithSession(); err != nil {
		return err
	}
	abi := sandbox.ABI()
	if abi >= sandbox.MinABI {
		return sandbox.Exec(Policy(home, p, self), argv, env)
	}
	if mode != SandboxAuto {
		return fmt.Errorf("this runner offers no sandbox (Landlock, Linux 6.2 or later) and its lanes must be confined")
	}
	warn("this runner offers no sandbox (Landlock, Linux 6.2 or later): the agent runs NOT confined, as the runner's \"sandbox\": \"auto\" allows")
	prog, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	return syscall.Exec(prog, argv, env)
}

// waitSocket waits a while for the forwarded broker socket, which ssh
// binds beside the session that runs the agent.
func waitSocket(sock string) {
	for i := 0; i < 200; i++ {
		if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// agentEnv is the runner user's environment without anything of baton's,
// with the lane's broker, temporary directory and home.
func agentEnv(environ []string, p Place) []string {
	out := make([]string, 0, len(environ)+8)
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "BATON_") || k == "AGENT_STATE_DIR" || k == "TMPDIR" || k == "HOME" || strings.HasPrefix(k, "XDG_") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "BATON_BROKER="+p.Sock, "TMPDIR="+p.Tmp, "HOME="+p.Home,
		"XDG_CONFIG_HOME="+filepath.Join(p.Home, ".config"), "XDG_CACHE_HOME="+filepath.Join(p.Home, ".cache"))
}
