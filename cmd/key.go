package cmd

import (
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/errs"
	"github.com/baton-cli/baton/store"
)

const keyHelp = `The personal key is a person's own secret, kept outside every project in the user's config
directory ($XDG_CONFIG_HOME/baton/key, else ~/.config/baton/key on Linux), mode 0600. It is
what makes a call a person's or a launcher's:

  - 'baton run' (a launcher) holds it in memory and opens each agent's session with it; the
    agent receives only its session's credential;
  - a person opens sessions by hand with it ('baton session start'), and overrides a rule with
    'baton --as HUMAN --reason "..." COMMAND' — recorded with the key's id and the agent
    sessions open at that moment;
  - every audit event is MACed with a key derived from it, so 'baton verify' (with the key)
    detects an edited, re-chained, forged or truncated log.

Never copy the key into a project, an agent's environment or a CI log. An agent that can read
this file can act as you: keep agents out of your config directory (an OS sandbox does this).

Rotation: 'baton key init --rotate' writes a new key and keeps the old one beside it as
key.<id>.retired, so that 'baton verify' still checks events MACed with it. Sessions open at
the rotation keep working (their credentials were issued already).

Loss: create a new key with 'baton key init'. Events MACed with the lost key can no longer be
authenticated: 'baton verify' says so for each key it does not hold, and still checks the
structure of the log and everything written after.`

func (a *App) newKeyCmd() *cobra.Command {
	c := group("key", "Person only: create, rotate and show your personal key", a.newKeyInitCmd(), a.newKeyShowCmd())
	c.Long = keyHelp
	return c
}

func (a *App) newKeyInitCmd() *cobra.Command {
	var rotate bool
	c := &cobra.Command{
		Use:   "init",
		Short: "Person only: create your personal key (or replace it with --rotate)",
		Long:  keyHelp,
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if a.insideSession() {
				return errs.New(errs.Policy, "this call is bound to an agent session, and an agent has no personal key: do your role's work in your session, then end it")
			}
			path, err := a.keyPath()
			if err != nil {
				return err
			}
			old, err := readKeyFile(path)
			if err != nil && !rotate {
				return err
			}
			if old != nil && !rotate {
				return errs.New(errs.Conflict, "%s already holds your key (id %s); nothing was written. To replace it, run 'baton key init --rotate'", path, old.ID)
			}
			k, err := writeNewKey(path, old)
			if err != nil {
				return err
			}
			return a.emit(map[string]string{"path": k.Path, "key_id": k.ID}, func(w io.Writer) {
				printf(w, "SUCCESS: personal key %s written to %s (mode 0600)", k.ID, k.Path)
				if old != nil {
					printf(w, "the previous key %s is kept as %s for 'baton verify'", old.ID, retiredPath(path, old.ID))
				}
			})
		},
	}
	c.Flags().BoolVar(&rotate, "rotate", false, "replace an existing key, keeping the old one for verify")
	return c
}

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

func (a *App) newKeyShowCmd() *cobra.Command {
	return &cobra.Command{
		Use: "show", Short: "Person only: show where your key is and its id (never the key)", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			path, err := a.keyPath()
			if err != nil {
				return err
			}
			k, err := readKeyFile(path)
			if err != nil {
				return err
			}
			if k == nil {
				return errs.New(errs.NotFound, "no personal key at %s (a person creates it with 'baton key init')", path)
			}
			return a.emit(map[string]string{"path": k.Path, "key_id": k.ID}, func(w io.Writer) {
				printf(w, "KEY: %s at %s", k.ID, k.Path)
			})
		},
	}
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
