package cli_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/cli"
)

// If the files cannot be written after main moved, the merge is undone:
// main goes back (compare-and-swap), the branch is recreated, the checkout
// of main shows main as it was, and no state file changes. The failure is
// made real with an immutable state directory and state files (chattr
// +i: files baton wrote are changed in place, which an immutable directory
// alone allows), so the test needs root on a file system that supports
// it, and is skipped otherwise.
func TestMergeUndoneWhenTheFilesCannotBeWritten(t *testing.T) {
	root := t.TempDir()
	repo, state := filepath.Join(root, "repo"), filepath.Join(root, "state")
	for _, d := range []string{repo, state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "config", "baton"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "config", "baton", "key"), []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"BATON_STATE_DIR": state, "HOME": root, "XDG_CONFIG_HOME": filepath.Join(root, "config"), "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.test", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.test"}
	git := func(args ...string) string {
		t.Helper()
		c := exec.Command("git", args...)
		c.Dir = repo
		for k, v := range env {
			c.Env = append(c.Env, k+"="+v)
		}
		c.Env = append(c.Env, "PATH="+os.Getenv("PATH"))
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	creds := map[string]string{} // role -> the credential of its session
	var baton func(role string, args ...string) (int, string)
	baton = func(role string, args ...string) (int, string) {
		if _, ok := creds[role]; !ok && role != "" {
			creds[role] = ""
			code, out := baton("", "--as", "HUMAN", "--reason", "test", "--json", "session", "start", "--agent", role)
			if code != 0 {
				return code, out
			}
			creds[role] = gjson.Get(out, "env.BATON_SESSION").String()
		}
		var out bytes.Buffer
		e := cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Cwd: repo, Now: time.Now,
			Getenv: func(k string) string {
				if k == "BATON_SESSION" {
					return creds[role]
				}
				return env[k]
			}}
		return cli.Main(args, e), out.String()
	}
	must := func(role string, args ...string) {
		t.Helper()
		if code, out := baton(role, args...); code != 0 {
			t.Fatalf("baton %v: exit %d\n%s", args, code, out)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("init", "-q", "-b", "main")
	git("add", "a.txt")
	git("commit", "-q", "-m", "initial commit")
	must("", "init")
	must("INITIALIZER", "features", "append", "-s", "spec", "-e", `[{"id":"F001","name":"Greeting"}]`)
	must("IMPLEMENT", "branch", "create", "feature/greeting")
	git("switch", "-q", "feature/greeting")
	if err := os.WriteFile(filepath.Join(repo, "greet.sh"), []byte("echo hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "greet.sh")
	git("commit", "-q", "-m", "add greet")
	git("switch", "-q", "main")
	must("REVIEW", "reviews", "add-review", "-a", "REVIEW", "--feature-id", "F001", "-b", "feature/greeting", "-v", "PASS", "-s", "good")
	main, branch := git("rev-parse", "main"), git("rev-parse", "feature/greeting")
	before := map[string][]byte{}
	for _, f := range []string{"progress.json", "reviews.json", "feature_list.json"} {
		before[f], _ = os.ReadFile(filepath.Join(state, f))
	}

	immutable := []string{state}
	for f := range before {
		immutable = append(immutable, filepath.Join(state, f))
	}
	if out, err := exec.Command("chattr", append([]string{"+i"}, immutable...)...).CombinedOutput(); err != nil {
		t.Skipf("cannot make the state directory immutable (needs root and chattr): %v %s", err, out)
	}
	defer exec.Command("chattr", append([]string{"-i"}, immutable...)...).Run()
	code, out := baton("REVIEW", "reviews", "merge")
	if err := exec.Command("chattr", append([]string{"-i"}, immutable...)...).Run(); err != nil {
		t.Fatal(err)
	}
	if code == 0 {
		t.Fatalf("merge succeeded with an immutable state directory:\n%s", out)
	}
	if !strings.Contains(out, "the merge was undone: main is back at "+main[:7]+" and feature/greeting is restored") {
		t.Errorf("message does not say what was undone:\n%s", out)
	}
	if got := git("rev-parse", "main"); got != main {
		t.Errorf("main at %s, want it back at %s", got, main)
	}
	if got := git("rev-parse", "feature/greeting"); got != branch {
		t.Errorf("feature/greeting at %s, want %s", got, branch)
	}
	if st := git("status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Errorf("checkout of main not restored:\n%s", st)
	}
	if _, err := os.Stat(filepath.Join(repo, "greet.sh")); !os.IsNotExist(err) {
		t.Error("the merged file is still in the checkout of main")
	}
	for f, b := range before {
		if now, _ := os.ReadFile(filepath.Join(state, f)); !bytes.Equal(now, b) {
			t.Errorf("%s changed", f)
		}
	}
	must("", "verify")
}
