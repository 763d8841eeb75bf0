package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestMain doubles as the sandboxed launcher: with SANDBOX_TEST_POLICY set
// it applies that policy and runs its arguments.
func TestMain(m *testing.M) {
	if pol := os.Getenv("SANDBOX_TEST_POLICY"); pol != "" {
		var p Policy
		if err := json.Unmarshal([]byte(pol), &p); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(100)
		}
		fmt.Fprintln(os.Stderr, Exec(p, os.Args[1:], os.Environ()))
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
