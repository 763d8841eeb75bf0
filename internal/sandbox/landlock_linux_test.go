package sandbox

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestMain doubles as the sandboxed launcher: with SANDBOX_TEST_POLICY set
// it applies that policy and runs its arguments.
func TestMain(m *testing.M) {
	if addr := os.Getenv("SANDBOX_TEST_DIAL"); addr != "" { // a TCP connection, inside or outside a sandbox
		c, err := net.Dial("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		c.Close()
		os.Exit(0)
	}
	if pol := os.Getenv("SANDBOX_TEST_POLICY"); pol != "" {
		var p Policy
		if err := json.Unmarshal([]byte(pol), &p); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(100)
		}
		env := os.Environ()
		if addr := os.Getenv("SANDBOX_TEST_DIAL_NEXT"); addr != "" {
			env = append(env, "SANDBOX_TEST_DIAL="+addr)
		}
		fmt.Fprintln(os.Stderr, Exec(p, os.Args[1:], env))
		os.Exit(101)
	}
	os.Exit(m.Run())
}

func TestExecConfines(t *testing.T) {
	if ABI() < MinABI {
		t.Skipf("Landlock ABI %d on this kernel: nothing to test", ABI())
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work, secret := filepath.Join(dir, "work"), filepath.Join(dir, "secret")
	for _, d := range []string{work, secret} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(secret, "key"), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := Policy{ReadWrite: []string{work, "/dev"}, ReadOnly: ReadRoots("/", []string{secret})}
	pol, _ := json.Marshal(p)
	for _, tc := range []struct {
		script string
		ok     bool
	}{
		{"echo hi > work/f && cat work/f", true},
		{"cat state.json", true},
		{"cat secret/key", false},
		{"ls secret", false},
		{"echo x > state.json", false},
		{": > state.json", false},
		{"rm state.json", false},
		{"mv state.json work/", false},
		{"ln state.json work/hard", false},
		{"mkdir newdir", false},
		{"echo x > /dev/null", true},
	} {
		t.Run(tc.script, func(t *testing.T) {
			c := exec.Command(os.Args[0], "sh", "-c", tc.script)
			c.Dir = dir
			c.Env = append(os.Environ(), "SANDBOX_TEST_POLICY="+string(pol))
			out, err := c.CombinedOutput()
			if (err == nil) != tc.ok {
				t.Errorf("%s: err %v, want ok %v; output %s", tc.script, err, tc.ok, out)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(dir, "state.json")); err != nil || string(b) != "{}" {
		t.Errorf("state.json changed: %q %v", b, err)
	}
}

// TestNoNet: NoNet cuts TCP (here: a connection to a local listener);
// without it the network stays.
func TestNoNet(t *testing.T) {
	if ABI() < 4 {
		t.Skipf("Landlock ABI %d has no network rules", ABI())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	for _, noNet := range []bool{false, true} {
		pol, _ := json.Marshal(Policy{ReadWrite: []string{"/dev"}, ReadOnly: []string{"/"}, NoNet: noNet})
		c := exec.Command(os.Args[0], os.Args[0])
		c.Env = append(os.Environ(), "SANDBOX_TEST_POLICY="+string(pol))
		// the sandboxed process runs this binary again, to connect
		c.Env = append(c.Env, "SANDBOX_TEST_DIAL_NEXT="+ln.Addr().String())
		out, err := c.CombinedOutput()
		if (err == nil) == noNet {
			t.Errorf("NoNet %v: connecting: %v (%s)", noNet, err, out)
		}
	}
}
