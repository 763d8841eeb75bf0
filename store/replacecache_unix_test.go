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

	contents := map[string]bool{}
	var wg sync.WaitGroup
	for w := range 8 {
		c := bytes.Repeat([]byte{byte('a' + w)}, 1000+w*3000)
		contents[string(c)] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				_ = replaceCache(spare, path, c)
			}
		}()
	}
	stop := make(chan struct{})
	torn := make(chan string, 1)
	go func() {
		for {
			select {
			case <-stop:
				close(torn)
				return
			default:
			}
			if b, err := os.ReadFile(path); err == nil && !contents[string(b)] && string(b) != `{"n":5}` {
				torn <- fmt.Sprintf("%d bytes", len(b))
				close(torn)
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	if s, ok := <-torn; ok {
		t.Fatalf("a reader saw the cache half-written: %s", s)
	}
}
