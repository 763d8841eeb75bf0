package attest_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/attest"
)

func key(seedHex string) ed25519.PrivateKey {
	seed, _ := hex.DecodeString(seedHex)
	return ed25519.NewKeyFromSeed(seed)
}

// The DSSE specification's test vectors (protocol.md's example and the
// Ed25519 vectors of its testvectors/): key A's seed, an in-toto payload,
// and the PAE and signatures they give.
const (
	seedA      = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
	seedB      = "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb"
	payloadB64 = "eyJfdHlwZSI6Imh0dHBzOi8vaW4tdG90by5pby9TdGF0ZW1lbnQvdjEifQ=="
	sigA       = "2WAfaHm5jluo0w+0rk8uVkluELJYWjSmU9x7EUzx+AyteDGJ4/nqyJXfmAUVFIAoQafWm7AxBZNw5M9ixNHiCA=="
	paeHex     = "445353457631203238206170706c69636174696f6e2f766e642e696e2d746f746f2b6a736f6e203433207b225f74797065223a2268747470733a2f2f696e2d746f746f2e696f2f53746174656d656e742f7631227d"
)

func TestPAESpecVectors(t *testing.T) {
	body, _ := base64.StdEncoding.DecodeString(payloadB64)
	for _, tc := range []struct {
		name, typ string
		body      []byte
		want      string
	}{
		{"protocol.md's example", "http://example.com/HelloWorld", []byte("hello world"), "DSSEv1 29 http://example.com/HelloWorld 11 hello world"},
		{"an in-toto payload", attest.PayloadType, body, string(must(hex.DecodeString(paeHex)))},
		{"an empty body keeps its space", attest.PayloadType, nil, "DSSEv1 28 application/vnd.in-toto+json 0 "},
		{"lengths count bytes, not characters", "application/vnd.exämple+json", body, "DSSEv1 29 application/vnd.exämple+json 43 " + string(body)},
	} {
		if got := string(attest.PAE(tc.typ, tc.body)); got != tc.want {
			t.Errorf("%s: PAE = %q, want %q", tc.name, got, tc.want)
		}
	}
	// Ed25519 is deterministic: baton's envelope is the vector's, byte for byte
	env := attest.Sign(key(seedA), "A", attest.PayloadType, body)
	if env.Payload != payloadB64 || env.Signatures[0].Sig != sigA {
		t.Errorf("Sign = %+v, want the vector's payload and signature %s", env, sigA)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestOpen: an envelope opens only with a trusted key, its payload and its
// payload type as signed.
func TestOpen(t *testing.T) {
	a, b := key(seedA), key(seedB)
	trusted := map[string]ed25519.PublicKey{"A": a.Public().(ed25519.PublicKey)}
	body := []byte(`{"_type":"https://in-toto.io/Statement/v1"}`)
	good := attest.Sign(a, "A", attest.PayloadType, body)
	edit := func(f func(e *attest.Envelope)) []byte {
		e := good
		e.Signatures = append([]attest.Signature(nil), good.Signatures...)
		f(&e)
		return must(json.Marshal(e))
	}
	for _, tc := range []struct {
		name string
		env  []byte
		want error
	}{
		{"as signed", edit(func(*attest.Envelope) {}), nil},
		{"url-safe base64 (the spec's vector)", []byte(`{"payload":"-_-_Pj8=","payloadType":"application/vnd.in-toto+json","signatures":[{"sig":"P-_KHICeR7tI6S_YyejJTRtrXhcQyQ2LYPaL8h90KjC9qN8HU_svOQ6TuDOT1HIrsGW886DbWNWcCmX5twLrAw==","keyid":"A"}]}`), nil},
		{"a wrong keyid is only a hint", edit(func(e *attest.Envelope) { e.Signatures[0].KeyID = "B" }), nil},
		{"signed with another key", must(json.Marshal(attest.Sign(b, "A", attest.PayloadType, body))), attest.ErrSignature},
		{"payload edited", edit(func(e *attest.Envelope) {
			e.Payload = base64.StdEncoding.EncodeToString([]byte(`{"_type":"https://in-toto.io/Statement/v0"}`))
		}), attest.ErrSignature},
		{"payload type swapped (the spec's vector)", edit(func(e *attest.Envelope) { e.PayloadType = "application/vnd.example.other+json" }), attest.ErrSignature},
		{"signed for another payload type", must(json.Marshal(attest.Sign(a, "A", "application/json", body))), attest.ErrPayloadType},
		{"no signature", edit(func(e *attest.Envelope) { e.Signatures = nil }), attest.ErrEnvelope},
		{"signature not base64", edit(func(e *attest.Envelope) { e.Signatures[0].Sig = "!!" }), attest.ErrSignature},
		{"not JSON", []byte("Notes added by hand\n"), attest.ErrEnvelope},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, id, err := attest.Open(tc.env, attest.PayloadType, trusted)
			if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Fatalf("Open: %v, want %v", err, tc.want)
			}
			if err == nil && (id != "A" || len(got) == 0) {
				t.Errorf("Open = %q by %q", got, id)
			}
		})
	}
	if _, _, err := attest.Open(must(json.Marshal(good)), attest.PayloadType, nil); !errors.Is(err, attest.ErrSignature) {
		t.Errorf("with no trusted key: %v", err)
	}
}

func FuzzOpen(f *testing.F) {
	a := key(seedA)
	trusted := map[string]ed25519.PublicKey{"A": a.Public().(ed25519.PublicKey)}
	f.Add(must(json.Marshal(attest.Sign(a, "A", attest.PayloadType, []byte(`{}`)))))
	f.Add([]byte(`{"payload":"","payloadType":"","signatures":[{"sig":""}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		body, id, err := attest.Open(data, attest.PayloadType, trusted)
		if err != nil {
			return
		}
		// whatever opens was signed by A over exactly what it returns
		var env attest.Envelope
		if json.Unmarshal(data, &env) != nil || id != "A" {
			t.Fatalf("opened %q by %q from %q", body, id, data)
		}
		ok := false
		for _, s := range env.Signatures {
			raw := strings.TrimRight(s.Sig, "=")
			sig, err := base64.RawStdEncoding.DecodeString(raw)
			if err != nil {
				sig, _ = base64.RawURLEncoding.DecodeString(raw)
			}
			ok = ok || ed25519.Verify(trusted["A"], attest.PAE(env.PayloadType, body), sig)
		}
		if !ok {
			t.Fatalf("opened %q, which no signature covers", data)
		}
	})
}
