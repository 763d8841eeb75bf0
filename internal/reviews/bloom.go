package reviews

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
)

// The branches' filter: a Bloom filter over the keys of the branches part,
// kept as a part of its own (named by its digest in the head, like every
// part) and built again whenever a fold changes the branches part. Most
// reviews name a new branch: the filter tells it absent from the
// branches part without reading or hashing that part, which grows with
// every branch ever reviewed. A filter never answers "absent" for a key it
// was built with; a key it may hold (rarely one it does not: about 1 in
// 100) is looked up in the branches part as before. An index without a
// filter, or whose filter does not decode, looks every branch up.

// bloomBitsPerKey and bloomHashes size the filter: about 1% of the keys
// not in the part are looked up in vain.
const (
	bloomBitsPerKey = 10
	bloomHashes     = 7
)

// bloom is a decoded filter: k bit positions per key in bits.
type bloom struct {
	k    int
	bits []byte
}

// bloomPair is the two hashes a key's k positions derive from (64-bit
// FNV-1a from two offsets; stable across processes and versions).
func bloomPair(key string) (uint64, uint64) {
	h1, h2 := uint64(14695981039346656037), uint64(0x9e3779b97f4a7c15)
	for i := 0; i < len(key); i++ {
		h1 = (h1 ^ uint64(key[i])) * 1099511628211
		h2 = (h2 ^ uint64(key[i])) * 1099511628211
	}
	return h1, h2 | 1
}

func (b *bloom) positions(key string, visit func(bit uint64) bool) bool {
	m := uint64(len(b.bits)) * 8
	h1, h2 := bloomPair(key)
	for i := 0; i < b.k; i++ {
		if !visit((h1 + uint64(i)*h2) % m) {
			return false
		}
	}
	return true
}

// mayHold is false only for a key the filter was not built with.
func (b *bloom) mayHold(key string) bool {
	return b.positions(key, func(bit uint64) bool { return b.bits[bit/8]&(1<<(bit%8)) != 0 })
}

func (b *bloom) add(key string) {
	b.positions(key, func(bit uint64) bool { b.bits[bit/8] |= 1 << (bit % 8); return true })
}

// encodeBloom is the filter part over keys: {"b":[k,"bits in base64"]}.
func encodeBloom(keys []string) []byte {
	b := bloom{k: bloomHashes, bits: make([]byte, max(8, (len(keys)*bloomBitsPerKey+7)/8))}
	for _, k := range keys {
		b.add(k)
	}
	raw, _ := json.Marshal(map[string][2]any{"b": {b.k, base64.StdEncoding.EncodeToString(b.bits)}})
	return raw
}

// decodeBloom reads the filter's entry of the part, [k,"bits in base64"]
// as encodeBloom wrote it (nil when there is none or it does not decode:
// every key is then looked up). It is read in place: the part is large.
func decodeBloom(entry []byte) *bloom {
	comma := bytes.IndexByte(entry, ',')
	if len(entry) < 6 || entry[0] != '[' || comma < 0 || !bytes.HasSuffix(entry, []byte(`"]`)) || entry[comma+1] != '"' {
		return nil
	}
	k, err := strconv.Atoi(string(entry[1:comma]))
	enc := entry[comma+2 : len(entry)-2]
	if err != nil || k < 1 || k > 64 || len(enc) == 0 {
		return nil
	}
	bits := make([]byte, base64.StdEncoding.DecodedLen(len(enc)))
	n, err := base64.StdEncoding.Decode(bits, enc) // a quote or escape inside fails here
	if err != nil || n == 0 {
		return nil
	}
	return &bloom{k: k, bits: bits[:n]}
}
