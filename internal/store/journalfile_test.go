package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
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

// A journal padded to whole blocks (as the ready file is written, so that
// it mostly keeps its size) reads back as the journal itself, in both
// forms; the padding is white space at the end of its JSON.
func TestJournalPadded(t *testing.T) {
	withPatch := journal{Files: []journalEntry{}, Patches: []patchEntry{{Dst: "/a", Off: 7, Data: []byte("x\ny"), Size: 9, Hash: "h"}}, Append: &appendEntry{Path: "/l", Offset: 3, Data: []byte("e\n")}}
	plain := journal{Files: []journalEntry{{Tmp: "t", Dst: "d", Hash: "h"}}}
	for _, j := range []journal{withPatch, plain} {
		pieces := journalPieces(j)
		file := bytes.Join(pieces, nil)
		padded := bytes.Join(padJournal(pieces), nil)
		if len(padded)%journalBlock != 0 || len(padded) < len(file) || len(padded)-len(file) >= journalBlock {
			t.Fatalf("%d bytes padded to %d", len(file), len(padded))
		}
		if !bytes.Equal(bytes.Join(pieces, nil), file) {
			t.Fatal("padding changed the pieces it was given")
		}
		want, err := decodeJournal(file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeJournal(padded)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("padded journal read back %+v, %v; want %+v", got, err, want)
		}
	}
	exact := [][]byte{bytes.Repeat([]byte{' '}, journalBlock-2), []byte("{}")}
	if got := padJournal(exact); len(got[0]) != journalBlock-2 {
		t.Error("a journal of whole blocks was padded")
	}
}

// The files a store's journals are written into hold whole blocks: the
// next journal, of about the same length, is written over one without
// changing its size.
func TestJournalFilesWholeBlocks(t *testing.T) {
	s, _ := newBig(t)
	for i := 0; i < 4; i++ {
		if err := s.Update(context.Background(), func(tx *Tx) error {
			tx.Write("small.json", []byte(fmt.Sprintf("{\"a\": %d}\n", i)))
			tx.Log(Event{Type: "task"})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, p := range []string{s.journalReady(), s.journalSpare()} {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		n++
		if fi.Size()%journalBlock != 0 {
			t.Errorf("%s holds %d bytes, not whole blocks of %d", p, fi.Size(), journalBlock)
		}
	}
	if n == 0 {
		t.Fatal("no journal file kept for the next commit")
	}
}
