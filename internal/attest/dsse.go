// Package attest holds the formats of baton's attestations: the DSSE
// envelope (its pre-authentication encoding, an Ed25519 signature over
// it), the in-toto Statement v1 it carries, and baton's landing predicate
// with its JSON Schema. It is pure: no files, no git, no clock.
package attest

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// PayloadType is the DSSE payload type of an in-toto Statement.
const PayloadType = "application/vnd.in-toto+json"

// Envelope is a DSSE envelope: the payload and its type, base64 as the
// specification's JSON form has them, and the signatures.
type Envelope struct {
	PayloadType string      `json:"payloadType"`
	Payload     string      `json:"payload"`
	Signatures  []Signature `json:"signatures"`
}

// Signature is one signature of an envelope; KeyID is a hint only.
type Signature struct {
	KeyID string `json:"keyid,omitempty"`
	Sig   string `json:"sig"`
}

// PAE is DSSE's pre-authentication encoding of a payload and its type,
// the bytes a signature covers: "DSSEv1 LEN(type) type LEN(body) body",
// lengths in bytes, in decimal.
func PAE(payloadType string, body []byte) []byte {
	t := []byte(payloadType)
	out := make([]byte, 0, len(t)+len(body)+32)
	out = append(out, "DSSEv1 "...)
	out = strconv.AppendInt(out, int64(len(t)), 10)
	out = append(out, ' ')
	out = append(out, t...)
	out = append(out, ' ')
	out = strconv.AppendInt(out, int64(len(body)), 10)
	out = append(out, ' ')
	return append(out, body...)
}

// Sign wraps body in an envelope signed with key, naming keyID.
func Sign(key ed25519.PrivateKey, keyID, payloadType string, body []byte) Envelope {
	sig := ed25519.Sign(key, PAE(payloadType, body))
	return Envelope{PayloadType: payloadType, Payload: base64.StdEncoding.EncodeToString(body),
		Signatures: []Signature{{KeyID: keyID, Sig: base64.StdEncoding.EncodeToString(sig)}}}
}

// The ways an envelope fails to open.
var (
	ErrEnvelope    = errors.New("not a DSSE envelope")
	ErrPayloadType = errors.New("payload type not accepted")
	ErrSignature   = errors.New("no signature checks with a trusted key")
)

// Open checks an envelope's JSON and returns its payload and the id of
// the trusted key whose signature checks. Its payload type must be want,
// and one signature must check with one of keys (by id), whatever keyid
// it names; standard and URL-safe base64 are both read, as DSSE requires.
func Open(data []byte, want string, keys map[string]ed25519.PublicKey) ([]byte, string, error) {
	var env Envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrEnvelope, err)
	}
	body, err := decode64(env.Payload)
	if err != nil {
		return nil, "", fmt.Errorf("%w: payload: %v", ErrEnvelope, err)
	}
	if len(env.Signatures) == 0 {
		return nil, "", fmt.Errorf("%w: it has no signature", ErrEnvelope)
	}
	msg := PAE(env.PayloadType, body)
	id, ok := "", false
	for _, s := range env.Signatures {
		sig, err := decode64(s.Sig)
		if err != nil || len(sig) != ed25519.SignatureSize {
			continue
		}
		if id, ok = checkWith(keys, s.KeyID, msg, sig); ok {
			break
		}
	}
	if !ok {
		return nil, "", ErrSignature
	}
	if env.PayloadType != want {
		return nil, "", fmt.Errorf("%w: %q, where %q is expected", ErrPayloadType, env.PayloadType, want)
	}
	return body, id, nil
}

// checkWith tries the key hint names first, then every other key.
func checkWith(keys map[string]ed25519.PublicKey, hint string, msg, sig []byte) (string, bool) {
	if k, ok := keys[hint]; ok && ed25519.Verify(k, msg, sig) {
		return hint, true
	}
	for id, k := range keys {
		if id != hint && ed25519.Verify(k, msg, sig) {
			return id, true
		}
	}
	return "", false
}

// decode64 reads standard or URL-safe base64, padded or not.
func decode64(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if strings.ContainsAny(s, "-_") {
		return base64.RawURLEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}
