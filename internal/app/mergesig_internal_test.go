package app

import (
	"crypto/ed25519"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/baton-cli/baton/internal/gitops"
)

// TestMergeSignatures: every non-fast-forward merge the log records must
// carry git's SSH signature by a trusted key or by the session whose entry
// records it. The commits are signed by git itself (commit -S with
// gpg.format=ssh), so baton reads git's own signatures.
func TestMergeSignatures(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("git signs with ssh-keygen, which is not installed")
	}
	dir := t.TempDir()
	person, session, stranger := signingKey("person"), signingKey("session"), signingKey("stranger")
	keyFile := func(name string, k ed25519.PrivateKey) string {
		block, err := ssh.MarshalPrivateKey(k, name)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	repo := filepath.Join(dir, "repo")
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@x")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git("init", "-q", "-b", "main")
	git("commit", "-q", "--allow-empty", "-m", "initial")
	commit := func(msg string, key string) string {
		if key == "" {
			git("commit", "-q", "--allow-empty", "-m", msg)
		} else {
			git("-c", "gpg.format=ssh", "-c", "user.signingkey="+key, "commit", "-q", "-S", "--allow-empty", "-m", msg)
		}
		return git("rev-parse", "HEAD")
	}
	byPerson := commit("by the person", keyFile("person", person))
	bySession := commit("by the session", keyFile("session", session))
	byStranger := commit("by a stranger", keyFile("stranger", stranger))
	unsigned := commit("unsigned", "")
	r, err := gitops.Open(repo)
	if err != nil {
		t.Fatal(err)
	}
	trusted := map[string]ed25519.PublicKey{keyID(pubOf(person)): pubOf(person)}
	sessions := map[int]ed25519.PublicKey{3: pubOf(session)}
	for _, tc := range []struct {
		name string
		m    logMerge
		want string
	}{
		{"a person's merge", logMerge{seq: 1, written: true, commit: byPerson, auth: "person:x"}, ""},
		{"the merging session's", logMerge{seq: 1, written: true, commit: bySession, auth: "session:3"}, ""},
		{"a fast-forward or an adopted merge: not baton's commit", logMerge{seq: 1, commit: unsigned}, ""},
		{"another session's key", logMerge{seq: 1, written: true, commit: bySession, auth: "session:4"}, "which is neither a trusted key nor the key of the session that merged it"},
		{"the session's key as a person's merge", logMerge{seq: 1, written: true, commit: bySession, auth: "person:x"}, "which is neither a trusted key"},
		{"an untrusted key", logMerge{seq: 1, written: true, commit: byStranger, auth: "person:x"}, "signed with key " + keyID(pubOf(stranger))},
		{"unsigned", logMerge{seq: 1, written: true, commit: unsigned, auth: "person:x"}, "it is not signed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mergeSignatureProblems(r, logRecords{merges: []logMerge{tc.m}}, sessions, trusted)
			if tc.want == "" {
				if len(got) > 0 {
					t.Errorf("problems %+v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].Check != "git-signature" || !strings.Contains(got[0].Message, tc.want) {
				t.Errorf("problems %+v, want one saying %q", got, tc.want)
			}
		})
	}
}
