package gitops

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Every lock baton takes (of a ref, packed-refs, an index, a worktree's
// HEAD) holds baton's marker (batonLock) and then names its holder: its
// process id, that process's start time where the system tells it
// (Linux), and its host with its process-id namespace —
//
//	baton: writing the index
//	pid 4242 start 1234567 host build-1/pid:[4026531836]
//
// A lock holding the marker is removed as a killed baton's (killedLock)
// only when its holder is gone: the host (and namespace) is this one and
// no process of that id and start time runs. So two batons writing one repository (each
// with its own state directory, under its own state lock) never remove
// each other's live locks, nor does baton remove a lock it holds itself;
// a lock of another host is kept, and refused like a git process's. A
// lock with the marker alone is an older baton's, removed as before.

// ownLockMarker is the content of a lock this process takes.
var ownLockMarker = markerOf(os.Getpid())

func lockMarker() string { return ownLockMarker }

// markerOf is the content of a lock process pid of this host takes.
func markerOf(pid int) string {
	start := processStart(pid)
	if start == "" {
		start = "-" // the system does not tell
	}
	return fmt.Sprintf("%spid %d start %s host %s\n", batonLock, pid, start, hostName())
}

// hostName is this host's name as a lock names it, one word, with the
// process-id namespace where the system tells it (a container sharing the
// repository with the host, or with another container, numbers its
// processes apart): "build-1" or "build-1/pid:[4026531836]".
func hostName() string {
	host, _ := os.Hostname()
	host = strings.Join(strings.Fields(host), "_")
	if ns, err := os.Readlink("/proc/self/ns/pid"); err == nil && !strings.ContainsAny(ns, " \t\n") {
		host += "/" + ns
	}
	return host
}

// killedLock says whether the lock file at path was left by a baton
// process that is gone: it holds baton's marker, and the holder it names
// (if any) no longer runs on this host.
func killedLock(path string) bool {
	rest, ok := strings.CutPrefix(lockContent(path), batonLock)
	return ok && holderGone(rest)
}

// holderGone says whether the holder a lock names after baton's marker
// ("pid N start S host H\n"; "" for an older baton's lock) is gone. A
// holder it cannot read is taken to be alive.
func holderGone(holder string) bool {
	if holder == "" {
		return true
	}
	f := strings.Fields(holder)
	if len(f) != 6 || f[0] != "pid" || f[2] != "start" || f[4] != "host" || !strings.HasSuffix(holder, "\n") {
		return false
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil || pid <= 0 {
		return false
	}
	if f[5] != hostName() {
		return false // another host's process: baton cannot tell
	}
	if processGone(pid) {
		return true
	}
	start := processStart(pid)
	return start != "" && f[3] != "-" && start != f[3] // the id is another process's now
}
