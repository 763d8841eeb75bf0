package cmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/baton-cli/baton/errs"
	"github.com/baton-cli/baton/gitops"
	"github.com/baton-cli/baton/jsondoc"
	"github.com/baton-cli/baton/sandbox"
	"github.com/baton-cli/baton/store"
	"github.com/baton-cli/baton/workcopy"
)

// baton run --sandbox: every agent runs in a private clone of the project,
// confined by Landlock (see the sandbox package and docs/security.md), and
// reaches the state only through the launcher's broker (sandboxbroker.go).

// Sandbox modes, of --sandbox and the "sandbox" key of .baton/config.
const (
	sandboxOff  = "off"
	sandboxOn   = "on"
	sandboxAuto = "auto"
)

// sandboxExecCmd is the hidden first argument of the helper that confines
// itself and becomes the agent: baton __sandbox-exec POLICY -- ARGV...
const sandboxExecCmd = "__sandbox-exec"

// envNoSandbox is the person's switch that makes this launcher act as if
// the system had no sandbox (to try the fallback); only the launcher's own
// environment is read.
const envNoSandbox = "BATON_SANDBOX_UNAVAILABLE"

// sandboxExit is the exit status of a helper that could not confine itself:
// nothing of the agent ran.
const sandboxExit = 125

// sandboxConf is how a run confines its agents.
type sandboxConf struct {
	noNet bool
}

// sandboxABI is the Landlock ABI the launcher may use: 0 when there is no
// usable mechanism, or the person's switch says to act so.
func (a *App) sandboxABI() int {
	if v := a.env.Getenv(envNoSandbox); v != "" && v != "0" {
		return 0
	}
	if abi := sandbox.ABI(); abi >= sandbox.MinABI {
		return abi
	}
	return 0
}

// sandboxMode is the run's sandbox mode: --sandbox, else the project's
// config, else off.
func (a *App) sandboxMode(o runOpts) (string, error) {
	mode := o.Sandbox
	if mode == "" {
		s, err := a.openStore("")
		if err != nil {
			return "", err
		}
		cfg, err := s.LoadConfig()
		if err != nil {
			return "", err
		}
		mode = cfg.Sandbox
	}
	switch mode {
	case "", sandboxOff:
		return sandboxOff, nil
	case sandboxOn, sandboxAuto:
		return mode, nil
	}
	return "", errs.New(errs.Usage, "--sandbox: %q is not a mode: give on (fail without a sandbox), auto (fall back with a warning) or off", mode)
}

// prepareSandbox decides whether the run confines its agents: with mode on
// and no mechanism it refuses before anything is opened (exit 4); with
// auto it warns, on stderr and in the log, and runs them unconfined.
func (a *App) prepareSandbox(ctx context.Context, o runOpts, agents bool) error {
	mode, err := a.sandboxMode(o)
	if err != nil || mode == sandboxOff {
		return err
	}
	if o.SandboxNet != "on" && o.SandboxNet != "off" {
		return errs.New(errs.Usage, "--sandbox-net: %q is neither on nor off", o.SandboxNet)
	}
	if !agents {
		if o.Sandbox != "" {
			return errs.New(errs.Usage, "--sandbox confines the agents baton runs: give --agent or --agent-cmd (through the bridge, the host runs them)")
		}
		a.notice("[baton run] the agents run through the bridge: the project's sandbox setting applies to the agents baton runs itself")
		return nil
	}
	if a.sandboxABI() == 0 {
		why := "this system offers no Landlock (Linux 6.2 or later)"
		if a.env.Getenv(envNoSandbox) != "" {
			why = envNoSandbox + " is set in your environment"
		}
		if mode == sandboxOn {
			return errs.New(errs.NotFound, "--sandbox: no OS sandbox is available (%s); nothing was opened. Run with --sandbox=auto to go on unconfined, or without --sandbox", why)
		}
		msg := fmt.Sprintf("the agents of this run are NOT sandboxed: %s; baton's own checks still apply", why)
		a.warn("%s", msg)
		return a.logRunNote(ctx, "sandbox unavailable: "+msg)
	}
	a.launch.box = &sandboxConf{noNet: o.SandboxNet == "off"}
	return nil
}

// logRunNote records a note of the launcher in the audit log.
func (a *App) logRunNote(ctx context.Context, note string) error {
	s, err := a.openStore("")
	if err != nil {
		return err
	}
	return s.Update(ctx, func(tx *store.Tx) error {
		auth, key := a.signer(nil)
		tx.LogSigned(store.Event{Type: "task", Timestamp: jsondoc.Timestamp(a.env.Now()),
			Payload: eventPayload{Command: "baton run", Summary: note}.raw()}, auth, key)
		return nil
	})
}

// sandboxStatus is what status says of the project's sandbox setting when
// it asks for one this system cannot give ("" when all is well).
func (a *App) sandboxStatus(cfg store.Config) string {
	if (cfg.Sandbox == sandboxOn || cfg.Sandbox == sandboxAuto) && a.sandboxABI() == 0 {
		return fmt.Sprintf("the project's config asks for sandbox %q, and this system offers no OS sandbox: agents run unconfined", cfg.Sandbox)
	}
	return ""
}

// sandboxPlace is where one session's sandbox lives: its clone, its temp
// directory, and the broker's socket directory.
type sandboxPlace struct {
	root, tmp, sockDir string
	copy               *workcopy.Copy
}

// cacheHome is the user's cache directory ($XDG_CACHE_HOME, else ~/.cache).
func (a *App) cacheHome() string {
	if d := a.env.Getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return d
	}
	if h := a.env.Getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache")
	}
	return filepath.Join(os.TempDir(), "baton-cache")
}

// workRoot is where the working copies of the project at top live.
func (a *App) workRoot(top string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(top)))
	return filepath.Join(a.cacheHome(), "baton", "work", hex.EncodeToString(sum[:8]))
}

// makePlace makes session st's clone (its branch checked out) and temp
// directory, and the broker's socket directory.
func (a *App) makePlace(ctx context.Context, top string, st step) (*sandboxPlace, error) {
	r := a.repo()
	if r == nil {
		return nil, errs.New(errs.Usage, "--sandbox gives each agent a clone of the project's git repository, and %s is not in one", a.env.Cwd)
	}
	cfg := store.DefaultConfig()
	if s, err := a.openStore(""); err == nil {
		if c, err := s.LoadConfig(); err == nil {
			cfg = c
		}
	}
	base, err := gitops.MainBranch(r, cfg.MainBranch)
	if err != nil {
		return nil, err
	}
	p := &sandboxPlace{root: filepath.Join(a.workRoot(top), fmt.Sprintf("session-%d", st.Session))}
	_ = os.RemoveAll(p.root) // a crashed run's leftovers
	p.tmp = filepath.Join(p.root, "tmp")
	if err := os.MkdirAll(p.tmp, 0o700); err != nil {
		return nil, err
	}
	if p.copy, err = workcopy.Make(ctx, top, filepath.Join(p.root, "repo"), st.Branch, base); err != nil {
		_ = os.RemoveAll(p.root)
		return nil, err
	}
	if p.sockDir, err = os.MkdirTemp("", "baton-broker-"); err != nil {
		_ = os.RemoveAll(p.root)
		return nil, err
	}
	return p, nil
}

func (p *sandboxPlace) remove() {
	_ = os.RemoveAll(p.root)
	_ = os.RemoveAll(p.sockDir)
}

// realPath resolves links where the path exists (a path that does not is
// kept, cleaned).
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// sandboxPolicy is what an agent may reach: its clone, its temp directory,
// its agent CLI's own directories and the user's caches read-write;
// everything else readable except the person's key and anchors, the
// project (its state, .baton and git directory: the clone borrows only its
// objects) and other working copies.
func (a *App) sandboxPolicy(top string, p *sandboxPlace, conf *sandboxConf) sandbox.Policy {
	home := a.env.Getenv("HOME")
	cache := realPath(a.cacheHome())
	deny := []string{realPath(top), realPath(filepath.Join(cache, "baton"))}
	if kp, err := a.keyPath(); err == nil {
		deny = append(deny, realPath(filepath.Dir(kp)))
	}
	if ap := a.anchorPath(top); ap != "" {
		deny = append(deny, realPath(filepath.Dir(filepath.Dir(ap))))
	}
	if s, err := a.openStore(""); err == nil {
		deny = append(deny, realPath(s.Dir))
	}
	gitDir, _ := gitOut(top, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if gitDir != "" {
		deny = append(deny, realPath(gitDir))
	}
	pol := sandbox.Policy{NoNet: conf.noNet}
	pol.ReadOnly = sandbox.ReadRoots("/", deny)
	if gitDir != "" {
		pol.ReadOnly = append(pol.ReadOnly, realPath(filepath.Join(gitDir, "objects")))
	}
	pol.ReadWrite = []string{realPath(p.copy.Dir), realPath(p.tmp), "/dev"}
	pol.ReadWrite = append(pol.ReadWrite, sandbox.ReadRoots(cache, deny)...)
	if home != "" {
		for _, d := range agentDirs {
			pol.ReadWrite = append(pol.ReadWrite, filepath.Join(home, d))
		}
		if matches, err := filepath.Glob(filepath.Join(home, ".claude*")); err == nil {
			pol.ReadWrite = append(pol.ReadWrite, matches...)
		}
	}
	return pol
}

// agentDirs are the directories under $HOME the agent CLIs write to (their
// configuration, sessions, package caches); those that exist are writable.
var agentDirs = []string{".codex", ".npm", ".config/claude", ".local/share/claude", ".local/state/claude", "go"}

// confine turns cmd into its sandboxed form: the helper that confines
// itself with the policy and then becomes the agent's command, in the
// clone, without the session's credential, with the broker's socket.
func (a *App) confine(cmd *exec.Cmd, top string, p *sandboxPlace, pol sandbox.Policy, sock string) error {
	self, err := selfPath()
	if err != nil {
		return err
	}
	pj, err := json.Marshal(pol)
	if err != nil {
		return err
	}
	cmd.Path = self
	cmd.Args = append([]string{self, sandboxExecCmd, string(pj), "--"}, cmd.Args...)
	cmd.Dir = p.copy.Top(a.env.Cwd)
	if _, err := os.Stat(cmd.Dir); err != nil {
		cmd.Dir = p.copy.Dir
	}
	env := make([]string, 0, len(cmd.Env)+2)
	for _, kv := range cmd.Env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "BATON_SESSION", "BATON_STATE_DIR", "AGENT_STATE_DIR", "BATON_BROKER", "TMPDIR":
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = append(env, "BATON_BROKER="+sock, "TMPDIR="+p.tmp)
	// the agent's baton finds the broker even without the variable
	return os.WriteFile(filepath.Join(p.copy.Dir, ".git", "baton-broker"), []byte(sock+"\n"), 0o644)
}

// sandboxExec is the helper: it confines this process with the policy and
// replaces it with the agent's command. It returns only on failure.
func sandboxExec(args []string, env Env) int {
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(env.Stderr, "baton: "+sandboxExecCmd+" is baton run's own helper: POLICY -- COMMAND...")
		return 2
	}
	var pol sandbox.Policy
	if err := json.Unmarshal([]byte(args[0]), &pol); err != nil {
		fmt.Fprintf(env.Stderr, "baton: the sandbox policy is not valid: %v\n", err)
		return sandboxExit
	}
	err := sandbox.Exec(pol, args[2:], os.Environ())
	fmt.Fprintf(env.Stderr, "baton: the agent could not be sandboxed, and was not started: %v\n", err)
	return sandboxExit
}

// fileDir is where relative file arguments lead.
func (a *App) fileDir() string {
	if a.env.FileDir != "" {
		return a.env.FileDir
	}
	return a.env.Cwd
}
