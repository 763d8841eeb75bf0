package store

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// A journal with patches keeps their data after its JSON line, as it is
// (no base64), and reads back the same; one without patches, and one
// written with the data in the JSON, read as before; a file whose data
// does not add up to the lengths recorded is unreadable, never a patch of
// other bytes.
func TestJournalFile(t *testing.T) {
	big := bytes.Repeat([]byte("{\"fix_id\":1,\"n\":\"a\\nb\"},\n"), 4000)
	j := journal{
		Files:   []journalEntry{{Tmp: "t", Dst: "d", Hash: "h"}},
		Patches: []patchEntry{{Dst: "/a", Off: 7, Data: big, Size: 9, Hash: "x"}, {Dst: "/b", Off: 3, Data: []byte{}, Size: 3}, {Dst: "/c", Data: []byte("\n\n")}},
		Append:  &appendEntry{},
	}
	file := bytes.Join(journalPieces(j), nil)
	if bytes.Contains(file, []byte(`"data":"`)) || !bytes.Contains(file, big) {
		t.Fatal("the patches' data is not kept after the JSON line as it is")
	}
	got, err := decodeJournal(file)
	if err != nil || len(got.Patches) != 3 || !bytes.Equal(got.Patches[0].Data, big) || len(got.Patches[1].Data) != 0 || string(got.Patches[2].Data) != "\n\n" || got.Blobs != nil {
		t.Fatalf("read back: %v, %+v", err, got.Patches)
	}
	got.Patches[0].Data, j.Patches[0].Data = nil, nil
	got.Patches[1].Data, j.Patches[1].Data = nil, nil
	got.Patches[2].Data, j.Patches[2].Data = nil, nil
	if !reflect.DeepEqual(got, j) {
		t.Fatalf("read back %+v, want %+v", got, j)
	}
	plain := journal{Files: []journalEntry{{Tmp: "t", Dst: "d"}}}
	if p := journalPieces(plain); len(p) != 1 || bytes.Contains(p[0], []byte("\n")) {
		t.Fatalf("a journal without patches is not JSON alone: %q", p)
	}
	old, _ := json.Marshal(journal{Patches: []patchEntry{{Dst: "/a", Off: 1, Data: []byte("xyz"), Size: 4}}})
	indented, _ := json.MarshalIndent(journal{Patches: []patchEntry{{Dst: "/a", Data: []byte("q")}}}, "", "  ")
	for _, c := range []struct {
		name string
		file []byte
		want string // the first patch's data; "!" unreadable
	}{
		{"data in the JSON", old, "xyz"},
		{"indented JSON", indented, "q"},
		{"data cut short", file[:len(file)-1], "!"},
		{"data too long", append(append([]byte(nil), file...), 'x'), "!"},
		{"lengths without data", []byte(`{"files":[],"patches":[{"dst":"/a","off":0,"size":1}],"blobs":[1]}`), "!"},
		{"more lengths than patches", []byte("{\"files\":[],\"patches\":[{\"dst\":\"/a\"}],\"blobs\":[1,1]}\nab"), "!"},
		{"a length and data in the JSON", []byte("{\"files\":[],\"patches\":[{\"dst\":\"/a\",\"data\":\"eA==\"}],\"blobs\":[1]}\ny"), "!"},
		{"a negative length", []byte("{\"files\":[],\"patches\":[{\"dst\":\"/a\"}],\"blobs\":[-1]}\n"), "!"},
		{"garbage", []byte("this is not a journal\n"), "!"},
	} {
		got, err := decodeJournal(c.file)
		switch {
		case c.want == "!" && err == nil:
			t.Errorf("%s: read as a journal: %+v", c.name, got)
		case c.want != "!" && (err != nil || len(got.Patches) == 0 || string(got.Patches[0].Data) != c.want):
			t.Errorf("%s: %v, %+v; want data %q", c.name, err, got.Patches, c.want)
		}
	}
}
