package store

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestReadAllInto reads a file whole into a buffer made before, when it
// has room, and into a new one when it has not (a file grown since).
func TestReadAllInto(t *testing.T) {
	content := bytes.Repeat([]byte("0123456789abcdef"), 5000) // 80,000 bytes
	path := filepath.Join(t.TempDir(), "progress.json")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		buf    []byte
		hint   int64 // the size the caller expects
		inRoom bool
	}{
		{"room to spare", make([]byte, 0, 100_000), int64(len(content)), true},
		{"room for exactly the file", make([]byte, 0, len(content)+1), int64(len(content)), true},
		{"a byte short", make([]byte, 0, len(content)), int64(len(content)), false},
		{"no buffer", nil, int64(len(content)), false},
		{"grown past the size expected", make([]byte, 0, 50_001), 50_000, false},
		{"a buffer with old bytes", append(make([]byte, 0, 100_000), "stale"...), int64(len(content)), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := readAllInto(f, c.hint, c.buf)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, content) {
				t.Fatalf("read %d bytes, not the file's %d", len(got), len(content))
			}
			if inRoom := cap(c.buf) > 0 && &got[:1][0] == &c.buf[:1][0]; inRoom != c.inRoom {
				t.Errorf("read into the buffer given: %v, want %v", inRoom, c.inRoom)
			}
		})
	}
}

// TestRoomHandedOutOnce gives each tracked file of up to copyLimit bytes a
// buffer with room for the file, once; a transaction lets go of the rest.
func TestRoomHandedOutOnce(t *testing.T) {
	dir := t.TempDir()
	s := New(dir)
	s.Tracked = []string{"progress.json", "reviews.json", "gone.json", "git:main", ".baton/dir/"}
	if err := os.WriteFile(filepath.Join(dir, "progress.json"), make([]byte, 30_000), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "reviews.json"), make([]byte, copyLimit+1), 0o644); err != nil {
		t.Fatal(err)
	}
	s.makeRoom()
	if b := s.takeRoom("progress.json"); len(b) != 0 || cap(b) < 30_001 {
		t.Errorf("progress.json: a buffer of length %d, capacity %d; want an empty one with room for the file", len(b), cap(b))
	}
	if b := s.takeRoom("progress.json"); b != nil {
		t.Error("progress.json's buffer handed out twice")
	}
	for _, n := range []string{"reviews.json", "gone.json", "git:main", ".baton/dir/"} {
		if b := s.takeRoom(n); b != nil {
			t.Errorf("%s: a buffer (%d bytes), though the drift check does not read it whole", n, cap(b))
		}
	}
	s.makeRoom()
	s.dropRoom()
	if b := s.takeRoom("progress.json"); b != nil {
		t.Error("a buffer kept after dropRoom")
	}
}
