package store

import (
	"bytes"
	"encoding/json"
	"testing"
)

// decodeBlocks answers as encoding/json does for every form a stamp's
// blocks may take: what blocksJSON wrote, and what an agent could put
// there instead.
func TestDecodeBlocksAsJSON(t *testing.T) {
	sums := bytes.Repeat([]byte{0xfb, 0xff, 0x00, 0x3e}, 24)
	for _, in := range []string{
		string(blocksJSON(sums)), `""`, `"AAAA"`, `"AA\u0041A"`, `"AA\/A"`, `"A==="`, `"AAA"`, `"AA AA"`,
		`"@@@@"`, `null`, `1`, `"`, `[]`, `"AAAA\"`, `"QUJD\nRA=="`,
	} {
		want, werr := func() ([]byte, error) { var b []byte; err := json.Unmarshal([]byte(in), &b); return b, err }()
		got, gerr := decodeBlocks(json.RawMessage(in))
		if (werr == nil) != (gerr == nil) || werr == nil && !bytes.Equal(got, want) {
			t.Errorf("%s: %x, %v; encoding/json: %x, %v", in, got, gerr, want, werr)
		}
	}
	if got, err := decodeBlocks(blocksJSON(sums)); err != nil || !bytes.Equal(got, sums) {
		t.Errorf("the sums written: %x, %v", got, err)
	}
}
