package bridge

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"unicode/utf8"
)

// requestKey is the digest a request is known by within a run: its agent,
// phase name, prompt, the orchestrator's context and how many identical
// requests this process made before it. An answer is replayed only to a
// call with the same key, so a changed prompt (or a call sequence that
// shifted between runs) is a new request and never gets another's answer.
func requestKey(agent, phaseName, prompt string, extra map[string]any, occurrence int) string {
	ctx, err := json.Marshal(extra) // maps marshal with sorted keys: canonical
	if err != nil {
		ctx = []byte(`"unencodable"`)
	}
	doc, _ := json.Marshal([]any{agent, phaseName, prompt, json.RawMessage(ctx), occurrence})
	return sha256Hex(doc)
}

// encodeJSON encodes v as baton writes bridge files: indented, with <, >
// and & as themselves (not \u003c), so that the size a host reads is the
// size baton measured.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// EncodingBase64 is the metadata.response_encoding of a response whose
// output was not valid UTF-8: "response" holds it base64-encoded, so that
// every byte survives JSON.
const EncodingBase64 = "base64"

// encodeOutput is out as the "response" string, and the encoding to
// record when it had to be base64 (JSON strings cannot carry invalid UTF-8).
func encodeOutput(out string) (string, string) {
	if utf8.ValidString(out) {
		return out, ""
	}
	return base64.StdEncoding.EncodeToString([]byte(out)), EncodingBase64
}

// newToken returns a random secret for a host, and its sha256 (hex), which
// is all baton keeps of it.
func newToken() (string, string) {
	var b [24]byte
	_, _ = rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	return tok, TokenHash(tok)
}

// TokenHash is what a checkpoint keeps of a host token.
func TokenHash(tok string) string {
	sum := sha256.Sum256([]byte("baton-host-token:" + tok))
	return hex.EncodeToString(sum[:])
}

var utf8BOM = []byte("\xef\xbb\xbf")

// stripBOM drops a UTF-8 byte order mark some editors and shells write
// before a JSON document.
func stripBOM(data []byte) []byte { return bytes.TrimPrefix(data, utf8BOM) }

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own structs are marshalled
	}
	return data
}
