package app

import (
	"crypto/ed25519"
	"fmt"
	"strconv"
	"strings"

	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/store"
)

// mergeNamespace is the sshsig namespace git checks commit signatures in.
const mergeNamespace = "git"

// mergeSigner signs the merge commits this call writes, in git's SSH
// signature format: with the person's key where the process holds it (a
// launcher, its broker, a person), else, in an agent's own process, with
// its session's key (nil when there is neither). The key is read when the
// commit is signed and zeroed right after.
func (a *App) mergeSigner() func([]byte) (string, error) {
	if a.launch == nil && a.insideSession() {
		if sessionKey(a.caller.Session) == nil {
			return nil
		}
		return func(payload []byte) (string, error) {
			key := sessionKey(a.caller.Session)
			defer clear(key)
			return gitops.SignSSH(key, mergeNamespace, payload)
		}
	}
	k, err := a.loadKey() // a person, or a launcher, which reads its key when a step signs
	k.wipe()
	if err != nil || k == nil {
		return nil
	}
	return func(payload []byte) (string, error) {
		k, err := a.loadKey()
		if err != nil || k == nil {
			return "", fmt.Errorf("the personal key could not be read to sign the merge: %v", orMissing(err))
		}
		defer k.wipe()
		return gitops.SignSSH(k.Secret, mergeNamespace, payload)
	}
}

// mergeSignatureProblems checks that every merge commit the log records
// baton writing (see logMerge.written) is signed, in git's SSH format, with a trusted key or the
// key of the session whose entry records the merge.
func mergeSignatureProblems(r gitops.Repo, lr logRecords, sessions map[int]ed25519.PublicKey, keys map[string]ed25519.PublicKey) []Problem {
	var out []Problem
	for _, m := range lr.merges {
		if !m.written {
			continue
		}
		full, err := gitops.ResolveCommit(r, m.commit)
		if err != nil {
			continue // reported as a missing hash
		}
		bad := func(format string, args ...any) {
			out = append(out, Problem{"git-signature", store.EventsName, fmt.Sprintf("merge commit %s (review R%d, entry %d): ", gitops.Short(full), m.review, m.seq) + fmt.Sprintf(format, args...)})
		}
		sig, payload, err := r.CommitSignature(full)
		switch {
		case err != nil:
			bad("%v", err)
			continue
		case sig == "":
			bad("it is not signed: baton signs every merge commit it writes, so this one was written or rewritten outside baton")
			continue
		}
		pub, err := gitops.VerifySSH(sig, mergeNamespace, payload)
		if err != nil {
			bad("%v: the commit was rewritten after baton signed it", err)
			continue
		}
		if _, ok := keys[keyID(pub)]; ok {
			continue
		}
		kind, name, _ := strings.Cut(m.auth, ":")
		if id, _ := strconv.Atoi(name); kind == "session" && sessions[id].Equal(pub) {
			continue
		}
		bad("it is signed with key %s, which is neither a trusted key nor the key of the session that merged it", keyID(pub))
	}
	return out
}
