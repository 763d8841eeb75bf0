package cli

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/internal/app"
)

func (a *App) newKeyCmd() *cobra.Command {
	c := group("key", "Person only: create, rotate and show your personal key", a.newKeyInitCmd(), a.newKeyShowCmd(), a.newKeyPublishCmd())
	c.Long = keyHelp
	// a person's own command: its examples stay with it
	c.Example = "baton key init                          # once per person, outside every project\nbaton key show"
	return c
}

func (a *App) newKeyInitCmd() *cobra.Command {
	var rotate bool
	c := &cobra.Command{
		Use:     "init",
		Short:   "Person only: create your personal key (or replace it with --rotate)",
		Long:    keyHelp,
		Example: "baton key init\nbaton key init --rotate                 # new key; the old one is kept for verify",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			k, err := a.app.KeyInit(c.Context(), a.caller(), rotate)
			if err != nil {
				return err
			}
			return a.emit(k, func(w io.Writer) {
				printf(w, "SUCCESS: personal key %s written to %s (mode 0600)", k.KeyID, k.Path)
				if k.PreviousID != "" {
					printf(w, "the previous key's public key %s is kept as %s for 'baton verify'", k.PreviousID, k.PreviousPath)
				}
				printf(w, "%s", k.PublicKey)
			})
		},
	}
	c.Flags().BoolVar(&rotate, "rotate", false, "replace an existing key, keeping the old one for verify")
	return c
}

func (a *App) newKeyShowCmd() *cobra.Command {
	return &cobra.Command{
		Use: "show", Short: "Person only: show where your key is, its id and its public key (OpenSSH format)", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			k, err := a.app.KeyShow(c.Context(), a.caller())
			if err != nil {
				return err
			}
			return a.emit(k, func(w io.Writer) {
				printf(w, "KEY: %s at %s", k.KeyID, k.Path)
				printf(w, "%s", k.PublicKey)
			})
		},
	}
}

func (a *App) newKeyPublishCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "publish",
		Short: "Person only: write your public keys into the project's allowed-signers file (" + app.SignersName + ")",
		Long: `Write your public keys (the current one first, then the retired ones) into the project's
allowed-signers file, ` + app.SignersName + ` in the state directory, in git's allowed_signers format,
recorded in the audit log. Commit the file on main: a clone then carries it, 'baton verify'
checks the log with it and no secret, and git checks the merges baton signs
('git -c gpg.ssh.allowedSignersFile=` + app.SignersName + ` verify-commit MERGE'). verify trusts the file only
while it is what the last publish wrote. Run it again after 'baton key init --rotate'.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			res, err := a.app.KeyPublish(c.Context(), a.caller())
			if err != nil {
				return err
			}
			return a.emit(res, func(w io.Writer) {
				printf(w, "SUCCESS: published key(s) %s in %s", strings.Join(res.KeyIDs, ", "), res.Path)
				printf(w, "commit it on main so that clones carry it, and record that commit: git add %s && git commit -m 'baton: allowed signers' && baton reconcile --as HUMAN --reason 'committed the allowed signers'", app.SignersName)
			})
		},
	}
}

const keyHelp = `The personal key is a person's own secret: an Ed25519 key pair. The private key is kept
outside every project in the user's config directory ($XDG_CONFIG_HOME/baton/key, else
~/.config/baton/key on Linux), mode 0600, in OpenSSH's format. It is what makes a call a person's or a launcher's:

  - 'baton run' (a launcher) holds it in memory and opens each agent's session with it; each
    session gets a key pair of its own, whose public key the opening entry records and whose
    private key is the credential only that session's agent receives;
  - a person opens sessions by hand with it ('baton session start'), and overrides a rule with
    'baton --as HUMAN --reason "..." COMMAND' — recorded with the key's id and the agent
    sessions open at that moment;
  - every audit entry is signed: a person's, a launcher's or an unbound call's with this key, a
    session's with its own. 'baton verify' checks the signatures with public keys alone, so it
    needs no secret: 'baton key publish' writes the public keys into the project's
    allowed-signers file (.baton-signers, git's allowed_signers format) for a clone to carry,
    and 'baton verify --trusted-keys FILE' trusts the keys of FILE alone.

'baton key show' prints the public key in OpenSSH's authorized_keys format.

Never copy the private key into a project, an agent's environment or a CI log. An agent that can
read this file can act as you: keep agents out of your config directory (an OS sandbox does this).

Rotation: 'baton key init --rotate' writes a new key pair and keeps the old public key beside it
as key.<id>.retired, so that 'baton verify' still checks entries signed with it; run 'baton key
publish' again so that clones trust the new key. Sessions open at the rotation keep working
(their keys were issued already).

Loss: create a new key with 'baton key init'. Entries signed with a lost key still verify with
its public key where it was published; elsewhere 'baton verify' says so for each key it does not
trust, and still checks the structure of the log and everything written after.`
