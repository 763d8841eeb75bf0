package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/baton-cli/baton/internal/agentcli"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/sandbox"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workcopy"
)

// The launcher's side of baton run --sandbox: which mode a run uses, the
// working copy and policy of each session, and the notes and refusals it
// records. The front end (cmd) serves the broker and starts the helper.

// Sandbox modes, of --sandbox and the "sandbox" key of .baton/config.
const (
	SandboxOff  = "off"
	SandboxOn   = "on"
	SandboxAuto = "auto"
)

// EnvNoSandbox is the person's switch that makes a launcher act as if the
// system had no sandbox (to try the fallback); only the launcher's own
// environment is read.
const EnvNoSandbox = "BATON_SANDBOX_UNAVAILABLE"

// SandboxABI is the Landlock ABI the launcher may use: 0 when there is no
// usable mechanism, or the person's switch says to act so.
func (a *App) SandboxABI() int {
	if v := a.env.Getenv(EnvNoSandbox); v != "" && v != "0" {
		return 0
	}
	if abi := sandbox.ABI(); abi >= sandbox.MinABI {
		return abi
	}
	return 0
}

// SandboxUnavailable says why this run cannot confine its agents: no
// usable mechanism, the person's switch, or a project outside a git
// repository (each agent works in a clone of it); "" when it can.
func (a *App) SandboxUnavailable() string {
	switch {
	case a.env.Getenv(EnvNoSandbox) != "" && a.env.Getenv(EnvNoSandbox) != "0":
		return EnvNoSandbox + " is set in your environment"
	case a.SandboxABI() == 0:
		return "this system offers no Landlock (Linux 6.2 or later)"
	case a.repo() == nil:
		return "the project is not in a git repository, and each confined agent works in a clone of it"
	case !a.hasMainCommit():
		return "the project's repository has no commit on its main branch yet, and each confined agent works in a clone of it"
	}
	return ""
}

// hasMainCommit reports whether the project's main branch has a commit.
func (a *App) hasMainCommit() bool {
	s, err := a.openStore("")
	if err != nil {
		return false
	}
	cfg, err := s.LoadConfig()
	if err != nil {
		return false
	}
	_, err = gitops.MainBranch(a.repo(), cfg.MainBranch)
	return err == nil
}

// SandboxHosts are the hosts the project's config lets a confined agent
// reach besides its CLI's model API (sandbox_hosts).
func (a *App) SandboxHosts() ([]string, error) {
	s, err := a.openStore("")
	if err != nil {
		return nil, err
	}
	cfg, err := s.LoadConfig()
	return cfg.SandboxHosts, err
}

// SandboxConfigured reports whether the project's config names a sandbox
// mode (rather than leaving the default).
func (a *App) SandboxConfigured() bool {
	s, err := a.openStore("")
	if err != nil {
		return false
	}
	cfg, err := s.LoadConfig()
	return err == nil && cfg.Sandbox != ""
}

// SandboxMode is a run's sandbox mode: flag (--sandbox) when given, else
// the project's config, else auto.
func (a *App) SandboxMode(flag string) (string, error) {
	mode := flag
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
	case "":
		return SandboxAuto, nil
	case SandboxOff:
		return SandboxOff, nil
	case SandboxOn, SandboxAuto:
		return mode, nil
	}
	return "", errs.New(errs.Usage, "--sandbox: %q is not a mode: give on (fail without a sandbox), auto (fall back with a warning) or off", mode)
}

// SandboxWarning is what status says when the last run asked for a
// sandbox and ran its agents without one, or the project's config asks for
// a sandbox this system cannot give ("" when all is well).
func (a *App) SandboxWarning() string {
	s, err := a.openStore("")
	if err != nil {
		return ""
	}
	if b, err := os.ReadFile(fallbackPath(s)); err == nil {
		return "the last baton run could not sandbox its agents: " + strings.TrimSpace(string(b))
	}
	cfg, err := s.LoadConfig()
	if err != nil || (cfg.Sandbox != SandboxOn && cfg.Sandbox != SandboxAuto) || a.SandboxABI() != 0 {
		return ""
	}
	return fmt.Sprintf("the project's config asks for sandbox %q, and this system offers no OS sandbox: agents run unconfined", cfg.Sandbox)
}

// fallbackPath is where a run that fell back to no sandbox says so, for
// status, until a later run decides again.
func fallbackPath(s *store.Store) string { return filepath.Join(s.BatonDir(), "sandbox-fallback") }

// NoteSandbox keeps what this run decided for status: why its agents run
// without the sandbox it asked for (why), or nothing ("").
func (a *App) NoteSandbox(why string) error {
	s, err := a.openStore("")
	if err != nil {
		return err
	}
	if why == "" {
		if err := os.Remove(fallbackPath(s)); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	return os.WriteFile(fallbackPath(s), []byte(why+"\n"), 0o644)
}

// LogRunNote records a note of the launcher in the audit log.
func (a *App) LogRunNote(ctx context.Context, note string) error {
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

// LogBrokerRefusal records, as a refusal, what an agent's call through its
// sandbox's broker tried.
func (a *App) LogBrokerRefusal(ctx context.Context, session int, role, what string) error {
	s, err := a.openStore("")
	if err != nil {
		return err
	}
	refused := fmt.Errorf("session %d (%s), through the sandbox's broker: %s", session, role, what)
	return a.logRefusal(context.WithoutCancel(ctx), s, "baton run", nil, nil, refused)
}

// SandboxPlace is one session's sandbox: its clone (the session's branch
// checked out), its temp directory, the broker's socket directory, and
// what the agent may reach.
type SandboxPlace struct {
	Root, Tmp, SockDir string
	// Home and Cache are the agent's own home and caches, made fresh for
	// the session and removed with it: nothing it writes there reaches the
	// person's tools.
	Home, Cache   string
	Copy          *workcopy.Copy
	Top, StateDir string // the project's repository top and state directory
	Policy        sandbox.Policy
	// Name and Email are the committer identity the project uses.
	Name, Email string
}

// Remove deletes the place (the clone's branch must have been imported).
func (p *SandboxPlace) Remove() {
	_ = os.RemoveAll(p.Root)
	_ = os.RemoveAll(p.SockDir)
}

// MakeSandbox makes session's sandbox: a clone of the project's repository
// under the user's cache directory with branch checked out, and the policy
// that confines its agent (noNet cuts TCP).
func (a *App) MakeSandbox(ctx context.Context, session int, branch string, noNet bool) (*SandboxPlace, error) {
	r := a.repo()
	if r == nil {
		return nil, errs.New(errs.Usage, "--sandbox gives each agent a clone of the project's git repository, and %s is not in one", a.env.Cwd)
	}
	s, err := a.openStore("")
	if err != nil {
		return nil, err
	}
	cfg, err := s.LoadConfig()
	if err != nil {
		return nil, err
	}
	base, err := gitops.MainBranch(r, cfg.MainBranch)
	if err != nil {
		return nil, err
	}
	p := &SandboxPlace{Top: r.Top(), StateDir: filepath.Clean(s.Dir)}
	p.Root = filepath.Join(a.workRoot(p.Top), fmt.Sprintf("session-%d", session))
	_ = os.RemoveAll(p.Root) // a crashed run's leftovers
	p.Tmp = filepath.Join(p.Root, "tmp")
	if err := os.MkdirAll(p.Tmp, 0o700); err != nil {
		return nil, err
	}
	if err := a.makeAgentHome(p); err != nil {
		_ = os.RemoveAll(p.Root)
		return nil, err
	}
	src, err := sandboxSource(r, p.Top)
	if err != nil {
		_ = os.RemoveAll(p.Root)
		return nil, err
	}
	p.Name, p.Email = src.Name, src.Email
	if p.Copy, err = workcopy.Make(ctx, src, filepath.Join(p.Root, "repo"), branch, base); err != nil {
		_ = os.RemoveAll(p.Root)
		return nil, err
	}
	if p.SockDir, err = os.MkdirTemp("", "baton-broker-"); err != nil {
		_ = os.RemoveAll(p.Root)
		return nil, err
	}
	p.Policy = a.sandboxPolicy(p, noNet)
	return p, nil
}

// sandboxSource is what a working copy is made from: the repository's
// git directory, its branches' heads, and its committer identity.
func sandboxSource(r gitops.Repo, top string) (workcopy.Source, error) {
	loc, err := gitops.Locate(top)
	if err != nil {
		return workcopy.Source{}, err
	}
	heads, err := gitops.Heads(r)
	if err != nil {
		return workcopy.Source{}, err
	}
	src := workcopy.Source{Top: top, CommonDir: loc.CommonDir, Heads: heads}
	src.Name, src.Email = gitops.Identity(r)
	return src, nil
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

// realPath resolves links where the path exists (a path that does not is
// kept, cleaned).
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// cacheVars are the caches the agent's tools write, each given a directory
// of the agent's own (under Cache).
var cacheVars = []struct{ name, dir string }{
	{"XDG_CACHE_HOME", ""}, {"GOCACHE", "go-build"}, {"GOMODCACHE", "go-mod"}, {"npm_config_cache", "npm"},
	{"PIP_CACHE_DIR", "pip"}, {"CARGO_HOME", "cargo"},
}

// makeAgentHome makes the session's own home and caches, and copies in
// the person's login files that exist.
func (a *App) makeAgentHome(p *SandboxPlace) error {
	p.Home, p.Cache = filepath.Join(p.Root, "home"), filepath.Join(p.Root, "cache")
	for _, v := range cacheVars {
		if err := os.MkdirAll(filepath.Join(p.Cache, v.dir), 0o700); err != nil {
			return err
		}
	}
	for _, d := range []string{".config", ".local/share", ".local/state"} {
		if err := os.MkdirAll(filepath.Join(p.Home, d), 0o700); err != nil {
			return err
		}
	}
	return agentcli.CopyLogins(a.env.Getenv("HOME"), p.Home)
}

// AgentEnv is the environment that points the agent's tools at its own
// home and caches.
func (p *SandboxPlace) AgentEnv() []string {
	env := []string{"HOME=" + p.Home, "XDG_CONFIG_HOME=" + filepath.Join(p.Home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(p.Home, ".local/share"), "XDG_STATE_HOME=" + filepath.Join(p.Home, ".local/state")}
	for _, v := range cacheVars {
		env = append(env, v.name+"="+filepath.Join(p.Cache, v.dir))
	}
	// npm's own update check would be refused by the egress policy in
	// every session; it is not the agent's work
	return append(env, "npm_config_update_notifier=false")
}

// devices are what an agent may write under /dev (the rest it may read):
// not the person's other terminals.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/shm"}

// sandboxPolicy is what an agent may reach: its clone, its temp directory,
// its own home and caches read-write; everything else readable (the
// person's home and caches included, never writable) except the person's key and anchors, the
// project (its state, .baton and git directory: the clone borrows only its
// objects) and other working copies.
func (a *App) sandboxPolicy(p *SandboxPlace, noNet bool) sandbox.Policy {
	cache := realPath(a.cacheHome())
	deny := []string{realPath(p.Top), realPath(p.StateDir), realPath(filepath.Join(cache, "baton"))}
	if kp, err := a.keyPath(); err == nil {
		deny = append(deny, realPath(filepath.Dir(kp)))
	}
	write, watch := a.anchorPaths(p.StateDir)
	for i, ap := range append(write, watch...) { // the watched ones where they are
		d := realPath(filepath.Dir(filepath.Dir(ap)))
		if _, err := os.Stat(d); (i < len(write) || err == nil) && !slices.Contains(deny, d) {
			deny = append(deny, d)
		}
	}
	gitDir := ""
	if loc, err := gitops.Locate(p.Top); err == nil {
		gitDir = loc.CommonDir
	}
	if gitDir != "" {
		deny = append(deny, realPath(gitDir))
	}
	pol := sandbox.Policy{NoNet: noNet}
	pol.ReadOnly = sandbox.ReadRoots("/", deny)
	if gitDir != "" {
		pol.ReadOnly = append(pol.ReadOnly, realPath(filepath.Join(gitDir, "objects")))
	}
	pol.ReadWrite = append([]string{realPath(p.Copy.Dir), realPath(p.Tmp), realPath(p.Home), realPath(p.Cache)}, devices...)
	return pol
}

// fileDir is where relative file arguments lead: the front end's FileDir
// (a sandboxed agent's working directory), else the working directory.
func (a *App) fileDir() string {
	if a.env.FileDir != "" {
		return a.env.FileDir
	}
	return a.env.Cwd
}

// headRepo is a repository whose HEAD is another checkout's (a sandboxed
// agent's working copy), when the repository has that commit.
type headRepo struct {
	gitops.Repo
	head, branch string
}

func (h headRepo) Head() (string, error)          { return h.head, nil }
func (h headRepo) CurrentBranch() (string, error) { return h.branch, nil }

// withHead wraps r with the HEAD env.Head reports, when there is one.
func (a *App) withHead(r gitops.Repo) gitops.Repo {
	if a.env.Head == nil || r == nil {
		return r
	}
	h, br := a.env.Head()
	if h == "" {
		return r
	}
	if _, err := r.Resolve(h); err != nil {
		return r
	}
	return headRepo{Repo: r, head: h, branch: br}
}
