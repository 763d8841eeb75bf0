package store

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// The stamps are written as encoding/json would write them, and read
// back as it would read them; a layout of another writer is left to
// encoding/json.
func TestJoinSplitStamps(t *testing.T) {
	stamps := map[string]stamp{
		"progress.json": {ID: "1:2:3", Hash: "sha256-blocks:ab", Facts: json.RawMessage(`{"sessions":{"count":3}}`), Blocks: blocksJSON(bytes.Repeat([]byte{7}, 96))},
		"a<b>&\"c\"":    {ID: "x", Hash: "h", HashOnly: true},
	}
	files, err := json.Marshal(stamps)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"", "e3b0c442", "odd \"quoted\" <event>"} {
		seal := sealOf(ev, files)
		want, _ := json.Marshal(stampsRaw{Event: ev, Seal: seal, Files: files})
		got := joinStamps(ev, seal, files)
		if !bytes.Equal(got, want) {
			t.Fatalf("joinStamps:\n%s\nencoding/json:\n%s", got, want)
		}
		raw, ok := splitStamps(got)
		var ref stampsRaw
		if err := json.Unmarshal(got, &ref); err != nil {
			t.Fatal(err)
		}
		if ok && (raw.Event != ref.Event || raw.Seal != ref.Seal || !bytes.Equal(raw.Files, ref.Files)) {
			t.Fatalf("splitStamps read %+v, encoding/json %+v", raw, ref)
		}
		if !ok && !bytes.ContainsAny([]byte(ev), `"\`) {
			t.Fatalf("splitStamps did not read what joinStamps wrote: %s", got)
		}
		if sf, ok := decodeStamps(got); !ok || sf.Event != ev || len(sf.Files) != len(stamps) {
			t.Fatalf("decodeStamps did not read what joinStamps wrote: %+v %v", sf, ok)
		}
	}
	// any other bytes: decoded as encoding/json alone decodes them
	sealed := func(ev, files string) string {
		return `{"event":"` + ev + `","seal":"` + sealOf(ev, []byte(files)) + `","files":` + files + `}`
	}
	for _, other := range []string{
		`{"seal":"s","event":"e","files":{}}`, `{"event":"e","seal":"s","files":{}`, `{"event":"e", "seal":"s","files":{}}`, ``,
		`{"event":"e\"","seal":"s","files":{}}`, sealed("e", `{}`), sealed("e", `{} `), sealed("e", `{}}`), sealed("e", `{"a":{"id":"1"}}`),
		sealed("e", `null`), sealed("e", `{"a":{"id":"1"}`), sealed("", `{}`), sealed("e", `{"a":{"id":"1"}},"files":{}`),
		string(joinStamps("e", sealOf("e", files), files)) + " ", string(joinStamps("e", "", files)),
	} {
		got, gok := decodeStamps([]byte(other))
		want, wok := refDecodeStamps([]byte(other))
		// never stamps encoding/json would not read, nor others
		if gok && (!wok || got.Event != want.Event || got.Seal != want.Seal || !reflect.DeepEqual(got.Files, want.Files)) {
			t.Errorf("%s: decoded %+v %v, encoding/json alone %+v %v", other, got, gok, want, wok)
		}
	}
}

// refDecodeStamps is decodeStamps with encoding/json alone.
func refDecodeStamps(b []byte) (sf stampsFile, ok bool) {
	var raw stampsRaw
	if json.Unmarshal(b, &raw) != nil || raw.Seal == "" {
		return sf, false
	}
	if raw.Seal != sealOf(raw.Event, raw.Files) || json.Unmarshal(raw.Files, &sf.Files) != nil {
		return stampsFile{}, false
	}
	sf.Event, sf.Seal = raw.Event, raw.Seal
	return sf, true
}

// A store's stamps written and loaded again are the stamps written.
func TestStampsRoundTrip(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	if err := os.MkdirAll(s.BatonDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	in := map[string]stamp{"reviews.json": {ID: "1:2", Hash: "sha256-blocks:cd", Blocks: blocksJSON(bytes.Repeat([]byte{9}, 64))}}
	s.writeStamps("ev", in)
	sf, ok := s.loadStamps()
	if !ok || sf.Event != "ev" || len(sf.Files) != 1 || !bytes.Equal(sf.Files["reviews.json"].Blocks, in["reviews.json"].Blocks) || sf.Files["reviews.json"].ID != "1:2" {
		t.Fatalf("loaded %+v, %v", sf, ok)
	}
}
