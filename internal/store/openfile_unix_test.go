//go:build unix

package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenFile: OpenFile opens as os.OpenFile does (a missing file is a
// *PathError satisfying fs.ErrNotExist, a created file gets its mode, the
// access mode holds), returns at once for a FIFO opened with O_NONBLOCK,
// and leaves every descriptor blocking, so that os.NewFile keeps it out of
// the runtime's poller.
func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	_, err := OpenFile(filepath.Join(dir, "missing"), os.O_RDONLY, 0)
	var pe *os.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) {
		t.Fatalf("a missing file: %v, want a *PathError of fs.ErrNotExist", err)
	}
	p := filepath.Join(dir, "f")
	f, err := OpenFile(p, os.O_WRONLY|os.O_CREATE|noFollow|nonBlock, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	blocking(t, f, "a file opened with O_NONBLOCK")
	if _, err := f.WriteAt([]byte("abc"), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("created file: %v, %v; want mode 0600", fi, err)
	}
	r, err := OpenFile(p, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	blocking(t, r, "a file opened read-only")
	if _, err := r.Write([]byte("x")); err == nil {
		t.Error("a file opened read-only took a write")
	}
	b := make([]byte, 3)
	if _, err := r.ReadAt(b, 0); err != nil || string(b) != "abc" {
		t.Errorf("read %q, %v", b, err)
	}
	r.Close()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	q, err := OpenFile(fifo, os.O_RDONLY|nonBlock, 0) // no writer: would block without O_NONBLOCK
	if err != nil {
		t.Fatal(err)
	}
	blocking(t, q, "a FIFO opened with O_NONBLOCK")
	q.Close()
}

func blocking(t *testing.T, f *os.File, what string) {
	t.Helper()
	rc, err := f.SyscallConn() // not f.Fd(), which would make it blocking
	if err != nil {
		t.Fatal(err)
	}
	var flags uintptr
	var e syscall.Errno
	if err := rc.Control(func(fd uintptr) { flags, _, e = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0) }); err != nil || e != 0 {
		t.Fatal(err, e)
	}
	if flags&syscall.O_NONBLOCK != 0 {
		t.Errorf("%s: the descriptor is non-blocking", what)
	}
}
