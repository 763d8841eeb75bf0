package app

import (
	"path/filepath"
	"testing"

	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/store"
)

// The per-command cost of identity: binding a credential, loading the key,
// the entry's signature. (go test -run='^$' -bench=Identity ./app)
func BenchmarkIdentity(b *testing.B) {
	open := &progress.OpenSessions{}
	var cred string
	for id := 1; id <= 8; id++ {
		c, _, err := newCredential()
		if err != nil {
			b.Fatal(err)
		}
		open.Open = append(open.Open, progress.OpenSession{SessionID: id, AgentType: "IMPLEMENT", CredentialHash: credentialHash(c, id, "IMPLEMENT")})
		cred = c
	}
	b.Run("bind-credential", func(b *testing.B) {
		for b.Loop() {
			if _, err := boundSession(open, cred); err != nil {
				b.Fatal(err)
			}
		}
	})
	dir := b.TempDir()
	path := filepath.Join(dir, "baton", "key")
	if _, err := writeNewKey(path, nil); err != nil {
		b.Fatal(err)
	}
	b.Run("load-key", func(b *testing.B) {
		for b.Loop() {
			if k, err := readKeyFile(path); err != nil || k == nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("entry-signature", func(b *testing.B) {
		for b.Loop() {
			store.SignEvent(sessionKey(cred), "3f1c0ab2d4e5f60718293a4b5c6d7e8f3f1c0ab2d4e5f60718293a4b5c6d7e8f")
		}
	})
}
