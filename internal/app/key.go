package app

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/store"
)

// The person's key file holds an Ed25519 private key in OpenSSH's format
// (what ssh-keygen writes, so git and ssh-keygen can sign with it too); a
// file of 64 hex digits is read as the key's seed. A retired key is kept
// as its public key only, in authorized_keys format.

// parsePrivateKey reads an Ed25519 private key: OpenSSH's PEM, or a seed
// as 64 hex digits.
func parsePrivateKey(b []byte) (ed25519.PrivateKey, error) {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("-----BEGIN")) {
		k, err := ssh.ParseRawPrivateKey(b)
		if err != nil {
			return nil, err
		}
		if p, ok := k.(*ed25519.PrivateKey); ok {
			return *p, nil
		}
		return nil, fmt.Errorf("a %T, where an Ed25519 key is expected", k)
	}
	seed, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, errors.New("neither an OpenSSH Ed25519 private key nor 64 hex digits")
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// keyID is a public key's fingerprint: the first 8 bytes of the sha256 of
// its SSH wire form, in hex.
func keyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(sshPublicKey(pub).Marshal())
	return hex.EncodeToString(sum[:8])
}

func sshPublicKey(pub ed25519.PublicKey) ssh.PublicKey {
	k, _ := ssh.NewPublicKey(pub) // an Ed25519 key always converts
	return k
}

// authorizedKey is pub in authorized_keys format, without a newline.
func authorizedKey(pub ed25519.PublicKey, comment string) string {
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPublicKey(pub))))
	if comment != "" {
		line += " " + comment
	}
	return line
}

// parsePublicKey reads an Ed25519 public key in authorized_keys format.
func parsePublicKey(line []byte) (ed25519.PublicKey, error) {
	k, _, _, _, err := ssh.ParseAuthorizedKey(line)
	if err != nil {
		return nil, err
	}
	ck, ok := k.(ssh.CryptoPublicKey)
	if !ok {
		return nil, fmt.Errorf("a %s key, where ssh-ed25519 is expected", k.Type())
	}
	pub, ok := ck.CryptoPublicKey().(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("a %s key, where ssh-ed25519 is expected", k.Type())
	}
	return pub, nil
}

func (k *personKey) public() ed25519.PublicKey { return k.Secret.Public().(ed25519.PublicKey) }

func retiredPath(path, id string) string {
	return filepath.Join(filepath.Dir(path), "key."+id+".retired")
}

// writeNewKey writes a fresh key pair to path (0600, in a 0700 directory),
// keeping old's public key beside it first.
func writeNewKey(path string, old *personKey) (*personKey, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, errs.New(errs.Unexpected, "creating %s: %v", filepath.Dir(path), err)
	}
	if old != nil {
		line := authorizedKey(old.public(), "baton:"+old.ID) + "\n"
		if err := store.WriteFileAtomic(retiredPath(path, old.ID), []byte(line), 0o644); err != nil {
			return nil, errs.New(errs.Unexpected, "keeping the old key's public key: %v", err)
		}
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, errs.New(errs.Unexpected, "making a key pair: %v", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "baton:"+keyID(priv.Public().(ed25519.PublicKey)))
	if err != nil {
		return nil, errs.New(errs.Unexpected, "encoding the key: %v", err)
	}
	if err := store.WriteFileAtomic(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, errs.New(errs.Unexpected, "writing %s: %v", path, err)
	}
	return readKeyFile(path)
}

// localKeys are the public keys of the person's key and its retired keys,
// by id (empty when there is no key).
func (a *App) localKeys() map[string]ed25519.PublicKey {
	out := map[string]ed25519.PublicKey{}
	cur, _ := a.loadKey()
	if cur == nil {
		return out
	}
	out[cur.ID] = cur.public()
	retired, _ := filepath.Glob(retiredPath(cur.Path, "*"))
	for _, p := range retired {
		b, err := store.ReadRegular(p)
		if err != nil {
			continue
		}
		pub, err := parsePublicKey(b)
		if err != nil { // kept by an older baton: the key itself
			priv, perr := parsePrivateKey(b)
			if perr != nil {
				continue
			}
			pub = priv.Public().(ed25519.PublicKey)
		}
		out[keyID(pub)] = pub
	}
	return out
}

// SignersName is the allowed-signers file `baton key publish` writes in
// the project, in git's allowed_signers format.
const SignersName = ".baton-signers"

// signersNamespace is the namespace an allowed signer of baton's log must
// hold; "git" lets git check the merges baton signs with the same file.
const signersNamespace = "baton"

// ParseSigners reads an allowed-signers file (git's allowed_signers
// format: principals, options, key) and returns its Ed25519 keys by id:
// those whose namespaces option, if any, includes "baton". name is used in
// errors, which give the line.
func ParseSigners(name string, data []byte) (map[string]ed25519.PublicKey, error) {
	out := map[string]ed25519.PublicKey{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		_, rest, ok := strings.Cut(strings.ReplaceAll(line, "\t", " "), " ")
		if !ok {
			return nil, errs.New(errs.Invalid, "%s: line %d: a principal and a key expected (git's allowed_signers format: PRINCIPAL [OPTIONS] ssh-ed25519 KEY)", name, n)
		}
		pub, opts, err := parseSignerKey([]byte(strings.TrimSpace(rest)))
		if err != nil {
			return nil, errs.New(errs.Invalid, "%s: line %d: %v (git's allowed_signers format: PRINCIPAL [OPTIONS] ssh-ed25519 KEY)", name, n, err)
		}
		if forBaton(opts) {
			out[keyID(pub)] = pub
		}
	}
	if err := sc.Err(); err != nil {
		return nil, errs.New(errs.Invalid, "%s: %v", name, err)
	}
	return out, nil
}

func parseSignerKey(b []byte) (ed25519.PublicKey, []string, error) {
	_, _, opts, _, err := ssh.ParseAuthorizedKey(b)
	if err != nil {
		return nil, nil, err
	}
	pub, err := parsePublicKey(b)
	return pub, opts, err
}

// forBaton says whether a signer's options allow baton's namespace.
func forBaton(opts []string) bool {
	for _, o := range opts {
		v, ok := strings.CutPrefix(strings.ToLower(o), "namespaces=")
		if ok {
			return slices.Contains(strings.Split(strings.Trim(v, `"`), ","), signersNamespace)
		}
	}
	return true
}

// signersLine is pub's line in the allowed-signers file.
func signersLine(pub ed25519.PublicKey) string {
	return fmt.Sprintf("baton:%s namespaces=%q %s", keyID(pub), signersNamespace+",git", authorizedKey(pub, ""))
}

// KeyResult is where a person's key is, its id and its public key (never
// the private key); for a rotation, the previous key's id and where its
// public key is kept.
type KeyResult struct {
	KeyID        string `json:"key_id"`
	Path         string `json:"path"`
	PublicKey    string `json:"public_key"`
	PreviousID   string `json:"-"`
	PreviousPath string `json:"-"`
}

func keyResult(k *personKey) KeyResult {
	return KeyResult{Path: k.Path, KeyID: k.ID, PublicKey: authorizedKey(k.public(), "baton:"+k.ID)}
}

// KeyInit creates the person's key pair (or, with rotate, replaces it,
// keeping the old public key for verify). A call bound to a session is
// refused.
func (a *App) KeyInit(ctx context.Context, c Caller, rotate bool) (KeyResult, error) {
	a = a.as(c)
	if a.insideSession() {
		return KeyResult{}, errs.New(errs.Policy, "%s", noAgentKey)
	}
	path, err := a.keyPath()
	if err != nil {
		return KeyResult{}, err
	}
	old, err := readKeyFile(path)
	if err != nil {
		return KeyResult{}, err
	}
	if old != nil && !rotate {
		return KeyResult{}, errs.New(errs.Conflict, "%s already holds your key (id %s); nothing was written. To replace it, run 'baton key init --rotate'", path, old.ID)
	}
	k, err := writeNewKey(path, old)
	if err != nil {
		return KeyResult{}, err
	}
	res := keyResult(k)
	if old != nil {
		res.PreviousID, res.PreviousPath = old.ID, retiredPath(path, old.ID)
	}
	return res, nil
}

// noAgentKey refuses the key commands to a call bound to an agent session.
const noAgentKey = "this call is bound to an agent session, and an agent has no personal key: do your role's work in your session, then end it"

// KeyShow is where the person's key is, its id and its public key.
func (a *App) KeyShow(ctx context.Context, c Caller) (KeyResult, error) {
	a = a.as(c)
	if a.insideSession() { // where the person's key lies is no agent's business
		return KeyResult{}, errs.New(errs.Policy, "%s", noAgentKey)
	}
	k, err := a.personKeyOrRefuse()
	if err != nil {
		return KeyResult{}, err
	}
	return keyResult(k), nil
}

func (a *App) personKeyOrRefuse() (*personKey, error) {
	path, err := a.keyPath()
	if err != nil {
		return nil, err
	}
	k, err := readKeyFile(path)
	if err != nil {
		return nil, err
	}
	if k == nil {
		return nil, errs.New(errs.NotFound, "no personal key at %s (a person sets it up: see docs/identity.md)", path)
	}
	return k, nil
}
