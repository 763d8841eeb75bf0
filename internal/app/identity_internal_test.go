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

// What os/user's pure-Go findUserId (Go 1.26 os/user/lookup_unix.go)
// gives for the running uid, against passwdHome.
func TestPasswdHomeLikeOSUser(t *testing.T) {
	uid := strconv.Itoa(os.Getuid())
	for _, tc := range []struct {
		name, file, want string
		ok               bool
	}{
		{"comment first", "#old:x:" + uid + ":0::/home/old:/bin/sh\nme:x:" + uid + ":0::/home/me:/bin/sh\n", "/home/me", true},
		{"indented comment", "  #old:x:" + uid + ":0::/home/old:/bin/sh\nme:x:" + uid + ":0::/home/me:/bin/sh\n", "/home/me", true},
		{"indented +nis", "  +nis:x:" + uid + ":0::/home/nis:/bin/sh\nme:x:" + uid + ":0::/home/me:/bin/sh\n", "/home/me", true},
		{"empty name", ":x:" + uid + ":0::/home/anon:/bin/sh\nme:x:" + uid + ":0::/home/me:/bin/sh\n", "/home/me", true},
		{"bad gid", "a:x:" + uid + ":zz::/home/a:/bin/sh\nme:x:" + uid + ":0::/home/me:/bin/sh\n", "/home/me", true},
		{"duplicate", "a:x:" + uid + ":0::/home/a:/bin/sh\nme:x:" + uid + ":0::/home/me:/bin/sh\n", "/home/a", true},
		{"empty home", "me:x:" + uid + ":0:::/bin/sh\n", "", true},
		{"six fields", "me:x:" + uid + ":0::/home/me\n", "", false},
		{"blank lines, CRLF", "\n\r\nme:x:" + uid + ":0::/home/me:/bin/sh\r\n", "/home/me", true},
	} {
		h, ok := passwdHome([]byte(tc.file), nil)
		if h != tc.want || ok != tc.ok {
			t.Errorf("%s: passwdHome = %q, %v; os/user gives %q, %v", tc.name, h, ok, tc.want, tc.ok)
		}
	}
}
