package app

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/gofrs/flock"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/store"
)

// Identity. A session's authority is a secret credential that only its
// agent received: the opener (a launcher or a person, both holding the
// person's key) makes a fresh Ed25519 key pair for the session, records its
// public key in the session's opening entry (signed with the person's
// key), stores only the credential's sha256, and hands the credential (the
// private key's seed) to the agent in BATON_SESSION. A call proves its
// session by presenting the credential and signs its entries with it;
// `baton verify` checks every signature with public keys alone.

// credPrefix marks a session credential (the rest is 64 hex digits: the
// seed of the session's Ed25519 private key).
const credPrefix = "bts1_"

// personKey is the person's Ed25519 key pair as loaded from the user's
// config directory.
type personKey struct {
	Secret ed25519.PrivateKey
	ID     string // public fingerprint, recorded in events
	Path   string
}

// wipe zeroes the key's secret once it is no longer needed.
func (k *personKey) wipe() {
	if k != nil {
		clear(k.Secret)
	}
}

// launcher is the authority of a `baton run` process: which key of the
// person's it runs with (the key itself is read when a step needs it, and
// zeroed after), and the run it belongs to. Commands the launcher runs in
// its own process inherit it; the agents it starts never see it.
type launcher struct {
	keyID, keyPath string
	runID          string
	lock           *flock.Flock // the project's launcher lock, held for the run
	// outside are the run's locks beside the log's anchors, outside the
	// project, held for the run too.
	outside []*flock.Flock
}

// keyPath is where the person's key lives: outside every project, in the
// user's config directory.
func (a *App) keyPath() (string, error) {
	if a.keyFile != "" {
		return a.keyFile, nil
	}
	dir := a.env.Getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home := a.env.Getenv("HOME")
		switch {
		case home != "" && runtime.GOOS == "darwin":
			dir = filepath.Join(home, "Library", "Application Support")
		case home != "" && runtime.GOOS != "windows":
			dir = filepath.Join(home, ".config")
		default:
			d, err := os.UserConfigDir()
			if err != nil {
				return "", errs.New(errs.Unexpected, "cannot find your config directory for the personal key: %v", err)
			}
			dir = d
		}
	}
	return filepath.Join(dir, "baton", "key"), nil
}

// loadKey reads the person's key; (nil, nil) when there is none.
func (a *App) loadKey() (*personKey, error) {
	if a.launch != nil {
		k, err := readKeyFile(a.launch.keyPath)
		if err == nil && (k == nil || k.ID != a.launch.keyID) {
			k.wipe()
			return nil, errs.New(errs.Policy, "the personal key at %s is not the one this run started with: nothing was written; a person must look", a.launch.keyPath)
		}
		return k, err
	}
	path, err := a.keyPath()
	if err != nil {
		return nil, err
	}
	return readKeyFile(path)
}

func readKeyFile(path string) (*personKey, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, errs.New(errs.Unexpected, "reading the personal key %s: %v", path, err)
	}
	priv, err := parsePrivateKey(b)
	clear(b)
	if err != nil {
		return nil, errs.New(errs.Invalid, "%s is not a personal key (%v): nothing was written; stop and report it to the person whose key it is", path, err)
	}
	return &personKey{Secret: priv, ID: keyID(priv.Public().(ed25519.PublicKey)), Path: path}, nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", errs.New(errs.Unexpected, "reading random bytes: %v", err)
	}
	return hex.EncodeToString(b), nil
}

// newCredential makes a session's credential: the seed of a fresh Ed25519
// key pair, and its public key.
func newCredential() (string, ed25519.PublicKey, error) {
	seed, err := randomHex(ed25519.SeedSize)
	if err != nil {
		return "", nil, err
	}
	cred := credPrefix + seed
	return cred, sessionKey(cred).Public().(ed25519.PublicKey), nil
}

// sessionKey is the private key of the session whose credential is cred
// (nil when cred is not well formed).
func sessionKey(cred string) ed25519.PrivateKey {
	if !wellFormed(cred) {
		return nil
	}
	seed, _ := hex.DecodeString(cred[len(credPrefix):])
	return ed25519.NewKeyFromSeed(seed)
}

// credentialHash is what sessions.json keeps of a credential: its sha256
// with the session's id and role, so that a session whose role or id was
// edited in the file binds nothing.
func credentialHash(cred string, id int, role string) string {
	sum := sha256.Sum256([]byte(cred + "|" + strconv.Itoa(id) + "|" + role))
	return hex.EncodeToString(sum[:])
}

// wellFormed says whether v looks like a credential.
func wellFormed(v string) bool {
	if !strings.HasPrefix(v, credPrefix) || len(v) != len(credPrefix)+64 {
		return false
	}
	_, err := hex.DecodeString(v[len(credPrefix):])
	return err == nil
}

// credentialRefusal is the one answer to a credential that binds nothing.
func credentialRefusal() error {
	return errs.New(errs.Policy, "your session's credential is not that of an open session (it ended, or it was never issued): "+
		"finish your work by ending your session, or ask your launcher")
}

// boundSession finds the open session whose credential is cred.
func boundSession(open *progress.OpenSessions, cred string) (progress.OpenSession, error) {
	if !wellFormed(cred) {
		return progress.OpenSession{}, credentialRefusal()
	}
	for _, s := range open.Open {
		h := credentialHash(cred, s.SessionID, s.AgentType)
		if s.CredentialHash != "" && hmac.Equal([]byte(s.CredentialHash), []byte(h)) {
			return s, nil
		}
	}
	return progress.OpenSession{}, credentialRefusal()
}

// insideSession says whether the call carries a session binding (an agent's
// call): such a call acts as its session and nothing else.
func (a *App) insideSession() bool { return a.caller.Session != "" }

// signer is the auth name and signing key of an entry written by who. An
// entry written in an agent's session is signed with that session's key,
// so an agent can sign only its own session's entries; a person's or a
// launcher's, and a call bound to nothing (baton init, a refusal), with
// the person's key where there is one, else not at all. The key is the
// caller's own copy, which the store zeroes once the entry is signed.
func (a *App) signer(who *actor) (string, ed25519.PrivateKey) {
	switch {
	case who != nil && who.Source == "session" && who.Session != nil:
		return "session:" + strconv.Itoa(*who.Session), sessionKey(a.caller.Session)
	case who != nil && who.Source == "person" && who.key != nil: // a copy: the store zeroes it
		return "person:" + who.key.ID, bytes.Clone(who.key.Secret)
	case who == nil || who.Source == "person" || who.Source == "launcher":
		key, err := a.loadKey()
		if err != nil || key == nil {
			return "", nil
		}
		return "person:" + key.ID, key.Secret
	}
	return "", nil
}

// anchorPaths are where the log's head of the state directory dir is
// anchored outside the project. write: under XDG_STATE_HOME (when set,
// absolute) and under HOME's ~/.local/state, for the directory as named
// and with its links resolved; the first is the person's anchor. watch:
// the same under the account's home directory from the user database,
// whatever HOME says, checked and kept current where they exist. A call
// made with another XDG_STATE_HOME or HOME, without them, or through a
// link to the project still meets the anchor the person's calls wrote.
func (a *App) anchorPaths(dir string) (write, watch []string) {
	dirs := []string{filepath.Clean(dir)}
	if real, err := filepath.EvalSymlinks(dir); err == nil && filepath.Clean(real) != dirs[0] {
		dirs = append(dirs, filepath.Clean(real))
	}
	var bases []string
	if x := a.env.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		bases = append(bases, x)
	}
	if h := a.env.Getenv("HOME"); h != "" && filepath.IsAbs(h) {
		bases = append(bases, filepath.Join(h, ".local", "state"))
	}
	seen := map[string]bool{}
	add := func(to *[]string, base string) {
		for _, d := range dirs {
			sum := sha256.Sum256([]byte(d))
			p := filepath.Join(base, "baton", "anchors", hex.EncodeToString(sum[:8])+".json")
			if !seen[p] {
				seen[p] = true
				*to = append(*to, p)
			}
		}
	}
	for _, b := range bases {
		add(&write, b)
	}
	if h := AccountHome(); filepath.IsAbs(h) {
		add(&watch, filepath.Join(h, ".local", "state"))
	}
	return write, watch
}

// AccountHome is the home directory of the account baton runs as, from
// the user database ("" when unknown): what HOME says when nobody changed
// it for the call. Tests replace it to stand for a person's home.
var AccountHome = func() string {
	if h, ok := passwdHome(store.ReadRegular("/etc/passwd")); ok {
		return h
	}
	u, err := user.Current() // an account the file does not list (NSS)
	if err != nil {
		return ""
	}
	return u.HomeDir
}

// passwdHome is the home directory /etc/passwd (its content b) gives the
// account baton runs as, as os/user reads it without cgo; read here with
// store.ReadRegular, which a fast read has set up already, where os/user's
// open sets up the runtime's network poller (four system calls).
func passwdHome(b []byte, err error) (string, bool) {
	if err != nil {
		return "", false
	}
	uid := strconv.Itoa(os.Getuid())
	for line := range bytes.Lines(b) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		f := strings.SplitN(string(line), ":", 7)
		if len(f) < 7 || f[2] != uid || f[0] == "" || f[0][0] == '+' || f[0][0] == '-' {
			continue
		}
		if _, err := strconv.Atoi(f[2]); err != nil {
			continue
		}
		if _, err := strconv.Atoi(f[3]); err != nil {
			continue
		}
		return f[5], true
	}
	return "", false
}

// launcherRunning says whether a launcher holds the project's launcher
// lock, or one of its locks beside the log's anchors outside the project
// (which deleting .baton/launcher.lock leaves held).
func (a *App) launcherRunning(s *store.Store) bool {
	if held(launcherLockPath(s.BatonDir()), true) {
		return true
	}
	write, watch := a.anchorPaths(s.Dir)
	for _, p := range append(write, watch...) {
		if held(runLockPath(p), false) {
			return true
		}
	}
	return false
}

// held says whether another process holds the lock at path; one that is
// not there is not held (created only when create is set).
func held(path string, create bool) bool {
	if !create {
		if _, err := os.Stat(path); err != nil {
			return false
		}
	}
	lock := flock.New(path)
	ok, err := lock.TryLock()
	if err != nil || !ok {
		return err == nil
	}
	_ = lock.Unlock()
	return false
}

func launcherLockPath(batonDir string) string { return filepath.Join(batonDir, "launcher.lock") }

// runLockPath is the run's lock beside the log's anchor at anchor.
func runLockPath(anchor string) string { return strings.TrimSuffix(anchor, ".json") + ".run.lock" }
