package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// A log an older baton wrote records a tracked directory's listing over
// the plain sha256 of each file; a file over 256 KiB in it, unchanged, must
// not be reported as drift after the upgrade.
func TestOlderListingOfLongFile(t *testing.T) {
	s := New(t.TempDir())
	s.Create = true
	s.Tracked = []string{"f.json", "p/"}
	os.MkdirAll(s.Path("p"), 0o755)
	long := bytes.Repeat([]byte("prompt "), 300<<10/7)
	os.WriteFile(filepath.Join(s.Path("p"), "implement.md"), long, 0o644)
	stampTestWrite(t, s, func() {}, func([]byte) ([][]byte, int64) { return [][]byte{[]byte("[\n{\"id\":1}\n]\n")}, 2 })
	// the last entry as an older baton wrote it: plain sha256 in the listing
	plain := sha256.Sum256(long)
	old := listingHash(map[string]string{"implement.md": hex.EncodeToString(plain[:])})
	head, _, _ := s.lastEvent()
	e := *head
	e.Metadata.Files["p/"] = old
	e.Metadata.Stamps = nil
	e.Hash = ChainHash(e)
	line, _ := json.Marshal(e)
	log, _ := os.ReadFile(s.EventsPath())
	lines := bytes.SplitAfter(bytes.TrimSuffix(log, []byte("\n")), []byte("\n"))
	var out []byte
	for _, l := range lines[:len(lines)-1] {
		out = append(out, l...)
	}
	out = append(append(out, line...), '\n')
	os.WriteFile(s.EventsPath(), out, 0o644)
	s.writeAnchor(&e)
	if d, _, err := s.CheckDrift(false); err != nil || len(d) != 0 {
		t.Fatalf("an unchanged long prompt override is reported as drift after the upgrade: %+v %v", d, err)
	}
}
