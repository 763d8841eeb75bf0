package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/cli"
	"github.com/baton-cli/baton/internal/mcpserver"
)

// project is a git repository with baton initialized and the person's key,
// driven through the CLI for what the test sets up and through an
// in-process MCP server (the SDK's in-memory transport) for what it checks.
type project struct {
	t   *testing.T
	dir string
	env map[string]string
}

// newBareProject is a git repository with baton initialized and the
// person's key, and no features yet.
func newBareProject(t *testing.T) *project {
	t.Helper()
	p := &project{t: t, dir: t.TempDir(), env: map[string]string{}}
	home := t.TempDir()
	for k, v := range map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "config"), "XDG_STATE_HOME": filepath.Join(home, "state"),
		"GIT_AUTHOR_NAME": "Agent", "GIT_AUTHOR_EMAIL": "agent@example.test", "GIT_COMMITTER_NAME": "Agent",
		"GIT_COMMITTER_EMAIL": "agent@example.test", "GIT_CONFIG_NOSYSTEM": "1", "PATH": os.Getenv("PATH"),
	} {
		p.env[k] = v
	}
	p.git("init", "-q", "-b", "main")
	p.git("commit", "-q", "--allow-empty", "-m", "initial commit")
	p.baton("", "key", "init")
	p.baton("", "init", "--name", "greeter")
	return p
}

// newProject is a bare project whose INITIALIZER wrote two features.
func newProject(t *testing.T) *project {
	t.Helper()
	p := newBareProject(t)
	cred := p.open("INITIALIZER")
	p.baton(cred, "features", "append", "-s", "spec.md", "-e",
		`[{"id":"F001","name":"Greeting","description":"hello.sh prints hello","steps":["sh hello.sh"]},{"id":"F002","name":"Farewell","description":"bye.sh prints bye"}]`)
	p.baton(cred, "session", "end", "-o", "SUCCESS", "-s", "two features")
	return p
}

func (p *project) getenv(cred string) func(string) string {
	return func(k string) string {
		if k == "BATON_SESSION" {
			return cred
		}
		return p.env[k]
	}
}

// baton runs the CLI in-process, bound to cred ("" for none), and
// returns its stdout; it must succeed.
func (p *project) baton(cred string, args ...string) string {
	p.t.Helper()
	out, errOut, code := p.try(cred, args...)
	if code != 0 {
		p.t.Fatalf("baton %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	return out
}

func (p *project) try(cred string, args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	code := cli.Main(args, cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: p.getenv(cred), Cwd: p.dir, Now: time.Now})
	return out.String(), errOut.String(), code
}

func (p *project) git(args ...string) {
	p.t.Helper()
	c := exec.Command("git", args...)
	c.Dir = p.dir
	for k, v := range p.env {
		c.Env = append(c.Env, k+"="+v)
	}
	if out, err := c.CombinedOutput(); err != nil {
		p.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// open opens a session of role as the person and returns its credential.
func (p *project) open(role string) string {
	p.t.Helper()
	cred := gjson.Get(p.baton("", "--json", "session", "start", "--agent", role), "env.BATON_SESSION").String()
	if cred == "" {
		p.t.Fatalf("session start %s gave no credential", role)
	}
	return cred
}

// connect starts an MCP server bound to cred and returns a client of it.
func (p *project) connect(cred string) *mcp.ClientSession {
	p.t.Helper()
	ctx := context.Background()
	env := app.Env{Stdin: strings.NewReader(""), Getenv: p.getenv(cred), Cwd: p.dir, Now: time.Now}
	return clientOf(p.t, mcpserver.New(ctx, mcpserver.Options{Env: env, Credential: cred, Version: "test"}, io.Discard))
}

// clientOf connects a client to srv over in-memory transports; both are
// closed when the test ends.
func clientOf(t *testing.T, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tool := range res.Tools {
		out = append(out, tool.Name)
	}
	return out
}

// call calls a tool; ok says whether it must succeed. It returns the
// structured output (or the error text).
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, ok bool) gjson.Result {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", tool, err)
	}
	text := ""
	for _, c := range res.Content {
		if tc, isText := c.(*mcp.TextContent); isText {
			text += tc.Text
		}
	}
	if res.IsError == ok {
		t.Fatalf("%s %v: isError %v, want %v: %s", tool, args, res.IsError, !ok, text)
	}
	if res.IsError {
		return gjson.Parse(`"` + strings.ReplaceAll(strings.ReplaceAll(text, `\`, `\\`), `"`, `\"`) + `"`)
	}
	b, _ := json.Marshal(res.StructuredContent)
	return gjson.ParseBytes(b)
}

func want(t *testing.T, role string, got, has, lacks []string) {
	t.Helper()
	for _, n := range has {
		if !slices.Contains(got, n) {
			t.Errorf("%s: tools %v lack %s", role, got, n)
		}
	}
	for _, n := range lacks {
		if slices.Contains(got, n) {
			t.Errorf("%s: tools %v include %s", role, got, n)
		}
	}
}

// TestSessionsThroughMCP drives an IMPLEMENT and a REVIEW session through
// their MCP servers: each lists its role's tools, reads its context, and
// records its work; the state then shows the sessions, the commit merged
// on main and the review, and verify is clean.
func TestSessionsThroughMCP(t *testing.T) {
	p := newProject(t)

	impl := p.connect(p.open("IMPLEMENT"))
	want(t, "IMPLEMENT", toolNames(t, impl), []string{"context", "status", "session_end", "create_branch", "feature_fail"},
		[]string{"merge", "reject", "add_review", "add_fix", "append_features"})
	ctxOut := call(t, impl, "context", nil, true) // the default budget
	if text := ctxOut.Get("text").String(); !strings.Contains(text, "IMPLEMENT") || !strings.Contains(text, "hello.sh prints hello") {
		t.Errorf("IMPLEMENT's context lacks its role or its task:\n%s", text)
	}
	if got := call(t, impl, "next", nil, true).Get("phase").String(); got != "IMPLEMENT" {
		t.Errorf("next: phase %q", got)
	}
	if got := call(t, impl, "features_get", map[string]any{"id": "F001"}, true).Get("doc.name").String(); got != "Greeting" {
		t.Errorf("features_get F001: name %q", got)
	}
	call(t, impl, "create_branch", map[string]any{"name": "feature/f001"}, true)
	p.git("switch", "-q", "feature/f001")
	if got := call(t, impl, "update_status", map[string]any{"branch": "feature/f001"}, true).Get("doc.current_branch").String(); got != "feature/f001" {
		t.Errorf("update_status: current_branch %q", got)
	}
	if err := os.WriteFile(filepath.Join(p.dir, "hello.sh"), []byte("echo hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.git("add", "hello.sh")
	p.git("commit", "-q", "-m", "hello.sh")
	end := call(t, impl, "session_end", map[string]any{"outcome": "READY_FOR_REVIEW", "summary": "hello.sh prints hello"}, true)
	if end.Get("outcome").String() != "READY_FOR_REVIEW" || end.Get("commits.#").Int() != 1 {
		t.Errorf("session_end: %s", end.Raw)
	}

	p.git("switch", "-q", "main")
	rev := p.connect(p.open("REVIEW"))
	want(t, "REVIEW", toolNames(t, rev), []string{"context", "session_end", "add_review", "merge", "reject"},
		[]string{"add_fix", "create_branch", "feature_fail", "append_features"})
	r := call(t, rev, "add_review", map[string]any{"verdict": "PASS", "summary": "prints hello", "features": []string{"F001"}, "branch": "feature/f001",
		"issues": []map[string]any{{"severity": "suggestion", "description": "add a shebang", "location": "hello.sh:1"}}}, true)
	if r.Get("doc.review_id").Int() != 1 || r.Get("doc.issues.suggestions.0.id").String() != "R1-S1" {
		t.Errorf("add_review: %s", r.Raw)
	}
	for _, id := range []string{"R1", "1"} { // review ids as printed and bare
		if got := call(t, rev, "reviews_get", map[string]any{"review": id}, true).Get("doc.verdict").String(); got != "PASS" {
			t.Errorf("reviews_get %s: verdict %q", id, got)
		}
	}
	m := call(t, rev, "merge", map[string]any{"review": "R1"}, true)
	if m.Get("merge_commit").String() == "" || m.Get("passed.0").String() != "F001" {
		t.Errorf("merge: %s", m.Raw)
	}
	// a write that warns: the warning comes back as the result's second text
	res, err := rev.CallTool(context.Background(), &mcp.CallToolParams{Name: "feature_pass", Arguments: map[string]any{"id": "F001"}})
	if err != nil || res.IsError || len(res.Content) != 2 || !strings.Contains(res.Content[1].(*mcp.TextContent).Text, "WARNING: Feature F001 is already passing") {
		t.Errorf("feature_pass of a passing feature: %v %+v", err, res)
	}
	d := call(t, rev, "append_debt", map[string]any{"items": []map[string]any{{"name": "Tests", "description": "hello.sh has no test"}}}, true)
	if d.Get("added.#").Int() != 1 || !strings.HasPrefix(d.Get("added.0").String(), "DEBT-") {
		t.Errorf("append_debt: %s", d.Raw)
	}
	call(t, rev, "session_end", map[string]any{"outcome": "SUCCESS", "summary": "R1: PASS, merged"}, true)
	// the session is over: its server keeps only the reads
	want(t, "REVIEW after session_end", toolNames(t, rev), []string{"context", "status", "log"}, []string{"session_end", "merge", "add_review", "append_debt"})

	list := gjson.Parse(p.baton("", "--json", "progress", "list"))
	if got := list.Get("sessions.#.outcome").Raw; got != `["SUCCESS","READY_FOR_REVIEW","SUCCESS"]` {
		t.Errorf("sessions' outcomes %s", got)
	}
	p.baton("", "verify")
}

// TestRefusalIsTheCLIs: a refused write comes back as a tool error with
// the text the CLI prints (and the CLI exits 3 for it); nothing changes.
func TestRefusalIsTheCLIs(t *testing.T) {
	p := newProject(t)
	cred := p.open("IMPLEMENT")
	cs := p.connect(cred)
	call(t, cs, "create_branch", map[string]any{"name": "feature/f001"}, true)
	p.git("switch", "-q", "feature/f001")
	before := p.baton("", "--json", "progress", "list")
	got := call(t, cs, "session_end", map[string]any{"outcome": "READY_FOR_REVIEW", "summary": "nothing yet"}, false).String()
	_, cli, code := p.try(cred, "session", "end", "-o", "READY_FOR_REVIEW", "-s", "nothing yet")
	if code != 3 || strings.TrimSpace(cli) != got {
		t.Errorf("MCP refusal:\n%s\nCLI (exit %d):\n%s", got, code, cli)
	}
	if after := p.baton("", "--json", "progress", "list"); after != before {
		t.Errorf("a refusal changed progress.json")
	}
	// both refusals are in the audit log, which the log tool reads
	if n := call(t, cs, "log", map[string]any{"refused": true}, true).Get("doc.events.#").Int(); n != 2 {
		t.Errorf("log refused: %d events, want the two refusals", n)
	}
	// a tool the role is not offered is not there at all
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "merge", Arguments: map[string]any{}})
	if err == nil && !res.IsError {
		t.Errorf("IMPLEMENT called merge: %+v", res)
	}
}

// TestUnboundServerReads: without a credential (or with one that binds
// nothing) the server offers the reads only, and they work.
func TestUnboundServerReads(t *testing.T) {
	p := newProject(t)
	for _, cred := range []string{"", "bts1_" + strings.Repeat("0", 64)} {
		cs := p.connect(cred)
		names := toolNames(t, cs)
		want(t, "unbound", names, []string{"context", "next", "status", "features_list", "reviews_get"},
			[]string{"session_end", "add_session", "add_review", "add_fix", "merge", "reject", "feature_fail", "append_features", "create_branch"})
		if got := call(t, cs, "features_list", nil, true).Get("features.#").Int(); got != 2 {
			t.Errorf("features_list: %d features", got)
		}
		if got := call(t, cs, "status", nil, true).Get("doc.next.phase").String(); got != "IMPLEMENT" {
			t.Errorf("status: next phase %q", got)
		}
	}
}

// TestFixAndInitializerTools: the FIX role records a fix (review id as
// R1), sees no merge; an INITIALIZER appends features.
func TestFixAndInitializerTools(t *testing.T) {
	p := newProject(t)
	impl := p.open("IMPLEMENT")
	p.baton(impl, "branch", "create", "feature/f001")
	p.git("switch", "-q", "feature/f001")
	if err := os.WriteFile(filepath.Join(p.dir, "hello.sh"), []byte("echo hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.git("add", "hello.sh")
	p.git("commit", "-q", "-m", "hello.sh")
	p.baton(impl, "session", "end", "-o", "READY_FOR_REVIEW", "-s", "hello")
	rev := p.open("REVIEW")
	p.baton(rev, "reviews", "add-review", "-a", "REVIEW", "--feature-id", "F001", "-b", "feature/f001", "-v", "REQUEST_CHANGES", "-s", "says hi",
		"--issues", `[{"severity":"major","description":"prints hi, not hello"}]`)
	p.baton(rev, "session", "end", "-o", "SUCCESS", "-s", "changes requested")

	fix := p.connect(p.open("FIX"))
	want(t, "FIX", toolNames(t, fix), []string{"add_fix", "session_end", "create_branch"}, []string{"merge", "reject", "add_review", "feature_fail"})
	if err := os.WriteFile(filepath.Join(p.dir, "hello.sh"), []byte("echo hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.git("commit", "-q", "-am", "hello, not hi")
	f := call(t, fix, "add_fix", map[string]any{"review": "R1", "issues_fixed": []map[string]any{{"issue_id": "R1-M1", "fix_description": "prints hello"}}}, true)
	if f.Get("doc.fix_id").Int() != 1 {
		t.Errorf("add_fix: %s", f.Raw)
	}
	call(t, fix, "add_fix", map[string]any{"review": "FIX-1"}, false) // a fix id where a review id goes
	call(t, fix, "session_end", map[string]any{"outcome": "READY_FOR_REVIEW", "summary": "fixed R1-M1"}, true)

	rev2 := p.connect(p.open("REVIEW"))
	if got := call(t, rev2, "mark_merged", map[string]any{"fix": "R1"}, false).String(); !strings.Contains(got, "is a review id, not a fix id") {
		t.Errorf("mark_merged R1: %s", got)
	}
	if got := call(t, rev2, "mark_merged", map[string]any{"fix": "FIX-1"}, true).Get("fix").String(); got != "FIX-1" {
		t.Errorf("mark_merged FIX-1: %s", got)
	}
}

// TestConcurrentCalls: a client may send calls without waiting; each has
// its own warnings, and reads run beside a write (go test -race).
func TestConcurrentCalls(t *testing.T) {
	p := newProject(t)
	cs := p.connect(p.open("IMPLEMENT"))
	errc := make(chan error, 12)
	for i := 0; i < 12; i++ {
		go func(i int) {
			name, args := "status", map[string]any{}
			switch i % 3 {
			case 1:
				name, args = "features_get", map[string]any{"id": "F002"}
			case 2:
				name, args = "update_status", map[string]any{"feature": "F001"}
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
			if err == nil && res.IsError {
				err = fmt.Errorf("%s: %v", name, res.Content)
			}
			errc <- err
		}(i)
	}
	for i := 0; i < 12; i++ {
		if err := <-errc; err != nil {
			t.Error(err)
		}
	}
}

// TestInitializerThroughMCP: the INITIALIZER writes the feature list
// through append_features; an entry cannot arrive passing (the schema has
// no such field), and its session ends through session_end.
func TestInitializerThroughMCP(t *testing.T) {
	p := newBareProject(t)
	cs := p.connect(p.open("INITIALIZER"))
	want(t, "INITIALIZER", toolNames(t, cs), []string{"append_features", "append_debt", "update_status", "session_end"}, []string{"merge", "add_review", "add_fix", "create_branch"})
	call(t, cs, "append_features", map[string]any{"source": "spec.md", "entries": []map[string]any{{"name": "Greeting", "description": "prints hello", "passes": true}}}, false)
	out := call(t, cs, "append_features", map[string]any{"source": "spec.md", "entries": []map[string]any{
		{"name": "Greeting", "description": "prints hello", "steps": []string{"sh hello.sh"}},
		{"type": "bug", "name": "Crash", "description": "crashes on empty input"},
	}}, true)
	if got := out.Get("added").Raw; got != `["FEAT-001","BUG-001"]` {
		t.Errorf("append_features added %s", got)
	}
	call(t, cs, "session_end", map[string]any{"outcome": "SUCCESS", "summary": "the feature list"}, true)
	if got := gjson.Get(p.baton("", "--json", "features", "list"), "features.#(passes==true)#").Raw; got != "[]" {
		t.Errorf("passing features after the INITIALIZER: %s", got)
	}
	if got := call(t, cs, "next", nil, true).Get("phase").String(); got != "BUGFIX" {
		t.Errorf("next after the INITIALIZER: %q", got)
	}
}

// TestArchitectureThroughMCP: after the configured interval of merged
// features, an ARCHITECTURE session records its review through add_review
// (no branch) and its debt through append_debt, and sees no merge.
func TestArchitectureThroughMCP(t *testing.T) {
	p := newBareProject(t)
	if err := os.WriteFile(filepath.Join(p.dir, ".baton", "config"), []byte(`{"architecture_interval": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p.baton("", "--as", "HUMAN", "--reason", "an architecture review after each feature", "reconcile")
	ini := p.open("INITIALIZER")
	p.baton(ini, "features", "append", "-s", "spec.md", "-e", `[{"id":"F001","name":"Greeting","description":"prints hello"},{"id":"F002","name":"Bye","description":"prints bye"}]`)
	p.baton(ini, "session", "end", "-o", "SUCCESS", "-s", "features")
	impl := p.open("IMPLEMENT")
	p.baton(impl, "branch", "create", "feature/f001")
	p.git("switch", "-q", "feature/f001")
	if err := os.WriteFile(filepath.Join(p.dir, "hello.sh"), []byte("echo hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.git("add", "hello.sh")
	p.git("commit", "-q", "-m", "hello.sh")
	p.baton(impl, "session", "end", "-o", "READY_FOR_REVIEW", "-s", "hello")
	p.git("switch", "-q", "main")
	rev := p.open("REVIEW")
	p.baton(rev, "reviews", "add-review", "-a", "REVIEW", "--feature-id", "F001", "-b", "feature/f001", "-v", "PASS", "-s", "ok")
	p.baton(rev, "reviews", "merge")
	p.baton(rev, "session", "end", "-o", "SUCCESS", "-s", "merged")

	arch := p.connect(p.open("ARCHITECTURE"))
	want(t, "ARCHITECTURE", toolNames(t, arch), []string{"add_review", "append_debt", "session_end"}, []string{"merge", "reject", "add_fix", "create_branch", "feature_pass"})
	r := call(t, arch, "add_review", map[string]any{"verdict": "PASS_WITH_COMMENTS", "summary": "one script, no tests", "coverage": 0,
		"issues": []map[string]any{{"severity": "minor", "description": "no test of hello.sh"}}}, true)
	if r.Get("doc.agent_type").String() != "ARCHITECTURE" || r.Get("doc.issues.minor.0.id").String() != "A2-m1" || r.Get("doc.health_status").String() == "" {
		t.Errorf("the architecture review: %s", r.Raw)
	}
	d := call(t, arch, "append_debt", map[string]any{"items": []map[string]any{{"name": "Test hello.sh", "description": "no test of hello.sh", "source_review": "A2-m1"}}}, true)
	if d.Get("added.#").Int() != 1 {
		t.Errorf("append_debt: %s", d.Raw)
	}
	call(t, arch, "session_end", map[string]any{"outcome": "SUCCESS", "summary": "A2: healthy enough"}, true)
}
