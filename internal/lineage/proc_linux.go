//go:build linux && (amd64 || arm64)

package lineage

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// proc names one process for its lifetime: a pid is reused once its
// process is gone, its start time with it is not.
type proc struct {
	pid   int
	start uint64 // clock ticks after boot
}

// procStat is what /proc/PID/stat says of a process.
type procStat struct {
	proc
	ppid    int
	comm    string
	cminflt uint64 // page faults of the children it has reaped
}

// readStat reads /proc/PID/stat. The command name may hold spaces and
// parentheses, so the fields are counted from the last ')'.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	i, j := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if i < 0 || j < i {
		return procStat{}, errors.New("lineage: unreadable /proc stat")
	}
	f := strings.Fields(string(b[j+1:]))
	if len(f) < 20 {
		return procStat{}, errors.New("lineage: short /proc stat")
	}
	s := procStat{proc: proc{pid: pid}, comm: string(b[i+1 : j])}
	var e1, e2, e3 error
	s.ppid, e1 = strconv.Atoi(f[1])
	s.cminflt, e2 = strconv.ParseUint(f[8], 10, 64)
	s.start, e3 = strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(e1, e2, e3); err != nil {
		return procStat{}, err
	}
	return s, nil
}

// threadGroup is the process of thread tid: tid itself when it leads its
// thread group (pidfd_open takes only leaders), else the Tgid of
// /proc/TID/status.
func threadGroup(tid int) (int, error) {
	if fd, err := unix.PidfdOpen(tid, 0); err == nil {
		unix.Close(fd)
		return tid, nil
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, errors.New("lineage: no Tgid in /proc status")
}

// fileID names a file by device and inode.
type fileID struct{ dev, ino uint64 }

func statID(path string) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return fileID{}, err
	}
	return fileID{uint64(st.Dev), st.Ino}, nil
}

// view is how a process sees the file system: two processes with the same
// view resolve a path to the same file. Rights need no comparing: with
// no_new_privs, no process of the agent's tree may reach more than the
// launcher that started it.
type view struct{ mnt, root fileID }

// viewOf reads the view of the process pid.
func viewOf(pid int) (view, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	mnt, err := statID(dir + "/ns/mnt")
	if err != nil {
		return view{}, err
	}
	root, err := statID(dir + "/root")
	if err != nil {
		return view{}, err
	}
	return view{mnt: mnt, root: root}, nil
}

// hasChild says whether any process's parent is pid, reaped children
// aside, and children running the program except (baton's own: the egress
// forwarder the helper starts before it becomes the agent; a process the
// agent forks after that settles the root with its exec).
func hasChild(pid int, except fileID) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true // cannot tell: the safe answer
	}
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n == pid {
			continue
		}
		if s, err := readStat(n); err == nil && s.ppid == pid {
			if exe, err := statID("/proc/" + e.Name() + "/exe"); err == nil && exe == except {
				continue // baton's own helper process (the egress forwarder), started before the agent
			}
			return true
		}
	}
	return false
}
