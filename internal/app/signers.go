package app

import (
	"crypto/ed25519"
	"errors"
	"maps"
	"path/filepath"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/store"
)

// trust is the set of public keys verify accepts for a person's or a
// launcher's entry, and a phrase saying where they came from.
type trust struct {
	keys   map[string]ed25519.PublicKey
	source string
}

// trustedKeys are the keys of in.TrustedKeys alone when it is given; else
// the person's own keys (current and retired) and those of the project's
// allowed-signers file in dir.
func (a *App) trustedKeys(in VerifyInput, dir string) (trust, error) {
	if in.TrustedKeys != "" {
		path := in.TrustedKeys
		if !filepath.IsAbs(path) {
			path = filepath.Join(a.env.Cwd, path)
		}
		b, err := store.ReadRegular(path)
		if err != nil || b == nil {
			return trust{}, errs.New(errs.NotFound, "--trusted-keys %s: the file cannot be read (%v): give an allowed-signers file such as 'baton key publish' writes", in.TrustedKeys, orMissing(err))
		}
		keys, err := ParseSigners(in.TrustedKeys, b)
		if err != nil {
			return trust{}, err
		}
		if len(keys) == 0 {
			return trust{}, errs.New(errs.Usage, "--trusted-keys %s lists no ssh-ed25519 key for the namespace %q: give an allowed-signers file such as 'baton key publish' writes", in.TrustedKeys, signersNamespace)
		}
		return trust{keys: keys, source: "the keys in " + in.TrustedKeys}, nil
	}
	keys := a.localKeys()
	source := "your key and its retired keys"
	path := filepath.Join(dir, SignersName)
	b, err := store.ReadRegular(path)
	switch {
	case err == nil && b == nil: // none published
	case err != nil:
		return trust{}, errs.New(errs.Unexpected, "reading %s: %v", path, err)
	default:
		published, err := ParseSigners(path, b)
		if err != nil {
			return trust{}, err
		}
		maps.Copy(keys, published)
		source += " and those of " + SignersName
	}
	if len(keys) == 0 {
		p, _ := a.keyPath()
		source = "there is no personal key at " + p + ", no " + SignersName + " in the project and no --trusted-keys"
	}
	return trust{keys: keys, source: source}, nil
}

// orMissing is err, or what ReadRegular's nil content for a missing file
// means.
func orMissing(err error) error {
	if err == nil {
		return errors.New("no such file")
	}
	return err
}
