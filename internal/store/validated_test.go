package store

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A reader's record of a validation vouches for exactly the version it
// validated, for readers only.
func TestRememberValidated(t *testing.T) {
	defer func(n int64) { rememberFrom = n }(rememberFrom)
	rememberFrom = 0
	s := New(t.TempDir())
	s.Create = true
	if err := s.Update(context.Background(), func(*Tx) error { return nil }); err != nil {
		t.Fatal(err) // makes .baton/
	}
	path := s.Path("progress.json")
	write := func(body string) os.FileInfo {
		t.Helper()
		if err := os.WriteFile(path+".new", []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil { // as a checkout does
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	fi := write(`{"sessions":[]}`)
	if _, ok := s.Trusted("progress.json", fi, nil); ok {
		t.Fatal("a file nobody validated is trusted")
	}
	s.Remember("progress.json", fi, json.RawMessage(`{"sessions":{"count":0}}`))
	facts, ok := s.Trusted("progress.json", fi, nil)
	if !ok || string(facts) != `{"sessions":{"count":0}}` {
		t.Fatalf("the validated version: trusted %v, facts %s", ok, facts)
	}

	// a transaction does not take a reader's word for it
	tx := &Tx{s: s}
	if _, st, err := tx.readBase("progress.json"); err != nil || st != nil {
		tx.releaseBases()
		t.Fatalf("a transaction trusted a reader's record (%v)", err)
	}

	// any other version is not trusted: replaced, or edited in place
	fi2 := write(`{"sessions":[1]}`)
	if _, ok := s.Trusted("progress.json", fi2, nil); ok {
		t.Fatal("a replaced file is trusted on the record of the version before it")
	}
	s.Remember("progress.json", fi2, nil)
	if err := os.WriteFile(path, []byte(`{"sessions":[2]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, time.Time{}, fi2.ModTime().Add(time.Second)); err != nil {
		t.Fatal(err) // an edit within the clock's granularity keeps its change time apart
	}
	fi3, _ := os.Stat(path)
	if _, ok := s.Trusted("progress.json", fi3, nil); ok {
		t.Fatal("a file edited in place is trusted on the record of the version before the edit")
	}

	// a broken record is no record
	if err := os.WriteFile(s.validatedPath(), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Trusted("progress.json", fi2, nil); ok {
		t.Fatal("an unreadable record is trusted")
	}
}

// Without baton's directory (no state here) a reader records nothing.
func TestRememberCreatesNothing(t *testing.T) {
	defer func(n int64) { rememberFrom = n }(rememberFrom)
	rememberFrom = 0
	dir := t.TempDir()
	s := New(dir)
	path := filepath.Join(dir, "progress.json")
	if err := os.WriteFile(path, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	s.Remember("progress.json", fi, nil)
	if _, err := os.Stat(s.BatonDir()); err == nil {
		t.Fatal("a reader created .baton/")
	}
}

// A small file is validated again rather than noted.
func TestRememberSkipsSmallFiles(t *testing.T) {
	s := New(t.TempDir())
	if err := os.MkdirAll(s.BatonDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	path := s.Path("progress.json")
	if err := os.WriteFile(path, []byte(`{"sessions":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	s.Remember("progress.json", fi, nil)
	if _, ok := s.Trusted("progress.json", fi, nil); ok {
		t.Fatal("a small file was noted")
	}
	if _, err := os.Stat(s.validatedPath()); err == nil {
		t.Fatal("a note was written for a small file")
	}
}

// A reader's note pointed at an edited file of up to 1 MiB (the note is no
// secret) does not make the file trusted: its content is hashed against
// the log's record. A larger one is taken on the note (docs/security.md).
func TestNotePointedAtAnEditIsNotTrusted(t *testing.T) {
	s := stampTestStore(t)
	content := append([]byte("[\n"), bytes.Repeat([]byte("{\"id\":1},\n"), 300<<10/10)...)
	content = append(content, "{\"id\":2}\n]\n"...)
	stampTestWrite(t, s, func() {}, func([]byte) ([][]byte, int64) { return [][]byte{content}, 2 })
	edited := bytes.Replace(content, []byte(`{"id":2}`), []byte(`{"id":9}`), 1)
	if err := os.WriteFile(s.Path("f.json"), edited, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Path("f.json"))
	if err != nil {
		t.Fatal(err)
	}
	s.Remember("f.json", fi, nil) // the forged note
	if _, ok := s.Trusted("f.json", fi, nil); !ok {
		t.Fatal("the note is not even taken on identity: the test no longer reaches the check")
	}
	if _, ok := s.Trusted("f.json", fi, edited); ok {
		t.Fatal("an edited file is trusted on a note pointed at it")
	}
	if err := os.WriteFile(s.Path("f.json"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(s.Path("f.json"))
	s.Remember("f.json", fi, nil)
	if _, ok := s.Trusted("f.json", fi, content); !ok {
		t.Fatal("the recorded content, noted, is not trusted")
	}
}
