package app

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/store"
)

// trust is the set of public keys verify accepts for a person's or a
// launcher's entry, a phrase saying where they came from, and what is
// wrong with the project's allowed-signers file.
type trust struct {
	keys    map[string]ed25519.PublicKey
	source  string
	problem string
}

// trustedKeys are the keys of in.TrustedKeys alone when it is given; else
// the person's own keys (current and retired) and those of the project's
// allowed-signers file in dir.
// events is the log, which must record the file's publication.
func (a *App) trustedKeys(in VerifyInput, dir string, events []store.Event) (trust, error) {
	if in.TrustedKeys != "" {
		path := in.TrustedKeys
		if !filepath.IsAbs(path) {
			path = filepath.Join(a.env.Cwd, path)
		}
		b, err := store.ReadRegular(path)
		if err != nil || b == nil {
			return trust{}, errs.New(errs.NotFound, "--trusted-keys %s: the file cannot be read (%v): give an allowed-signers file (git's format, as a person publishes it)", in.TrustedKeys, orMissing(err))
		}
		keys, err := ParseSigners(in.TrustedKeys, b)
		if err != nil {
			return trust{}, err
		}
		if len(keys) == 0 {
			return trust{}, errs.New(errs.Usage, "--trusted-keys %s lists no ssh-ed25519 key for the namespace %q: give an allowed-signers file (git's format, as a person publishes it)", in.TrustedKeys, signersNamespace)
		}
		return trust{keys: keys, source: "the keys in " + in.TrustedKeys}, nil
	}
	t := trust{keys: a.localKeys(), source: "your key and its retired keys"}
	path := filepath.Join(dir, SignersName)
	b, err := store.ReadRegular(path)
	switch {
	case err == nil && b == nil: // none published
	case err != nil:
		return trust{}, errs.New(errs.Unexpected, "reading %s: %v", path, err)
	default:
		if t.problem = signersProblem(b, events, t.keys); t.problem != "" {
			break
		}
		published, err := ParseSigners(path, b)
		if err != nil {
			return trust{}, err
		}
		maps.Copy(t.keys, published)
		t.source += " and those of " + SignersName
	}
	if len(t.keys) == 0 {
		p, _ := a.keyPath()
		t.source = "there is no personal key at " + p + ", no " + SignersName + " published in the project and no --trusted-keys"
	}
	return t, nil
}

// orMissing is err, or what ReadRegular's nil content for a missing file
// means.
func orMissing(err error) error {
	if err == nil {
		return errors.New("no such file")
	}
	return err
}

// Published is what 'baton key publish' records: the allowed-signers file
// it wrote, its content's sha256 and the keys it lists.
type Published struct {
	File    string   `json:"signers_file"`
	SHA256  string   `json:"signers_sha256"`
	KeyIDs  []string `json:"key_ids"`
	Content string   `json:"-"`
}

// KeyPublishResult is where the allowed-signers file was written and what
// it lists.
type KeyPublishResult struct {
	Path   string   `json:"path"`
	KeyIDs []string `json:"key_ids"`
}

// KeyPublish writes the person's public keys (current first, then the
// retired ones) into the project's allowed-signers file, recorded in the
// log: a clone that carries the file verifies the log, and git the merges
// baton signs, with no secret. A call bound to a session is refused.
func (a *App) KeyPublish(ctx context.Context, c Caller) (KeyPublishResult, error) {
	a = a.as(c)
	if a.insideSession() {
		return KeyPublishResult{}, errs.New(errs.Policy, "%s", noAgentKey)
	}
	k, err := a.personKeyOrRefuse()
	if err != nil {
		return KeyPublishResult{}, err
	}
	pub := signersFile(k, a.localKeys())
	var res KeyPublishResult
	err = a.update(ctx, "baton key publish", "", func(st *state) error {
		st.tx.Write(SignersName, []byte(pub.Content))
		res = KeyPublishResult{Path: st.tx.Store().Path(SignersName), KeyIDs: pub.KeyIDs}
		st.summary = fmt.Sprintf("published key(s) %s in %s", strings.Join(pub.KeyIDs, ", "), SignersName)
		st.record = pub
		st.logAlways()
		return nil
	})
	return res, err
}

// signersFile is the allowed-signers file listing cur and then the other
// keys, by id.
func signersFile(cur *personKey, keys map[string]ed25519.PublicKey) Published {
	ids := []string{cur.ID}
	for _, id := range slices.Sorted(maps.Keys(keys)) {
		if id != cur.ID {
			ids = append(ids, id)
		}
	}
	var b strings.Builder
	b.WriteString("# baton's allowed signers: the public keys that sign this project's audit log and\n# baton's merges (git's allowed_signers format). Written by 'baton key publish'.\n")
	for _, id := range ids {
		b.WriteString(signersLine(keys[id]) + "\n")
	}
	return Published{File: SignersName, SHA256: store.HashContent([]byte(b.String())), KeyIDs: ids, Content: b.String()}
}

// lastPublished is the last publish the log records (nil for none) and
// its entry.
func lastPublished(events []store.Event) (*Published, store.Event) {
	for i := len(events) - 1; i >= 0; i-- {
		var p struct {
			Command string     `json:"command"`
			Record  *Published `json:"record"`
		}
		if json.Unmarshal(events[i].Payload, &p) == nil && p.Command == "baton key publish" && p.Record != nil {
			return p.Record, events[i]
		}
	}
	return nil, store.Event{}
}

// signersProblem says what is wrong with the project's allowed-signers
// file, whose content is b ("" when nothing is): it must be what the last
// publish wrote, and where the person's own keys are at hand, that publish
// must be signed with one of them, or a key in the file may be anyone's.
func signersProblem(b []byte, events []store.Event, local map[string]ed25519.PublicKey) string {
	pub, e := lastPublished(events)
	switch {
	case pub == nil:
		return fmt.Sprintf("%s is in the project, but no publication of it is in the log: its keys were not published by a person, so none of them is trusted; a person must look at its keys", SignersName)
	case pub.SHA256 != store.HashContent(b):
		return fmt.Sprintf("%s is not what the person's publication wrote at seq %d: it was changed outside baton (edited, or changed by a merged branch), so none of its keys is trusted (see 'git log -p %s'); a person must look", SignersName, e.Seq, SignersName)
	case len(local) > 0:
		kind, id, _ := strings.Cut(e.Auth, ":")
		if k, ok := local[id]; !ok || kind != "person" || !store.EventSigned(k, e.Hash, e.Sig) {
			return fmt.Sprintf("%s was published at seq %d with key %q, which is not yours (nor one of your retired keys): whoever published it held another key, so none of its keys is trusted; a person must look at its keys", SignersName, e.Seq, id)
		}
	}
	return ""
}
