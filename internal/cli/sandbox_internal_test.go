package cli

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/sandbox"
)

// TestCheckCall: a brokered call reads with the person's rights, so every
// file argument of its input that leads outside the agent's clone (as a
// path, or through a link) is refused, and so are another state directory
// or file outside it and a working directory outside it. Free text (a
// summary, a specification's name) is no path.
func TestCheckCall(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	clone, secret := filepath.Join(root, "clone"), filepath.Join(root, "secret")
	for _, d := range []string{filepath.Join(clone, "sub"), secret} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{"key-link": filepath.Join(secret, "key"), "dir-link": secret, "inner-link": filepath.Join(clone, "sub")} {
		if err := os.Symlink(target, filepath.Join(clone, name)); err != nil {
			t.Fatal(err)
		}
	}
	b := &agentBox{copyReal: clone}
	for _, tc := range []struct {
		cwd   string
		op    string
		input string
		dir   string // --state-dir given
		ok    bool
	}{
		{clone, "session.end", `{"outcome": "SUCCESS", "summary": "Implemented F001 on feature/f001"}`, "", true},
		{clone, "features.append", `{"source_appspec": "app_spec.txt", "entries": "[{\"id\": \"F1\"}]"}`, "", true},
		{filepath.Join(clone, "sub"), "reviews.add-fix", `{"review_id": 1, "issues_fixed": "fixed.json", "issues_deferred": "-"}`, "", true},
		{clone, "features.append", `{"entries": "inner-link/new.json"}`, "", true},
		{clone, "features.append", `{"entries": "` + filepath.Join(secret, "key") + `"}`, "", false},
		{clone, "features.append", `{"entries": "key-link"}`, "", false},
		{clone, "features.append", `{"entries": "dir-link/new.json"}`, "", false},
		{clone, "features.append", `{"entries": "../secret/key"}`, "", false},
		{clone, "reviews.add-review", `{"agent_type": "REVIEW", "verdict": "PASS", "summary": "s", "metrics": "` + filepath.Join(secret, "m.json") + `"}`, "", false},
		{clone, "session.end", `{"outcome": "SUCCESS", "summary": "/health endpoint added"}`, "", true},
		{clone, "progress.add-session", `{"summary": "/health endpoint added", "outcome": "SUCCESS"}`, "", true},
		{clone, "features.append", `{"source_appspec": "/spec/app.txt", "entries": "new.json"}`, "", true},
		{clone, "status", "", secret, false},
		{clone, "status", "", "sub", true}, // inside: refused later, as another state directory
		{secret, "status", "", "", false},
		{"sub", "status", "", "", false},
	} {
		c := app.Call{Op: tc.op, Cwd: tc.cwd, StateDir: tc.dir}
		if tc.input != "" {
			c.Input = json.RawMessage(tc.input)
		}
		_, err := b.checkCall(c)
		if (err == nil) != tc.ok {
			t.Errorf("cwd %s, %s %s (state dir %q): %v, want ok %v", tc.cwd, tc.op, tc.input, tc.dir, err, tc.ok)
		}
	}
}

// benchProject is a git repository with baton's state, the person's key
// outside it, and an environment pointing there.
func benchProject(b *testing.B) (dir string, getenv func(string) string) {
	b.Helper()
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	dir = filepath.Join(root, "proj")
	env := map[string]string{"HOME": filepath.Join(root, "home"), "XDG_CONFIG_HOME": filepath.Join(root, "config"),
		"PATH": os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "B", "GIT_AUTHOR_EMAIL": "b@example.test",
		"GIT_COMMITTER_NAME": "B", "GIT_COMMITTER_EMAIL": "b@example.test"}
	for k, v := range env {
		b.Setenv(k, v)
	}
	if err := os.MkdirAll(filepath.Join(root, "config", "baton"), 0o700); err != nil {
		b.Fatal(err)
	}
	key := hex.EncodeToString(bytes.Repeat([]byte{7}, 32))
	if err := os.WriteFile(filepath.Join(root, "config", "baton", "key"), []byte(key+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main", dir}, {"-C", dir, "commit", "-q", "--allow-empty", "-m", "initial"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			b.Fatalf("git %q: %v %s", args, err, out)
		}
	}
	getenv = func(k string) string { return env[k] }
	if _, code := runIn(dir, getenv, "init"); code != 0 {
		b.Fatal("baton init failed")
	}
	return dir, getenv
}

func runIn(dir string, getenv func(string) string, args ...string) (string, int) {
	var out, errOut bytes.Buffer
	code := Main(args, Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: getenv, Cwd: dir, Now: time.Now})
	return out.String() + errOut.String(), code
}

// builtBaton is baton built once for the benchmarks (they time real
// process starts, which the test binary would overstate).
var builtBaton = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "baton-bench-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "baton")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/baton-cli/baton/cmd/baton").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v: %s", err, out)
	}
	return bin, nil
})

// BenchmarkSandboxSetup is the cost of confining one agent session, in
// three parts (ms/op): set-up — the clone with its branch, the policy and
// the broker's socket; start — the helper's Landlock restriction and the
// agent's start and end (the agent is true; a plain start of true is
// reported as start-bare); teardown — the import and the clone's removal.
// The target for set-up and start together is under 50 ms.
func BenchmarkSandboxSetup(b *testing.B) {
	if sandbox.ABI() < sandbox.MinABI {
		b.Skip("no Landlock on this kernel")
	}
	bin, err := builtBaton()
	if err != nil {
		b.Fatal(err)
	}
	dir, getenv := benchProject(b)
	a := newApp(Env{Stdin: strings.NewReader(""), Stdout: os.Stdout, Stderr: os.Stderr, Getenv: getenv, Cwd: dir, Now: time.Now})
	a.box = &sandboxConf{}
	ctx := context.Background()
	var setup, start, bare, teardown time.Duration
	i := 0
	for b.Loop() {
		i++
		t0 := time.Now()
		c := exec.Command("true")
		c.Env = os.Environ()
		box, err := a.openBox(ctx, step{Session: i, Role: "IMPLEMENT", Branch: "feature/f" + strconv.Itoa(i)}, false, false, false)
		if err == nil {
			err = box.wrap(c)
		}
		if err != nil {
			b.Fatal(err)
		}
		c.Path, c.Args[0] = bin, bin
		t1 := time.Now()
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("the confined agent: %v %s", err, out)
		}
		t2 := time.Now()
		box.close(ctx)
		t3 := time.Now()
		if err := exec.Command("true").Run(); err != nil {
			b.Fatal(err)
		}
		setup, start, teardown, bare = setup+t1.Sub(t0), start+t2.Sub(t1), teardown+t3.Sub(t2), bare+time.Since(t3)
	}
	n := float64(i) * float64(time.Millisecond)
	b.ReportMetric(float64(setup)/n, "set-up-ms/op")
	b.ReportMetric(float64(start)/n, "start-ms/op")
	b.ReportMetric(float64(bare)/n, "start-bare-ms/op")
	b.ReportMetric(float64(teardown)/n, "teardown-ms/op")
}

// BenchmarkBrokerCall compares a call of an agent's baton through its
// sandbox's broker with the same call made directly with the session's
// credential, both as a new baton process (as an agent runs them). The
// target is a broker call within 2 ms of a direct one.
func BenchmarkBrokerCall(b *testing.B) {
	bin, err := builtBaton()
	if err != nil {
		b.Fatal(err)
	}
	dir, getenv := benchProject(b)
	out, code := runIn(dir, getenv, "--as", "HUMAN", "--reason", "bench", "--json", "session", "start", "--agent", "IMPLEMENT")
	if code != 0 {
		b.Fatalf("session start: %s", out)
	}
	cred := gjson.Get(out, "env.BATON_SESSION").String()
	call := func(b *testing.B, cwd string, env ...string) {
		c := exec.Command(bin, "--json", "session", "current")
		c.Dir, c.Env = cwd, append(os.Environ(), env...)
		if out, err := c.CombinedOutput(); err != nil || !strings.Contains(string(out), "IMPLEMENT") {
			b.Fatalf("%v: %s", err, out)
		}
	}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			call(b, dir, "BATON_SESSION="+cred, "BATON_STATE_DIR="+dir)
		}
	})
	b.Run("broker", func(b *testing.B) {
		a := newApp(Env{Stdin: strings.NewReader(""), Stdout: os.Stdout, Stderr: os.Stderr, Getenv: getenv, Cwd: dir, Now: time.Now})
		a.box = &sandboxConf{}
		ctx := context.Background()
		box, err := a.openBox(ctx, step{Session: 1, Role: "IMPLEMENT", Credential: cred}, false, false, false)
		if err != nil {
			b.Fatal(err)
		}
		defer box.close(ctx)
		if err := box.started(ctx, os.Getpid()); err != nil { // the benchmark is the agent: its children may call
			b.Fatal(err)
		}
		sock := filepath.Join(box.place.SockDir, "sock")
		for b.Loop() {
			call(b, box.place.Copy.Dir, "BATON_BROKER="+sock)
		}
	})
}
