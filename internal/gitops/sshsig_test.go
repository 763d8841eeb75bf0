package gitops_test

import (
	"crypto/ed25519"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/baton-cli/baton/internal/gitops"
)

func testKey(name string) ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	copy(seed, name)
	return ed25519.NewKeyFromSeed(seed)
}

// TestSSHSignature: a signature checks for its key, content and namespace
// only.
func TestSSHSignature(t *testing.T) {
	k := testKey("signer")
	msg := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nmerge\n")
	sig, err := gitops.SignSSH(k, "git", msg)
	if err != nil {
		t.Fatal(err)
	}
	if pub, err := gitops.VerifySSH(sig, "git", msg); err != nil || !pub.Equal(k.Public()) {
		t.Fatalf("VerifySSH = %v, %v", pub, err)
	}
	other, _ := gitops.SignSSH(testKey("other"), "git", msg)
	for _, tc := range []struct {
		name, sig, ns string
		msg           []byte
		want          string
	}{
		{"other content", sig, "git", []byte("tree 0\n"), "does not match"},
		{"other namespace", sig, "baton", msg, `for the namespace "git", not "baton"`},
		{"not armored", "AAAA", "git", msg, "not an SSH signature"},
		{"no end", strings.TrimSuffix(sig, "-----END SSH SIGNATURE-----\n"), "git", msg, "no -----END"},
		{"not base64", "-----BEGIN SSH SIGNATURE-----\n!!\n-----END SSH SIGNATURE-----\n", "git", msg, "not base64"},
		{"truncated", sig[:80] + "\n-----END SSH SIGNATURE-----\n", "git", msg, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gitops.VerifySSH(tc.sig, tc.ns, tc.msg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	if pub, err := gitops.VerifySSH(other, "git", msg); err != nil || pub.Equal(k.Public()) {
		t.Errorf("another key's signature: %v, %v", pub, err)
	}
}

// TestSSHSignatureOpenSSH: ssh-keygen checks baton's signatures, and baton
// checks ssh-keygen's.
func TestSSHSignatureOpenSSH(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed")
	}
	dir := t.TempDir()
	k := testKey("signer")
	pub, _ := ssh.NewPublicKey(k.Public())
	allowed := filepath.Join(dir, "allowed")
	msgPath := filepath.Join(dir, "msg")
	msg := []byte("some content\n")
	write := func(p string, b []byte) {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(allowed, []byte("me@example.org namespaces=\"git\" "+string(ssh.MarshalAuthorizedKey(pub))))
	write(msgPath, msg)
	sig, err := gitops.SignSSH(k, "git", msg)
	if err != nil {
		t.Fatal(err)
	}
	write(msgPath+".sig", []byte(sig))
	verify := func(sigPath string) error {
		cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", allowed, "-I", "me@example.org", "-n", "git", "-s", sigPath)
		in, _ := os.Open(msgPath)
		defer in.Close()
		cmd.Stdin = in
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Logf("ssh-keygen: %s", out)
		}
		return err
	}
	if err := verify(msgPath + ".sig"); err != nil {
		t.Errorf("ssh-keygen does not accept baton's signature: %v", err)
	}
	lines := strings.Split(sig, "\n")
	lines[3] = strings.Map(func(r rune) rune {
		if r == 'A' {
			return 'B'
		}
		return r
	}, lines[3])
	write(msgPath+".bad", []byte(strings.Join(lines, "\n")))
	if verify(msgPath+".bad") == nil {
		t.Error("ssh-keygen accepts an altered signature")
	}

	// ssh-keygen's own signature, with a key it made
	keyPath := filepath.Join(dir, "id")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", keyPath).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	theirPath := filepath.Join(dir, "their-msg")
	write(theirPath, msg)
	if out, err := exec.Command("ssh-keygen", "-Y", "sign", "-n", "git", "-f", keyPath, theirPath).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y sign: %v %s", err, out)
	}
	theirs, _ := os.ReadFile(theirPath + ".sig")
	got, err := gitops.VerifySSH(string(theirs), "git", msg)
	if err != nil {
		t.Fatalf("baton does not accept ssh-keygen's signature: %v", err)
	}
	pubFile, _ := os.ReadFile(keyPath + ".pub")
	want, _, _, _, _ := ssh.ParseAuthorizedKey(pubFile)
	if gotKey, _ := ssh.NewPublicKey(got); string(gotKey.Marshal()) != string(want.Marshal()) {
		t.Error("VerifySSH returned another key than ssh-keygen's")
	}
}

// FuzzVerifySSH: no input crashes the reader.
func FuzzVerifySSH(f *testing.F) {
	sig, _ := gitops.SignSSH(testKey("signer"), "git", []byte("m"))
	f.Add(sig, []byte("m"))
	f.Add("-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n-----END SSH SIGNATURE-----", []byte(""))
	f.Fuzz(func(t *testing.T, s string, msg []byte) {
		_, _ = gitops.VerifySSH(s, "git", msg)
	})
}
