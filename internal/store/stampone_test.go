package store

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sealed is a stamps file with files as its stamps, sealed as baton seals
// it (top, when set, is the whole file, %s standing for files and seal).
func sealed(event, files string) []byte {
	seal := sealOf(event, []byte(files))
	return []byte(`{"event":"` + event + `","seal":"` + seal + `","files":` + files + `}`)
}

// TestStampOfAgreesWithReadStamps: the one stamp a reader picks out of the
// sealed bytes is the stamp the full decode gives, for stamps files as
// baton writes them and for ones changed outside it.
func TestStampOfAgreesWithReadStamps(t *testing.T) {
	good := `{"progress.json":{"id":"1:2:3:4:5","hash":"ab","facts":{"sessions":{"count":2,"max_id":2,"last":[10,20],"span":[5,25]}},"mids":[{"at":10,"state":"c2hh"}]},"reviews.json":{"id":"1:2:9:4:5","hash":"cd","hash_only":true}}`
	cases := map[string][]byte{
		"as baton writes it":       sealed("ev", good),
		"with spaces":              sealed("ev", "{ \"progress.json\" : { \"id\" : \"7\" , \"facts\" : null } }"),
		"no seal":                  []byte(`{"event":"ev","files":` + good + `}`),
		"a seal of other content":  bytes.Replace(sealed("ev", good), []byte(`"count":2`), []byte(`"count":3`), 1),
		"another event":            bytes.Replace(sealed("ev", good), []byte(`"event":"ev"`), []byte(`"event":"ew"`), 1),
		"not JSON":                 sealed("ev", good)[:40],
		"files not an object":      sealed("ev", `["progress.json"]`),
		"files null":               sealed("ev", `null`),
		"keys in another case":     bytes.Replace(bytes.Replace(sealed("ev", good), []byte(`"files"`), []byte(`"FILES"`), 1), []byte(`"seal"`), []byte(`"Seal"`), 1),
		"a stamp's keys in case":   sealed("ev", `{"progress.json":{"ID":"7","Hash_Only":false,"FACTS":{}}}`),
		"a file stamped twice":     sealed("ev", `{"progress.json":{"id":"1"},"progress.json":{"id":"2"}}`),
		"a stamp's key twice":      sealed("ev", `{"progress.json":{"id":"1","id":"2"}}`),
		"null id":                  sealed("ev", `{"progress.json":{"id":null}}`),
		"an id not a string":       sealed("ev", `{"progress.json":{"id":7}}`),
		"hash_only not a bool":     sealed("ev", `{"progress.json":{"id":"7","hash_only":"yes"}}`),
		"a stamp not an object":    sealed("ev", `{"progress.json":"7"}`),
		"seal null":                []byte(`{"event":"ev","seal":null,"files":` + good + `}`),
		"two seals, the last good": append([]byte(`{"seal":"x",`), sealed("ev", good)[1:]...),
		"empty":                    nil,
	}
	for what, content := range cases {
		s := New(t.TempDir())
		if err := os.MkdirAll(s.BatonDir(), 0o755); err != nil {
			t.Fatal(err)
		}
		if content != nil {
			if err := os.WriteFile(filepath.Join(s.BatonDir(), stampsName), content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, key := range []string{"progress.json", "reviews.json", "feature_list.json"} {
			want, wantOK := New(s.Dir).readStamps()[key] // a fresh store: nothing parsed before
			got, _, _, gotOK := parseStampOf(content, key)
			want.Mids = nil // a reader does not use them
			wj, _ := json.Marshal(want)
			gj, _ := json.Marshal(got)
			if gotOK != wantOK || !bytes.Equal(wj, gj) {
				t.Errorf("%s, %s: stampOf gives %s %v, readStamps %s %v", what, key, gj, gotOK, wj, wantOK)
			}
		}
	}
}

// A reader computes a stamp's digest from the stamps file's bytes; it is the
// digest the writer recorded in the log (from the stamp, encoded again), for
// the stamps baton writes; and only the log's last entry vouches for one.
func TestReaderStampDigest(t *testing.T) {
	s := stampTestStore(t)
	for i := 0; i < 3; i++ {
		stampTestWrite(t, s, func() {}, func(old []byte) ([][]byte, int64) {
			if old == nil {
				old = []byte("[\n{\"id\":0,\"s\":\"<&>\"}")
			}
			return [][]byte{old, []byte(",\n{\"id\":1}")}, int64(len(old)) + 2
		})
	}
	b, _ := os.ReadFile(s.stampsPath())
	st, event, digest, ok := parseStampOf(b, "f.json")
	head, _, _ := s.lastEvent()
	if !ok || digest == "" || digest != head.Metadata.Stamps["f.json"] || event != head.Hash {
		t.Fatalf("the reader's digest %q (ok %v), the log's %q", digest, ok, head.Metadata.Stamps["f.json"])
	}
	reader := New(s.Dir) // keeps what it picked out, by the stamps' bytes
	for range 2 {
		if _, ok := reader.stampOf("f.json"); !ok {
			t.Fatal("a fresh reader does not take the stamp the log vouches for")
		}
	}
	if _, ok := s.stampOf("f.json"); !ok {
		t.Fatal("the process that wrote it does not take the stamp the log vouches for")
	}
	st.Facts = json.RawMessage(`{"a":{"count":7,"last":[2,3]}}`)
	sf, _ := s.loadStamps()
	s.writeStamps(sf.Event, map[string]stamp{"f.json": st})
	if _, ok := New(s.Dir).stampOf("f.json"); ok {
		t.Fatal("a fresh reader takes a rewritten stamp")
	}
	if _, ok := reader.stampOf("f.json"); ok {
		t.Fatal("a reader that picked the stamp out before takes it rewritten")
	}
	if _, ok := s.stampOf("f.json"); ok {
		t.Fatal("the writing process takes a rewritten stamp")
	}
}

// A process reads the log's last line once for each version of the log:
// after an append it reads the new one.
func TestLastLogLineFollowsTheLog(t *testing.T) {
	s := newTracked(t)
	logOne(t, s, false)
	reader := New(s.Dir)
	last := func() string {
		b, _ := os.ReadFile(s.EventsPath())
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		return lines[len(lines)-1]
	}
	for i := range 3 {
		for range 2 {
			if got := string(reader.lastLogLine()); got != last() {
				t.Fatalf("after %d appends: the reader's last line %.60s, the log's %.60s", i, got, last())
			}
		}
		logOne(t, s, false)
	}
}
