package app

import (
	"context"
	"os"
	"path/filepath"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/store"
)

func retiredPath(path, id string) string {
	return filepath.Join(filepath.Dir(path), "key."+id+".retired")
}

// writeNewKey writes a fresh key to path (0600, in a 0700 directory),
// retiring old first.
func writeNewKey(path string, old *personKey) (*personKey, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, errs.New(errs.Unexpected, "creating %s: %v", filepath.Dir(path), err)
	}
	if old != nil {
		if err := os.Rename(path, retiredPath(path, old.ID)); err != nil {
			return nil, errs.New(errs.Unexpected, "keeping the old key: %v", err)
		}
	}
	secret, err := randomHex(32)
	if err != nil {
		return nil, err
	}
	if err := store.WriteFileAtomic(path, []byte(secret+"\n"), 0o600); err != nil {
		return nil, errs.New(errs.Unexpected, "writing %s: %v", path, err)
	}
	return readKeyFile(path)
}

// keyFor returns the key with id among the current and retired keys.
func (a *App) keyFor(id string) *personKey {
	cur, _ := a.loadKey()
	if cur == nil || cur.ID == id {
		return cur
	}
	k, _ := readKeyFile(retiredPath(cur.Path, id))
	if k == nil {
		return nil
	}
	return k
}

// KeyResult is where a person's key is and its id (never the key); for a
// rotation, the previous key's id and where it is kept.
type KeyResult struct {
	KeyID        string `json:"key_id"`
	Path         string `json:"path"`
	PreviousID   string `json:"-"`
	PreviousPath string `json:"-"`
}

// KeyInit creates the person's key (or, with rotate, replaces it, keeping
// the old one for verify). A call bound to a session is refused.
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
	if err != nil && !rotate {
		return KeyResult{}, err
	}
	if old != nil && !rotate {
		return KeyResult{}, errs.New(errs.Conflict, "%s already holds your key (id %s); nothing was written. To replace it, run 'baton key init --rotate'", path, old.ID)
	}
	k, err := writeNewKey(path, old)
	if err != nil {
		return KeyResult{}, err
	}
	res := KeyResult{Path: k.Path, KeyID: k.ID}
	if old != nil {
		res.PreviousID, res.PreviousPath = old.ID, retiredPath(path, old.ID)
	}
	return res, nil
}

// KeyShow is where the person's key is and its id.
// noAgentKey refuses the key commands to a call bound to an agent session.
const noAgentKey = "this call is bound to an agent session, and an agent has no personal key: do your role's work in your session, then end it"

func (a *App) KeyShow(ctx context.Context, c Caller) (KeyResult, error) {
	a = a.as(c)
	if a.insideSession() { // where the person's key lies is no agent's business
		return KeyResult{}, errs.New(errs.Policy, "%s", noAgentKey)
	}
	path, err := a.keyPath()
	if err != nil {
		return KeyResult{}, err
	}
	k, err := readKeyFile(path)
	if err != nil {
		return KeyResult{}, err
	}
	if k == nil {
		return KeyResult{}, errs.New(errs.NotFound, "no personal key at %s (a person sets it up: see the README's section on keys)", path)
	}
	return KeyResult{Path: k.Path, KeyID: k.ID}, nil
}
