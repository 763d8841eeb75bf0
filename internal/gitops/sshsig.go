package gitops

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"
)

// SSH signatures in OpenSSH's sshsig format (PROTOCOL.sshsig), the one
// 'ssh-keygen -Y sign' writes and git checks for gpg.format=ssh: a commit's
// signature is an armored sshsig blob in its gpgsig header, made in the
// namespace "git" over the commit without that header.

const (
	sshsigMagic   = "SSHSIG"
	sshsigVersion = 1
	sshsigHash    = "sha512"
	sshsigBegin   = "-----BEGIN SSH SIGNATURE-----"
	sshsigEnd     = "-----END SSH SIGNATURE-----"
)

// signedData is what an sshsig signature covers.
type signedData struct {
	Namespace string
	Reserved  string
	Hash      string
	Digest    string
}

// sshsigBlob is the signature's wire form, after the magic.
type sshsigBlob struct {
	Version   uint32
	PublicKey string
	Namespace string
	Reserved  string
	Hash      string
	Signature string
}

func toSign(namespace string, msg []byte) []byte {
	sum := sha512.Sum512(msg)
	return append([]byte(sshsigMagic), ssh.Marshal(signedData{Namespace: namespace, Hash: sshsigHash, Digest: string(sum[:])})...)
}

// SignSSH signs msg with key in namespace and returns the armored
// signature, as 'ssh-keygen -Y sign -n NAMESPACE' does.
func SignSSH(key ed25519.PrivateKey, namespace string, msg []byte) (string, error) {
	signer, err := ssh.NewSignerFromKey(key)
	if err != nil {
		return "", err
	}
	sig, err := signer.Sign(nil, toSign(namespace, msg))
	if err != nil {
		return "", err
	}
	blob := append([]byte(sshsigMagic), ssh.Marshal(sshsigBlob{Version: sshsigVersion, PublicKey: string(signer.PublicKey().Marshal()),
		Namespace: namespace, Hash: sshsigHash, Signature: string(ssh.Marshal(sig))})...)
	enc := base64.StdEncoding.EncodeToString(blob)
	var b strings.Builder
	b.WriteString(sshsigBegin + "\n")
	for len(enc) > 70 {
		b.WriteString(enc[:70] + "\n")
		enc = enc[70:]
	}
	b.WriteString(enc + "\n" + sshsigEnd + "\n")
	return b.String(), nil
}

// VerifySSH checks an armored sshsig signature of msg in namespace and
// returns the Ed25519 key that made it.
func VerifySSH(armored, namespace string, msg []byte) (ed25519.PublicKey, error) {
	body := strings.TrimSpace(armored)
	body, ok := strings.CutPrefix(body, sshsigBegin)
	if !ok {
		return nil, errors.New("not an SSH signature (no " + sshsigBegin + " line)")
	}
	body, ok = strings.CutSuffix(strings.TrimSpace(body), sshsigEnd)
	if !ok {
		return nil, errors.New("the SSH signature has no " + sshsigEnd + " line")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(body), ""))
	if err != nil {
		return nil, fmt.Errorf("the SSH signature is not base64: %v", err)
	}
	rest, ok := bytes.CutPrefix(raw, []byte(sshsigMagic))
	if !ok {
		return nil, errors.New("the SSH signature does not start with " + sshsigMagic)
	}
	var blob sshsigBlob
	if err := ssh.Unmarshal(rest, &blob); err != nil {
		return nil, fmt.Errorf("the SSH signature cannot be read: %v", err)
	}
	switch {
	case blob.Version != sshsigVersion:
		return nil, fmt.Errorf("SSH signature version %d, where %d is expected", blob.Version, sshsigVersion)
	case blob.Namespace != namespace:
		return nil, fmt.Errorf("the SSH signature is for the namespace %q, not %q", blob.Namespace, namespace)
	case blob.Hash != sshsigHash:
		return nil, fmt.Errorf("the SSH signature hashes with %q, where baton checks %q", blob.Hash, sshsigHash)
	}
	pub, err := ssh.ParsePublicKey([]byte(blob.PublicKey))
	if err != nil {
		return nil, fmt.Errorf("the SSH signature's key cannot be read: %v", err)
	}
	ck, ok := pub.(ssh.CryptoPublicKey)
	key, isEd := ed25519.PublicKey(nil), false
	if ok {
		key, isEd = ck.CryptoPublicKey().(ed25519.PublicKey)
	}
	if !isEd {
		return nil, fmt.Errorf("the SSH signature is made with a %s key, where ssh-ed25519 is expected", pub.Type())
	}
	var sig ssh.Signature
	if err := ssh.Unmarshal([]byte(blob.Signature), &sig); err != nil {
		return nil, fmt.Errorf("the SSH signature's signature cannot be read: %v", err)
	}
	if err := pub.Verify(toSign(namespace, msg), &sig); err != nil {
		return nil, errors.New("the SSH signature does not match the signed content")
	}
	return key, nil
}
