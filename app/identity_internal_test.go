package app

import (
	"os"
	"os/user"
	"strconv"
	"testing"
)

// The account's home is read from /etc/passwd as os/user reads it without
// cgo: the line of the running uid; none when no line has it.
func TestPasswdHome(t *testing.T) {
	uid := strconv.Itoa(os.Getuid())
	b := []byte("root:x:0:0:root:/root:/bin/bash\n+nis::" + uid + ":0:::\nme:x:" + uid + ":100:Me:/home/me:/bin/sh\n")
	if h, ok := passwdHome(b, nil); !ok || h != "/home/me" && uid != "0" || uid == "0" && h != "/root" {
		t.Errorf("passwdHome = %q, %v", h, ok)
	}
	if _, ok := passwdHome([]byte("other:x:999999:0::/x:/bin/sh\n"), nil); ok {
		t.Error("a home found for a uid the file does not list")
	}
	if u, err := user.Current(); err == nil && AccountHome() != u.HomeDir {
		t.Errorf("AccountHome() = %q, os/user says %q", AccountHome(), u.HomeDir)
	}
}
