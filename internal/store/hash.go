package store

import (
	"crypto/sha256"
	"encoding/hex"
)

// HashContent is how the audit log records a file's content: the sha256 of
// its bytes, in hex ("" for no file).
func HashContent(b []byte) string {
	if b == nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
