package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/baton-cli/baton/internal/cli"
	"github.com/baton-cli/baton/internal/store"
)

// TestFaultAtEachStepOfAFirstWrite fails each step of the commit path
// (an I/O error) in the first write at a path no write was made at before:
// `baton init` in a new directory, the first write after a project was
// moved, the first write in a copy of it. Whatever failed, the project is
// never bricked: the command run again succeeds, the next write too,
// verify finds nothing wrong, and the anchors outside the project are
// whole.
func TestFaultAtEachStepOfAFirstWrite(t *testing.T) {
	defer store.SetFaultHook(nil)
	for _, kind := range []string{"init", "moved", "copy"} {
		for _, step := range store.CommitSteps {
			t.Run(kind+"/"+step, func(t *testing.T) {
				root := t.TempDir()
				home := filepath.Join(root, "home")
				run := func(dir string, args ...string) (int, string) { return batonHome(dir, home, args...) }
				must := func(dir string, args ...string) {
					t.Helper()
					if code, out := run(dir, args...); code != 0 {
						t.Fatalf("baton %v: exit %d\n%s", args, code, out)
					}
				}
				base, dir := filepath.Join(root, "base"), filepath.Join(root, "here")
				args := asPerson("progress", "add-session", "-a", "IMPLEMENT", "-s", "first write here", "-o", "SUCCESS")
				switch kind {
				case "init":
					args = []string{"init"}
					if err := os.MkdirAll(dir, 0o755); err != nil {
						t.Fatal(err)
					}
				default:
					if err := os.MkdirAll(base, 0o755); err != nil {
						t.Fatal(err)
					}
					must(base, "init")
					must(base, asPerson("progress", "add-session", "-a", "IMPLEMENT", "-s", "before", "-o", "SUCCESS")...)
					copyTree(t, base, dir)
					if kind == "moved" {
						if err := os.RemoveAll(base); err != nil {
							t.Fatal(err)
						}
					}
				}
				fired := failOnce(step, syscall.EIO)
				code, out := run(dir, args...)
				store.SetFaultHook(nil)
				if !*fired {
					t.Fatalf("step %s was never reached (exit %d)\n%s", step, code, out)
				}
				if code != 0 {
					must(dir, args...) // run again after a failure
				}
				must(dir, asPerson("progress", "add-session", "-a", "IMPLEMENT", "-s", "the next write", "-o", "SUCCESS")...)
				must(dir, "verify")
				wholeAnchors(t, home)
			})
		}
	}
}

// batonHome runs baton in-process in dir as batonIn does, with the
// person's home (and so the anchors outside the project) at home.
func batonHome(dir, home string, args ...string) (int, string) {
	var out bytes.Buffer
	cfg := home + ".config"
	if err := os.MkdirAll(filepath.Join(cfg, "baton"), 0o700); err == nil {
		_ = os.WriteFile(filepath.Join(cfg, "baton", "key"), []byte(testKey+"\n"), 0o600)
	}
	env := map[string]string{"BATON_STATE_DIR": dir, "HOME": home, "XDG_CONFIG_HOME": cfg}
	e := cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Cwd: dir, Now: time.Now,
		Getenv: func(k string) string { return env[k] }}
	return cli.Main(args, e), out.String()
}

// copyTree copies the project at from to to, as 'cp -a' does.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v\n%s", from, to, err, out)
	}
}

// wholeAnchors requires every anchor outside the projects to be a JSON
// anchor with a head, never empty or cut short.
func wholeAnchors(t *testing.T, home string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(home, ".local", "state", "baton", "anchors", "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		var a struct {
			Seq  int    `json:"seq"`
			Hash string `json:"hash"`
		}
		if err != nil || json.Unmarshal(b, &a) != nil || a.Seq < 1 || a.Hash == "" {
			t.Fatalf("anchor %s is not whole: %s", f, fmt.Sprintf("%q (%v)", b, err))
		}
	}
}
