package runner

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/baton-cli/baton/internal/agentcli"
	"github.com/baton-cli/baton/internal/sandbox"
)

// The runner's side: what the launcher's ssh runs there, as the runner's
// user. Every lane lives under that user's ~/.cache/baton/runner/PROJECT/
// session-N-RANDOM: its clone, its temporary directory, its agent's home, and
// the forwarded broker socket.

// Place is a lane's directory on the runner, and what the runner offers.
type Place struct {
	Root string `json:"root"`
	Repo string `json:"repo"`
	// Sock is where ssh binds the launcher's broker socket; Relay is where
	// the runner's baton serves the agent's calls and carries them there.
	Sock     string `json:"sock"`
	Relay    string `json:"relay"`
	Tmp      string `json:"tmp"`
	Home     string `json:"home"`
	Protocol int    `json:"protocol"`
	Version  string `json:"version"`
	// Baton is the runner's baton binary, which the agent's CLI starts as
	// its MCP server.
	Baton string `json:"baton"`
	// Sandbox is the runner's sandbox ("landlock ABI N"; "" for none).
	Sandbox string `json:"sandbox"`
	// Lineage is why the runner cannot tell the agent's own calls from
	// those of the code it runs ("": it can).
	Lineage string `json:"lineage,omitempty"`
}

// placeAt is the place whose directory is root.
func placeAt(root string) Place {
	return Place{Root: root, Repo: filepath.Join(root, "repo"), Sock: filepath.Join(root, "sock"), Relay: filepath.Join(root, "relay"),
		Tmp: filepath.Join(root, "tmp"), Home: filepath.Join(root, "home")}
}

// MCPConfig is where the relay writes the Claude Code MCP configuration
// of the place's agent.
func (p Place) MCPConfig() string { return filepath.Join(p.Tmp, "baton-mcp.json") }

// Egress is where the relay serves the place's egress proxy.
func (p Place) Egress() string { return filepath.Join(p.Root, "egress") }

// Facts are what a runner's baton reports of its machine.
type Facts struct {
	Protocol int    `json:"protocol"`
	Version  string `json:"version"`
	Git      string `json:"git"`     // git --version ("" when missing)
	Sandbox  string `json:"sandbox"` // as Place.Sandbox
	Lineage  string `json:"lineage"` // as Place.Lineage
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
// lineage why it cannot supervise an agent's execs ("": it can), programs
// the agent programs to look for on PATH.
func Probe(version, lineage string, programs []string) Facts {
	f := Facts{Protocol: Protocol, Version: version, Sandbox: SandboxName(sandbox.ABI()), Lineage: lineage, Programs: map[string]string{}}
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
// its temporary directory and its agent's home, with the login files of
// the runner user's agent CLIs copied in. self is this baton's binary,
// lineage why this machine cannot supervise an agent's execs ("": it can).
func Prepare(home, version, self, lineage, project string, session int, name, email string) (Place, error) {
	dir, err := projectDir(home, project)
	if err != nil || session < 1 {
		return Place{}, fmt.Errorf("prepare: bad project key or session (%q, %d)", project, session)
	}
	// what a crashed run left of this session goes; the new place's name
	// has a random part, so that no other lane's agent can name its
	// sockets (the sandbox does not govern connecting to one)
	left, _ := filepath.Glob(filepath.Join(dir, "session-"+strconv.Itoa(session)+"-*"))
	for _, l := range left {
		if err := os.RemoveAll(l); err != nil {
			return Place{}, err
		}
	}
	var suffix [8]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return Place{}, err
	}
	root := filepath.Join(dir, "session-"+strconv.Itoa(session)+"-"+hex.EncodeToString(suffix[:]))
	for _, d := range []string{filepath.Join(root, "repo"), filepath.Join(root, "tmp"), filepath.Join(root, "home", ".config"), filepath.Join(root, "home", ".cache")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return Place{}, err
		}
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	p := placeAt(root)
	p.Protocol, p.Version, p.Baton, p.Sandbox, p.Lineage = Protocol, version, self, SandboxName(sandbox.ABI()), lineage
	if err := agentcli.CopyLogins(home, p.Home); err != nil {
		return Place{}, err
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

var rootPattern = regexp.MustCompile(`^[0-9a-f]{16}/session-[1-9][0-9]*-[0-9a-f]{16}$`)

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

// OpenPlace is the place at root, once it is proven one of home's, with
// branch checked out in its clone and the relay's socket recorded there
// for the agent's baton.
func OpenPlace(home, root, branch string) (Place, error) {
	if err := checkRoot(home, root); err != nil {
		return Place{}, err
	}
	p := placeAt(root)
	if err := gitIn(p.Repo, "checkout", "--quiet", "--force", branch); err != nil {
		return Place{}, err
	}
	if err := os.WriteFile(filepath.Join(p.Repo, ".git", "baton-broker"), []byte(p.Relay+"\n"), 0o600); err != nil {
		return Place{}, err
	}
	return p, nil
}

// WaitSocket waits a while for the forwarded broker socket, which ssh
// binds beside the session that runs the agent.
func WaitSocket(sock string) {
	for i := 0; i < 200; i++ {
		if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// AgentEnv is the runner user's environment without anything of baton's
// or its login's sockets, with the lane's broker (the relay), temporary
// directory and home.
func AgentEnv(environ []string, p Place) []string {
	out := make([]string, 0, len(environ)+8)
	for _, kv := range sandbox.WithoutLoginSockets(environ) {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "BATON_") || k == "AGENT_STATE_DIR" || k == "TMPDIR" || k == "HOME" || strings.HasPrefix(k, "XDG_") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "BATON_BROKER="+p.Relay, "TMPDIR="+p.Tmp, "HOME="+p.Home,
		"XDG_CONFIG_HOME="+filepath.Join(p.Home, ".config"), "XDG_CACHE_HOME="+filepath.Join(p.Home, ".cache"))
}
