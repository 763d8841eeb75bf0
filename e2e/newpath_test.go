package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFirstWriteKilledAtANewPath kills (SIGKILL) the first write at a path
// no write was made at before — `baton init` in a new directory, the first
// write after a project was moved, the first write in a copy of it — at
// random moments, and checks that no kill bricks the project: the next
// command (init again, or the same write again) succeeds, verify finds
// nothing wrong, and every anchor outside the projects is whole.
func TestFirstWriteKilledAtANewPath(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	base := filepath.Join(root, "base")
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	at := func(dir string, args ...string) *exec.Cmd {
		c := batonCmd(dir, args...)
		c.Env = append(c.Env, "HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, ".local", "state"))
		return c
	}
	must := func(dir string, args ...string) {
		t.Helper()
		if out, err := at(dir, args...).CombinedOutput(); err != nil {
			t.Fatalf("baton %v in %s: %v\n%s", args, dir, err, out)
		}
	}
	must(base, "init", "--name", "base")
	must(base, "progress", "add-session", "-a", "IMPLEMENT", "-s", "before the move", "-o", "SUCCESS")
	write := []string{"progress", "add-session", "-a", "IMPLEMENT", "-s", "first write here", "-o", "SUCCESS"}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	took := map[string]time.Duration{}
	kills := map[string]int{}
	deadline := time.Now().Add(40 * time.Second)
	for i := 0; i < 150 && time.Now().Before(deadline); i++ {
		kind := []string{"init", "moved", "copy"}[i%3]
		dir := filepath.Join(root, fmt.Sprintf("%s-%d", kind, i))
		args := write
		switch kind {
		case "init":
			args = []string{"init", "--name", "new"}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		case "moved":
			cpTree(t, base, dir+"-was")
			if err := os.Rename(dir+"-was", dir); err != nil {
				t.Fatal(err)
			}
		case "copy":
			cpTree(t, base, dir)
		}
		c := at(dir, args...)
		start := time.Now()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		if d, ok := took[kind]; ok {
			delay := time.Duration(rng.Int64N(int64(d) * 5 / 4))
			time.AfterFunc(delay, func() { _ = c.Process.Kill() })
		}
		err := c.Wait()
		if _, ok := took[kind]; !ok { // the first of each kind runs whole: its duration
			if err != nil {
				t.Fatalf("%s: the first write, not killed: %v", kind, err)
			}
			took[kind] = time.Since(start)
		}
		if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			kills[kind]++
		}
		must(dir, args...) // the next command is never refused for what the kill left
		if kind != "init" {
			must(dir, "progress", "add-session", "-a", "IMPLEMENT", "-s", "after the kill", "-o", "SUCCESS")
		}
		if out, err := at(dir, "verify").CombinedOutput(); err != nil {
			t.Fatalf("%s %d: verify after a killed first write: %v\n%s", kind, i, err, out)
		}
		checkAnchors(t, home)
	}
	t.Logf("first writes killed: %v (uninterrupted durations %v)", kills, took)
	for _, k := range []string{"init", "moved", "copy"} {
		if kills[k] == 0 {
			t.Errorf("no first write of kind %s was killed: the loop proves nothing there", k)
		}
	}
}

// cpTree copies the project at from to to, as 'cp -a' does.
func cpTree(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v\n%s", from, to, err, out)
	}
}

// checkAnchors requires every anchor outside the projects to be whole: a
// JSON anchor with a head, never empty or cut short.
func checkAnchors(t *testing.T, home string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(home, ".local", "state", "baton", "anchors", "*"))
	for _, f := range files {
		if strings.Contains(filepath.Base(f), ".tmp") {
			continue // a temp file a killed write left beside them
		}
		b, err := os.ReadFile(f)
		var a struct {
			Seq  int    `json:"seq"`
			Hash string `json:"hash"`
		}
		if err != nil || json.Unmarshal(b, &a) != nil || a.Seq < 1 || a.Hash == "" {
			t.Fatalf("anchor %s is not whole: %q (%v)", f, b, err)
		}
	}
}
