package app

import (
	"crypto/ed25519"
	"encoding/json"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/store"
)

// signingKey is a deterministic Ed25519 key for the tests.
func signingKey(name string) ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	copy(seed, name)
	return ed25519.NewKeyFromSeed(seed)
}

func pubOf(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

// signedEntry is an entry of payload p, named auth and signed with key
// (unsigned when key is nil).
func signedEntry(seq int, auth string, key ed25519.PrivateKey, p eventPayload) store.Event {
	e := store.Event{Seq: seq, Type: "task", Payload: p.raw(), Auth: auth}
	e.Hash = store.ChainHash(e)
	if key != nil {
		e.Sig = store.SignEvent(key, e.Hash)
	}
	return e
}

// TestSignatures: verify authenticates each entry with public keys alone:
// a person's with a trusted key (current or retired), a session's with
// the key its person-signed opening records, and nothing else.
func TestSignatures(t *testing.T) {
	person, retired, stranger := signingKey("person"), signingKey("retired"), signingKey("stranger")
	s1, s2 := signingKey("session one"), signingKey("session two")
	pid, rid, sid := "person:"+keyID(pubOf(person)), "person:"+keyID(pubOf(retired)), "person:"+keyID(pubOf(stranger))
	trusted := map[string]ed25519.PublicKey{keyID(pubOf(person)): pubOf(person), keyID(pubOf(retired)): pubOf(retired)}
	one, two := 1, 2
	opening := func(id int, k ed25519.PrivateKey) eventPayload {
		return eventPayload{Command: "baton session start", Actor: &actor{Role: "IMPLEMENT", Session: &id, Source: "launcher"},
			Opened: &openedRecord{Session: id, Role: "IMPLEMENT", PublicKey: authorizedKey(pubOf(k), ""), By: "launcher"}}
	}
	inSession := func(id *int, role string) eventPayload {
		return eventPayload{Command: "baton progress update-status", Actor: &actor{Role: role, Session: id, Source: "session"}}
	}
	asPerson := eventPayload{Command: "baton features fail", Actor: &actor{Role: "HUMAN", Source: "person", Reason: "r"}}
	base := []store.Event{
		signedEntry(1, pid, person, opening(1, s1)),
		signedEntry(2, rid, retired, opening(2, s2)), // opened before the rotation
	}
	edited := signedEntry(3, pid, person, asPerson)
	edited.Payload = json.RawMessage(strings.Replace(string(edited.Payload), `"r"`, `"s"`, 1))
	edited.Hash = store.ChainHash(edited)
	older := signedEntry(3, pid, nil, asPerson)
	older.MAC = "00"
	for _, tc := range []struct {
		name  string
		entry store.Event
		want  string // a problem's text; "" for none
	}{
		{"person's entry, current key", signedEntry(3, pid, person, asPerson), ""},
		{"person's entry, retired key", signedEntry(3, rid, retired, asPerson), ""},
		{"session's own entry", signedEntry(3, "session:1", s1, inSession(&one, "IMPLEMENT")), ""},
		{"session opened with the retired key", signedEntry(3, "session:2", s2, inSession(&two, "IMPLEMENT")), ""},
		{"person's entry, wrong key", signedEntry(3, sid, stranger, asPerson), "[unauthenticated] 1 entries (seq 3 to 3) are signed with key " + sid[7:]},
		{"person's id, wrong key", signedEntry(3, pid, stranger, asPerson), "[forged] seq 3: its signature does not check with key " + pid[7:]},
		{"person's entry signed by a session key", signedEntry(3, "person:"+keyID(pubOf(s1)), s1, asPerson), "[unauthenticated] 1 entries (seq 3 to 3) are signed with key " + keyID(pubOf(s1))},
		{"person's id signed by a session key", signedEntry(3, pid, s1, asPerson), "[forged] seq 3: its signature does not check with key"},
		{"a session's key signing another session's entry", signedEntry(3, "session:2", s1, inSession(&two, "IMPLEMENT")), "[forged] seq 3: its signature does not check with session 2's key"},
		{"a session's key signing as another session", signedEntry(3, "session:1", s1, inSession(&two, "IMPLEMENT")), "[forged] seq 3: signed with session 1's key but written as session of session 2"},
		{"a session's key signing as a person", signedEntry(3, "session:1", s1, asPerson), "[forged] seq 3: signed with session 1's key but written as person"},
		{"a role changed within a session", signedEntry(3, "session:1", s1, inSession(&one, "REVIEW")), "[forged] seq 3: session 1 was opened as IMPLEMENT but this entry acts as REVIEW"},
		{"a session never opened", signedEntry(3, "session:7", s1, inSession(&one, "IMPLEMENT")), "[forged] seq 3: written in session 7, whose opening"},
		{"edited after signing", edited, "[forged] seq 3: its signature does not check with key"},
		{"unsigned", signedEntry(3, pid, nil, asPerson), "[forged] seq 3: the entry has no signature"},
		{"an older baton's entry", older, "[unauthenticated] 1 entries (seq 3 to 3) were written by an older baton"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := append(append([]store.Event(nil), base...), tc.entry)
			c := (&App{}).checkAudit(&snapshot{}, events, trusted, "the test's keys")
			var got []string
			for _, p := range c.problems {
				got = append(got, "["+p.Check+"] "+p.Message)
			}
			if tc.want == "" {
				if len(got) > 0 || !c.authenticated {
					t.Errorf("problems %q (authenticated %v), want none", got, c.authenticated)
				}
				return
			}
			if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
				t.Errorf("problems %q, want one starting %q", got, tc.want)
			}
		})
	}
}

// TestSignaturesNeedTrust: with no trusted key nothing is authenticated,
// and verify says why rather than passing over it.
func TestSignaturesNeedTrust(t *testing.T) {
	k := signingKey("person")
	events := []store.Event{signedEntry(1, "person:"+keyID(pubOf(k)), k, eventPayload{Command: "baton init"})}
	c := (&App{}).checkAudit(&snapshot{}, events, nil, "there is no key")
	if c.authenticated || len(c.problems) > 0 || len(c.notes) != 1 || !strings.Contains(c.notes[0], "authenticity not checked: there is no key") {
		t.Errorf("got %+v", c)
	}
}

// TestParseSigners: git's allowed_signers lines, with and without
// options; a line that is not one is refused with its number.
func TestParseSigners(t *testing.T) {
	k1, k2 := pubOf(signingKey("one")), pubOf(signingKey("two"))
	for _, tc := range []struct {
		name, file string
		want       []ed25519.PublicKey
		err        string
	}{
		{"publish's line", signersLine(k1) + "\n", []ed25519.PublicKey{k1}, ""},
		{"comments, blanks, no options", "# keys\n\nme@example.org " + authorizedKey(k2, "c") + "\n", []ed25519.PublicKey{k2}, ""},
		{"another namespace only", `me namespaces="git" ` + authorizedKey(k1, "") + "\n" + signersLine(k2), []ed25519.PublicKey{k2}, ""},
		{"several principals", `a@x,b@y namespaces="file,baton" ` + authorizedKey(k1, ""), []ed25519.PublicKey{k1}, ""},
		{"a key alone", authorizedKey(k1, ""), nil, "f: line 1:"},
		{"a principal alone", "me\n", nil, "f: line 1: a principal and a key expected"},
		{"not a key", signersLine(k1) + "\nme ssh-ed25519 AAAAnotbase64\n", nil, "f: line 2:"},
		{"not ed25519", "me ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBEmKSENjQEezOmxkZMy7opKgwFB9nkt5YRrYMjNuG5N87uRgg6CLrbo5wAdT/y6v0mKV0U2w0WZ2YB/++Tpockg=", nil, "f: line 1: a ecdsa-sha2-nistp256 key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSigners("f", []byte(tc.file))
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("error %v, want one starting %q", err, tc.err)
				}
				return
			}
			if err != nil || len(got) != len(tc.want) {
				t.Fatalf("got %v, %v; want %d keys", got, err, len(tc.want))
			}
			for _, k := range tc.want {
				if !got[keyID(k)].Equal(k) {
					t.Errorf("key %s missing", keyID(k))
				}
			}
		})
	}
}

// FuzzParseSigners: no input crashes the parser, and every key it returns
// is under its own id.
func FuzzParseSigners(f *testing.F) {
	f.Add([]byte(signersLine(pubOf(signingKey("one")))))
	f.Add([]byte("# c\nme namespaces=\"baton\" ssh-ed25519 AAAA\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, err := ParseSigners("f", b)
		if err != nil {
			return
		}
		for id, k := range keys {
			if keyID(k) != id {
				t.Errorf("key under id %s is %s", id, keyID(k))
			}
		}
	})
}

// TestKeyFiles: a key pair written, read back in OpenSSH's format, and a
// seed in hex read as the same key; rotation keeps the old public key.
func TestKeyFiles(t *testing.T) {
	path := t.TempDir() + "/baton/key"
	k, err := writeNewKey(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := store.ReadRegular(path)
	if !strings.HasPrefix(string(b), "-----BEGIN OPENSSH PRIVATE KEY-----") {
		t.Errorf("key file is not in OpenSSH's format: %.40q", b)
	}
	k2, err := writeNewKey(path, k)
	if err != nil || k2.ID == k.ID {
		t.Fatalf("rotation: %v, %v", k2, err)
	}
	a := &App{keyFile: path}
	keys := a.localKeys()
	if len(keys) != 2 || !keys[k.ID].Equal(k.public()) || !keys[k2.ID].Equal(k2.public()) {
		t.Errorf("local keys after a rotation: %v", keys)
	}
	if old, _ := store.ReadRegular(retiredPath(path, k.ID)); strings.Contains(string(old), "PRIVATE") {
		t.Errorf("the retired key keeps its private key: %s", old)
	}
	seed, err := parsePrivateKey([]byte("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n"))
	if err != nil || len(seed) != ed25519.PrivateKeySize {
		t.Errorf("a hex seed: %v", err)
	}
	if _, err := parsePrivateKey([]byte("0011")); err == nil {
		t.Error("a short hex string read as a key")
	}
}
