package cli

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// brokerProject is a git repository with baton's state and the person's
// key outside it, for a sandboxed agent's calls through its broker (the
// test process stands in for the agent: no OS sandbox is needed to serve
// the broker).
type brokerProject struct {
	t      *testing.T
	dir    string
	env    map[string]string
	now    time.Time
	stdin  string
	box    *agentBox
	cancel context.CancelFunc
}

func newBrokerProject(t *testing.T) *brokerProject {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := &brokerProject{t: t, dir: filepath.Join(root, "proj"), now: time.Date(2025, 1, 29, 10, 0, 0, 0, time.UTC)}
	p.env = map[string]string{"HOME": filepath.Join(root, "home"), "XDG_CONFIG_HOME": filepath.Join(root, "config"), "XDG_CACHE_HOME": filepath.Join(root, "cache"),
		"PATH": os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": filepath.Join(root, "gitconfig"),
		"GIT_AUTHOR_NAME": "B", "GIT_AUTHOR_EMAIL": "b@example.test", "GIT_COMMITTER_NAME": "B", "GIT_COMMITTER_EMAIL": "b@example.test",
		"GIT_AUTHOR_DATE": "2025-01-29T10:00:00Z", "GIT_COMMITTER_DATE": "2025-01-29T10:00:00Z"}
	if err := os.MkdirAll(filepath.Join(root, "config", "baton"), 0o700); err != nil {
		t.Fatal(err)
	}
	key := hex.EncodeToString(bytes.Repeat([]byte{7}, 32))
	if err := os.WriteFile(filepath.Join(root, "config", "baton", "key"), []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p.git(root, "init", "-q", "-b", "main", p.dir)
	p.write(p.dir, "README.md", "# x\n")
	p.git(p.dir, "add", "README.md")
	p.git(p.dir, "commit", "-q", "-m", "initial")
	if out, code := p.run(p.dir, nil, "init"); code != 0 {
		t.Fatalf("baton init: %s", out)
	}
	return p
}

func (p *brokerProject) getenv(extra map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := extra[k]; ok {
			return v
		}
		return p.env[k]
	}
}

func (p *brokerProject) git(dir string, args ...string) string {
	p.t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	for k, v := range p.env {
		c.Env = append(c.Env, k+"="+v)
	}
	out, err := c.CombinedOutput()
	if err != nil {
		p.t.Fatalf("git %q: %v %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (p *brokerProject) write(dir, name, data string) {
	p.t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// run runs baton in this process, as in dir with the extra environment,
// and returns its stdout and stderr, and its exit code.
func (p *brokerProject) run(dir string, extra map[string]string, args ...string) (string, int) {
	var out, errOut bytes.Buffer
	code := Main(args, Env{Stdin: strings.NewReader(p.stdin), Stdout: &out, Stderr: &errOut, Getenv: p.getenv(extra), Cwd: dir, Now: func() time.Time { return p.now }})
	p.stdin = ""
	return out.String() + "--stderr--\n" + errOut.String(), code
}

// open opens a session for role as a person, and a broker for it whose
// agent is this process.
func (p *brokerProject) open(role, feature, branch string) {
	p.t.Helper()
	p.close()
	args := []string{"--as", "HUMAN", "--reason", "test", "--json", "session", "start", "--agent", role}
	if feature != "" {
		args = append(args, "--feature", feature)
	}
	if branch != "" {
		args = append(args, "--branch", branch)
	}
	out, code := p.run(p.dir, nil, args...)
	if code != 0 {
		p.t.Fatalf("session start: %s", out)
	}
	js, _, _ := strings.Cut(out, "--stderr--")
	launcher := newApp(Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: p.getenv(nil), Cwd: p.dir, Now: func() time.Time { return p.now }})
	launcher.box = &sandboxConf{}
	ctx, cancel := context.WithCancel(context.Background())
	box, err := launcher.openBox(ctx, step{Session: int(gjson.Get(js, "session_id").Int()), Role: role, Branch: branch, Credential: gjson.Get(js, "env.BATON_SESSION").String()}, false, false, false)
	if err != nil {
		cancel()
		p.t.Fatal(err)
	}
	if err := box.started(ctx, os.Getpid()); err != nil {
		cancel()
		p.t.Fatal(err)
	}
	p.box, p.cancel = box, cancel
}

func (p *brokerProject) close() {
	if p.box != nil {
		p.box.close(context.Background())
		p.cancel()
		p.box = nil
	}
}

// agent runs baton as the sandboxed agent does: from its working copy
// (or dir beneath it), through the broker.
func (p *brokerProject) agent(sub string, args ...string) (string, int) {
	dir := filepath.Join(p.box.place.Copy.Dir, sub)
	return p.run(dir, map[string]string{"BATON_BROKER": filepath.Join(p.box.place.SockDir, "sock")}, args...)
}

// brokerCall is one of a sandboxed agent's calls and what it must print.
type brokerCall struct {
	sub   string // the directory beneath the working copy it runs in
	stdin string
	args  []string
	code  int
	want  string // a regular expression the output (stdout, then stderr) matches
}

func (p *brokerProject) calls(transcript *bytes.Buffer, calls []brokerCall) {
	p.t.Helper()
	for _, c := range calls {
		p.stdin = c.stdin
		out, code := p.agent(c.sub, c.args...)
		masked := maskTranscript(out, p)
		fmt.Fprintf(transcript, "$ baton %s\n%s[exit %d]\n", maskTranscript(strings.Join(c.args, " "), p), masked, code)
		if code != c.code {
			p.t.Errorf("baton %s: exit %d, want %d:\n%s", strings.Join(c.args, " "), code, c.code, out)
		}
		if c.want != "" && !regexp.MustCompile(c.want).MatchString(out) {
			p.t.Errorf("baton %s: output does not match %q:\n%s", strings.Join(c.args, " "), c.want, out)
		}
	}
}

var (
	maskHashes = regexp.MustCompile(`\b[0-9a-f]{7,64}\b`)
	maskPIDs   = regexp.MustCompile(`process \d+`)
)

// maskTranscript hides what differs from one run to the next: paths of
// temporary directories, hashes, process ids.
func maskTranscript(out string, p *brokerProject) string {
	out = strings.ReplaceAll(out, p.box.place.Copy.Dir, "$CLONE")
	out = strings.ReplaceAll(out, filepath.Dir(p.dir), "$ROOT")
	out = maskHashes.ReplaceAllString(out, "$$HASH")
	return maskPIDs.ReplaceAllString(out, "process $$PID")
}

// TestBrokeredCalls: a sandboxed agent's calls through its broker print
// what the same calls print from a terminal, exit with the same codes,
// and every call no session may make is refused (exit 3) and recorded as
// an attempt. BATON_BROKER_TRANSCRIPT names a file to write the calls and
// their output to.
func TestBrokeredCalls(t *testing.T) {
	p := newBrokerProject(t)
	defer p.close()
	var transcript bytes.Buffer
	p.open("INITIALIZER", "", "")
	clone := p.box.place.Copy.Dir
	p.write(clone, "features.json", `[{"id":"F001","name":"Health","description":"GET /health"},{"id":"F002","name":"Login","description":"POST /login"}]`)
	if err := os.MkdirAll(filepath.Join(clone, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(filepath.Dir(p.dir), "secret.json")
	p.write(filepath.Dir(p.dir), "secret.json", `[{"id":"F009","name":"Secret"}]`)
	if err := os.Symlink(secret, filepath.Join(clone, "secret-link")); err != nil {
		t.Fatal(err)
	}
	p.calls(&transcript, []brokerCall{
		{args: []string{"session", "current"}, want: `INITIALIZER`},
		{args: []string{"--json", "session", "current"}, want: `"agent_type": "INITIALIZER"`},
		{args: []string{"features", "append", "-s", "/spec/app.txt", "-e", secret}, code: 3, want: `refused: the argument .* names a path outside your working copy`},
		{args: []string{"features", "append", "-s", "spec", "-e", "secret-link"}, code: 3, want: `names a path outside your working copy`},
		{args: []string{"features", "append", "-s", "spec", "--entries=" + secret}, code: 3, want: `names a path outside your working copy`},
		{args: []string{"features", "append", "-s", "spec", "-e", "features.json"}, want: `(?s)SUCCESS.*F001.*F002`},
		{sub: "sub", stdin: `[{"id":"BUG-001","type":"bug","name":"Crash","description":"x"}]`, args: []string{"features", "append", "-s", "spec", "-e", "-"}, want: `BUG-001`},
		{args: []string{"features", "next"}, want: `F001`},
		{args: []string{"features", "list"}, want: `F002`},
		{args: []string{"--json", "features", "get", "F001"}, want: `"passes": false`},
		{args: []string{"features", "get", "F404"}, code: 4},
		{args: []string{"features", "stats"}},
		{args: []string{"features", "next-candidates"}},
		{args: []string{"progress", "get-status", "--field", "current_phase"}},
		{args: []string{"progress", "get-status"}},
		{args: []string{"progress", "next-session-id"}, want: `^1\n`},
		{args: []string{"progress", "list"}},
		{args: []string{"progress", "get-review-type"}},
		{args: []string{"reviews", "get-last"}, code: 4},
		{args: []string{"reviews", "list"}},
		{args: []string{"reviews", "get-fix-count", "F001"}, want: `FIX_COUNT: 0`},
		{args: []string{"status"}},
		{args: []string{"--json", "next"}},
		{args: []string{"show", "F001"}},
		{args: []string{"log"}},
		{args: []string{"verify"}},
		{args: []string{"context"}},
		{args: []string{"schema", "status"}},
		{args: []string{"report", "-o", "report.html"}, want: `SUCCESS: wrote`},
		{args: []string{"reviews", "merge"}, code: 3, want: `INITIALIZER may not merge to main`},
		{args: []string{"features", "pass", "F001"}, code: 3, want: `INITIALIZER may not mark a feature passing`},
		{args: []string{"session", "start", "--agent", "REVIEW"}, code: 3, want: `refused: the launcher opens sessions`},
		{args: []string{"--as", "HUMAN", "--reason", "cheat", "status"}, code: 3, want: `refused: a person's override is not open to an agent's session`},
		{args: []string{"-d", p.dir, "status"}, code: 3, want: `refused: the argument .* names a path outside your working copy`},
		{args: []string{"--file", "/tmp/progress.json", "progress", "get-status"}, code: 3, want: `names a path outside your working copy`},
		{args: []string{"-d", "sub", "status"}, code: 3, want: `refused: an agent's calls use its project's state files`},
		{args: []string{"--file", "progress.json", "progress", "get-status"}, code: 3, want: `refused: an agent's calls use its project's state files`},
		{args: []string{"init"}, code: 3, want: `refused: 'baton init' is the launcher's or a person's command`},
		{args: []string{"key", "show"}, code: 3, want: `'baton key' is the launcher's or a person's command`},
		{args: []string{"reconcile", "--reason", "x"}, code: 3, want: `'baton reconcile'`},
		{args: []string{"no-such-command"}, code: 2},
		{args: []string{"reviews", "add-review", "--bogus"}, code: 2},
		{args: []string{"session", "end", "-o", "SUCCESS", "-s", "/health and /login listed"}, want: `SUCCESS`},
		{args: []string{"session", "current"}, code: 3, want: `credential is not that of an open session`},
	})
	if n := len(p.box.attempts); n != 12 {
		t.Errorf("%d attempts recorded, want 12: %q", n, p.box.attempts)
	}
	if path := os.Getenv("BATON_BROKER_TRANSCRIPT"); path != "" {
		if err := os.WriteFile(path, transcript.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBrokeredWork: a feature's whole cycle through sandboxed sessions —
// the agents commit in their working copies, and the broker brings their
// branch into the project before each call, so that what a call records
// from git (a session's commits, a review's range, a fix's commit, the
// merge) is the agent's work.
func TestBrokeredWork(t *testing.T) {
	p := newBrokerProject(t)
	defer p.close()
	var transcript bytes.Buffer
	p.open("INITIALIZER", "", "")
	p.calls(&transcript, []brokerCall{
		{args: []string{"features", "append", "-s", "spec", "-e", `[{"id":"F001","name":"Health","description":"GET /health"}]`}},
		{args: []string{"session", "end", "-o", "SUCCESS", "-s", "listed"}},
	})
	p.open("IMPLEMENT", "F001", "feature/f001")
	clone := p.box.place.Copy.Dir
	p.write(clone, "health.sh", "echo ok\n")
	p.git(clone, "add", "health.sh")
	p.git(clone, "commit", "-q", "-m", "health")
	p.calls(&transcript, []brokerCall{
		{args: []string{"progress", "get-status", "--field", "current_feature"}, want: `F001`},
		{args: []string{"session", "end", "-o", "READY_FOR_REVIEW", "-s", "health added"}, want: `SUCCESS`},
	})
	p.open("REVIEW", "F001", "feature/f001")
	clone = p.box.place.Copy.Dir
	p.write(clone, "issues.json", `{"major":[{"description":"no test","location":"health.sh:1"}],"minor":[],"critical":[],"suggestions":[]}`)
	p.calls(&transcript, []brokerCall{
		{args: []string{"progress", "get-review-type"}, want: `REVIEW_TYPE: FEATURE`},
		{args: []string{"reviews", "add-review", "-a", "REVIEW", "--feature-id", "F001", "-b", "feature/f001", "-v", "REQUEST_CHANGES", "-s", "needs a test", "--issues", "issues.json"}, want: `SUCCESS: Added review R1`},
		{args: []string{"reviews", "show-issues"}, want: `R1-M1`},
		{args: []string{"reviews", "get-fix-count", "F001"}, want: `FIX_COUNT: 0`},
		{args: []string{"reviews", "merge"}, code: 3, want: `review R1 is REQUEST_CHANGES`},
		{args: []string{"session", "end", "-o", "NEEDS_FIX", "-s", "a test is missing"}},
	})
	p.open("FIX", "F001", "feature/f001")
	clone = p.box.place.Copy.Dir
	p.write(clone, "health_test.sh", "sh health.sh\n")
	p.git(clone, "add", "health_test.sh")
	p.git(clone, "commit", "-q", "-m", "test")
	fixCommit := p.git(clone, "rev-parse", "HEAD")
	p.calls(&transcript, []brokerCall{
		{stdin: `[{"issue_id":"R1-M1","fix_description":"added a test","commit":"` + fixCommit + `"}]`, args: []string{"reviews", "add-fix", "-r", "R1", "--issues-fixed", "-"}, want: `SUCCESS: Added fix FIX-1`},
		{args: []string{"reviews", "add-fix", "-r", "R1", "--issues-fixed", `["R1-M9"]`}, code: 4, want: `issue R1-M9 is not an issue of review R1`},
		{args: []string{"--json", "reviews", "get-fix-count", "F001"}, want: `"fix_count": 1`},
		{args: []string{"session", "end", "-o", "READY_FOR_REVIEW", "-s", "test added"}},
	})
	p.open("REVIEW", "F001", "feature/f001")
	p.calls(&transcript, []brokerCall{
		{args: []string{"reviews", "add-review", "-a", "REVIEW", "--feature-id", "F001", "-b", "feature/f001", "-v", "PASS", "-s", "good"}, want: `SUCCESS: Added review R2`},
		{args: []string{"--json", "reviews", "merge"}, want: `"passed": \[\s*"F001"`},
		{args: []string{"reviews", "add-review", "-a", "REVIEW", "--feature-id", "F001", "-b", "feature/f001", "-v", "REQUEST_CHANGES", "-s", "again"}, code: 3},
		{args: []string{"session", "end", "-o", "SUCCESS", "-s", "merged"}},
	})
	p.close()
	if out, code := p.run(p.dir, nil, "verify"); code != 0 || !strings.Contains(out, "OK: ") {
		t.Errorf("verify after the cycle: %s", out)
	}
	if out, _ := p.run(p.dir, nil, "features", "get", "F001", "--field", "passes"); !strings.HasPrefix(out, "true") {
		t.Errorf("F001 does not pass: %s", out)
	}
	if path := os.Getenv("BATON_BROKER_TRANSCRIPT"); path != "" {
		if err := os.WriteFile(path+".work", transcript.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBrokeredDemoAgent: the demo's scripted agent, run as the sandboxed
// agent, sends its calls through the broker too (baton demo --sandbox).
func TestBrokeredDemoAgent(t *testing.T) {
	p := newBrokerProject(t)
	defer p.close()
	for _, s := range []struct{ role, feature, branch, want string }{
		{"INITIALIZER", "", "", `SUCCESS: Appended 4 entries: F001, F002, F003, F004`},
		{"IMPLEMENT", "F001", "feature/f001", `SUCCESS: Ended session 2`},
		{"REVIEW", "F001", "feature/f001", `R1: REQUEST_CHANGES`},
	} {
		p.open(s.role, s.feature, s.branch)
		out, code := p.agent("", "demo", "agent")
		if code != 0 || !strings.Contains(out, s.want) {
			t.Fatalf("the demo agent as %s: exit %d:\n%s", s.role, code, out)
		}
	}
	p.close()
	if out, _ := p.run(p.dir, nil, "reviews", "get-last", "--field", "verdict"); !strings.HasPrefix(out, "REQUEST_CHANGES") {
		t.Errorf("the demo's first review of F001: %s", out)
	}
}
