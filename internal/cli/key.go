package cli

import (
	"io"

	"github.com/spf13/cobra"
)

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
			k, err := a.app.KeyInit(c.Context(), a.caller(), rotate)
			if err != nil {
				return err
			}
			return a.emit(map[string]string{"path": k.Path, "key_id": k.KeyID}, func(w io.Writer) {
				printf(w, "SUCCESS: personal key %s written to %s (mode 0600)", k.KeyID, k.Path)
				if k.PreviousID != "" {
					printf(w, "the previous key %s is kept as %s for 'baton verify'", k.PreviousID, k.PreviousPath)
				}
			})
		},
	}
	c.Flags().BoolVar(&rotate, "rotate", false, "replace an existing key, keeping the old one for verify")
	return c
}

func (a *App) newKeyShowCmd() *cobra.Command {
	return &cobra.Command{
		Use: "show", Short: "Person only: show where your key is and its id (never the key)", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			k, err := a.app.KeyShow(c.Context(), a.caller())
			if err != nil {
				return err
			}
			return a.emit(map[string]string{"path": k.Path, "key_id": k.KeyID}, func(w io.Writer) {
				printf(w, "KEY: %s at %s", k.KeyID, k.Path)
			})
		},
	}
}

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
