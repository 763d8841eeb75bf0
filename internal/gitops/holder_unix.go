//go:build unix

package gitops

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// processGone says whether no process of id pid runs (a zombie, killed and
// not yet waited for, has ended too).
func processGone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	state, _ := procStat(pid, 0)
	return state == "Z"
}

// processStart is when process pid started, in the system's clock ticks
// since boot ("" where /proc does not tell): with the id, it names one
// process, whose id a later one may reuse.
func processStart(pid int) string {
	start, _ := procStat(pid, 19)
	return start
}

// procStat is field i of /proc/PID/stat counted from the state (field 3,
// after the command's name in parentheses, which may hold spaces).
func procStat(pid, i int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if i >= len(f) {
		return "", false
	}
	return f[i], true
}
