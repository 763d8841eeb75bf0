//go:build linux && (amd64 || arm64)

package lineage

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func TestJudge(t *testing.T) {
	root := procStat{proc: proc{pid: 10, start: 100}, comm: "sh"}
	shell := procStat{proc: proc{pid: 20, start: 200}, comm: "sh"}
	mk := procStat{proc: proc{pid: 30, start: 300}, comm: "make"}
	caller := procStat{proc: proc{pid: 40, start: 400}, comm: "baton"}
	for _, c := range []struct {
		name    string
		chain   []procStat
		execs   map[int]record
		tainted bool
		isBaton bool
		want    Kind
		reason  string
	}{
		{name: "the root calls", chain: []procStat{root}, isBaton: true, want: Agent},
		{name: "the root calls, not baton", chain: []procStat{root}, want: Ran, reason: "is not baton"},
		{name: "a child of the root", chain: []procStat{caller, root}, execs: map[int]record{40: {400, 1}}, isBaton: true, want: Agent},
		{name: "through a subshell", chain: []procStat{caller, shell, root}, execs: map[int]record{40: {400, 1}}, isBaton: true, want: Agent},
		{name: "through make", chain: []procStat{caller, shell, mk, root},
			execs: map[int]record{40: {400, 1}, 20: {200, 1}, 30: {300, 1}}, isBaton: true, want: Ran, reason: `started by "make" (process 30)`},
		{name: "a fork that did not exec", chain: []procStat{caller, root}, isBaton: true, want: Ran, reason: "did not start baton"},
		{name: "two execs", chain: []procStat{caller, root}, execs: map[int]record{40: {400, 2}}, isBaton: true, want: Ran, reason: "ran 2 programs"},
		{name: "one exec, into another binary", chain: []procStat{caller, root}, execs: map[int]record{40: {400, 1}}, want: Ran, reason: "is not baton"},
		{name: "the caller's pid exec'd once before, in a former process",
			chain: []procStat{caller, root}, execs: map[int]record{40: {399, 1}}, isBaton: true, want: Ran, reason: "did not start baton"},
		{name: "the subshell's pid exec'd before, in a former process",
			chain: []procStat{caller, shell, root}, execs: map[int]record{40: {400, 1}, 20: {150, 3}}, isBaton: true, want: Agent},
		{name: "a tainted root", chain: []procStat{caller, root}, execs: map[int]record{40: {400, 1}}, tainted: true, isBaton: true, want: Ran, reason: "replaced"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := &Tree{root: root.proc, execs: c.execs, tainted: c.tainted}
			if tr.execs == nil {
				tr.execs = map[int]record{}
			}
			v := tr.judge(c.chain, c.isBaton)
			if v.Kind != c.want || !strings.Contains(v.Reason, c.reason) || (v.Kind == Agent) != (v.Reason == "") {
				t.Errorf("%v %q, want %v with %q", v.Kind, v.Reason, c.want, c.reason)
			}
		})
	}
}

// The walk reaches the root only when the root's pid and start time both
// match: a process that has taken a gone root's pid is not the root.
func TestWalkNeedsTheRootsStart(t *testing.T) {
	parent, err := readStat(os.Getppid())
	if err != nil {
		t.Fatal(err)
	}
	tr := &Tree{root: parent.proc}
	if chain, ok := tr.walk(os.Getpid()); !ok || len(chain) != 2 || chain[0].pid != os.Getpid() {
		t.Errorf("walk to the parent: %v %v", chain, ok)
	}
	tr.root.start++
	if chain, ok := tr.walk(os.Getpid()); ok {
		t.Errorf("walk to a root of another start time: %v, reached", chain)
	}
	if _, ok := tr.walk(1 << 30); ok {
		t.Errorf("walk from a pid that does not exist: reached")
	}
}

// cstr is s as a NUL-terminated string at a stable address.
func cstr(s string) (uint64, []byte) {
	b := append([]byte(s), 0)
	return uint64(uintptr(unsafe.Pointer(&b[0]))), b
}

func TestRefusal(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("exe", 0o755)
	write("data", 0o644)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("exe", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dfd)
	efd, err := unix.Open(filepath.Join(dir, "exe"), unix.O_PATH, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(efd)
	pid := os.Getpid()
	for _, c := range []struct {
		path  string
		at    bool
		dirfd int
		flags int
		want  unix.Errno
	}{
		{path: filepath.Join(dir, "exe")},
		{path: filepath.Join(dir, "none"), want: unix.ENOENT},
		{path: filepath.Join(dir, "data"), want: unix.EACCES},
		{path: filepath.Join(dir, "sub"), want: unix.EACCES},
		{path: filepath.Join(dir, "exe", "x"), want: unix.ENOTDIR},
		{path: "exe"},
		{path: "./sub/../exe"},
		{path: "none", want: unix.ENOENT},
		{path: "", want: unix.ENOENT},
		{path: "link"},
		{path: "/proc/self/exe"},
		{path: "link", at: true, dirfd: unix.AT_FDCWD, flags: unix.AT_SYMLINK_NOFOLLOW, want: unix.ELOOP},
		{path: "exe", at: true, dirfd: dfd},
		{path: "data", at: true, dirfd: dfd, want: unix.EACCES},
		{path: "exe", at: true, dirfd: 1 << 20, want: unix.EBADF},
		{path: "x", at: true, dirfd: efd, want: unix.ENOTDIR},
		{path: "", at: true, dirfd: efd, flags: unix.AT_EMPTY_PATH | unix.AT_SYMLINK_NOFOLLOW},
		{path: "", at: true, dirfd: dfd, flags: unix.AT_EMPTY_PATH, want: unix.EACCES},
		{path: "", at: true, dirfd: efd, want: unix.ENOENT},
		{path: strings.Repeat("a/", pathMax/2), want: unix.ENAMETOOLONG},
	} {
		addr, keep := cstr(c.path)
		call := execCall{at: c.at, dirfd: unix.AT_FDCWD, path: addr, flags: c.flags}
		if c.at {
			call.dirfd = int32(c.dirfd)
		}
		path, e, known := refusal(pid, pid, call)
		runtime.KeepAlive(keep)
		if !known || e != c.want || (e != unix.ENAMETOOLONG && path != c.path) {
			t.Errorf("%+v: %q %v (known %v), want %v", c, path, e, known, c.want)
		}
	}
}

func TestReadPath(t *testing.T) {
	pid := os.Getpid()
	if _, e, known := readPath(pid, 0); !known || e != unix.EFAULT {
		t.Errorf("NULL: %v %v, want EFAULT", e, known)
	}
	if _, e, known := refusal(pid, pid, execCall{at: true, flags: unix.AT_EMPTY_PATH}); known {
		t.Errorf("NULL with AT_EMPTY_PATH: %v, want unknown", e)
	}
	page := unix.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 2*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	if _, _, e := unix.Syscall(unix.SYS_MUNMAP, uintptr(unsafe.Pointer(&mem[page])), uintptr(page), 0); e != 0 {
		t.Fatal(e)
	}
	for i := range page {
		mem[i] = 'a'
	}
	base := uint64(uintptr(unsafe.Pointer(&mem[0])))
	if _, e, known := readPath(pid, base+100); !known || e != unix.EFAULT {
		t.Errorf("a string that runs into an unmapped page: %v %v, want EFAULT", e, known)
	}
	mem[page-1] = 0
	if p, e, known := readPath(pid, base+100); !known || e != 0 || p != strings.Repeat("a", page-101) {
		t.Errorf("a string that ends at the page's end: %d bytes, %v %v", len(p), e, known)
	}
}

func TestAtLeast(t *testing.T) {
	for rel, want := range map[string]bool{
		"5.4.0-150-generic": false, "5.5.0": true, "6.18.44-fc-v669": true, "4.19.1": false,
		"10.0": true, "5": false, "": false,
	} {
		if got := atLeast(rel, 5, 5); got != want {
			t.Errorf("%q: %v, want %v", rel, got, want)
		}
	}
}
