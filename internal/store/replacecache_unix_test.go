//go:build unix

package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// The cache readers write is replaced through its spare: after the first
// writes no file is created (the two inodes alternate), and concurrent
// writers never leave it, nor let a reader see it, half-written.
func TestReplaceCache(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cache.json")
	spare := path + ".spare"
	inodes := map[uint64]bool{}
	for i := range 6 {
		if err := replaceCache(spare, path, []byte(fmt.Sprintf(`{"n":%d}`, i))); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		inodes[fi.Sys().(*syscall.Stat_t).Ino] = true
		if b, _ := os.ReadFile(path); string(b) != fmt.Sprintf(`{"n":%d}`, i) {
			t.Fatalf("write %d: the cache holds %q", i, b)
		}
	}
	if len(inodes) > 3 {
		t.Errorf("%d files made for 6 writes: the spare is not reused", len(inodes))
	}

	// concurrent writers of sealed notes: every note a reader takes (its
	// seal holds) is one of them whole, and the last one left is whole
	s := New(dir)
	if err := os.MkdirAll(s.BatonDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	contents := map[string]bool{}
	var wg sync.WaitGroup
	for w := range 8 {
		body := []byte(fmt.Sprintf(`{"f%d":{"id":"%s"}}`, w, bytes.Repeat([]byte{byte('a' + w)}, 1000+w*3000)))
		contents[string(body)] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				_ = replaceCache(s.validatedPath()+".spare", s.validatedPath(), sealedNote(bytes.Clone(body)))
			}
		}()
	}
	stop := make(chan struct{})
	bad := make(chan string, 1)
	go func() {
		defer close(bad)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if recs := s.readValidated(); len(recs) > 1 {
				bad <- fmt.Sprintf("%d records", len(recs))
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	if msg, ok := <-bad; ok {
		t.Fatalf("a reader took a torn note: %s", msg)
	}
	b, _ := os.ReadFile(s.validatedPath())
	body, _, _ := bytes.Cut(b, []byte("\n"))
	if !contents[string(body)] || len(s.readValidated()) != 1 {
		t.Fatalf("the note left is not one written whole (%d bytes)", len(b))
	}
}

// A note whose JSON was changed after it was sealed (torn by a rewrite a
// slow reader saw, here edited) is no note.
func TestTornNoteIsNoNote(t *testing.T) {
	s := New(t.TempDir())
	if err := os.MkdirAll(s.BatonDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"progress.json":{"id":"1:2:3:4:5"}}`)
	note := sealedNote(bytes.Clone(body))
	if err := os.WriteFile(s.validatedPath(), note, 0o644); err != nil {
		t.Fatal(err)
	}
	if len(s.readValidated()) != 1 {
		t.Fatal("a sealed note is not read")
	}
	torn := bytes.Replace(note, []byte(`"1:2`), []byte(`"9:2`), 1)
	if err := os.WriteFile(s.validatedPath(), torn, 0o644); err != nil {
		t.Fatal(err)
	}
	if len(s.readValidated()) != 0 {
		t.Fatal("a note whose JSON no longer matches its seal is read")
	}
}
