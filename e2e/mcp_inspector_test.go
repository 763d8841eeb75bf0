package e2e

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestMCPInspector checks 'baton mcp' with a second real MCP client, the
// MCP Inspector's CLI (npm @modelcontextprotocol/inspector), which starts
// the server over stdio as any agent host does. An IMPLEMENT and a REVIEW
// session each list their tools and work through them — context, the
// branch, the review, the merge, the session's end — and a read-only,
// unbound server lists only the reads; a refusal comes back as a tool
// error with the CLI's text. It runs when BATON_INSPECTOR_BIN names the
// Inspector's launcher ('make agent-e2e' installs it from npm).
func TestMCPInspector(t *testing.T) {
	bin := os.Getenv("BATON_INSPECTOR_BIN")
	if bin == "" {
		t.Skip("BATON_INSPECTOR_BIN is not set: 'make agent-e2e' installs the MCP Inspector from npm and runs this test")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the MCP Inspector's CLI runs on Node.js")
	}
	p := newAgentProject(t, "mcp-inspector", bin, nil, `{}`)
	in := inspector{t: t, p: p, bin: bin}

	unbound := in.tools("")
	if slices.Contains(unbound, "session_end") || !slices.Contains(unbound, "context") || !slices.Contains(unbound, "status") {
		t.Errorf("unbound server's tools: %v, want the reads only", unbound)
	}

	impl := p.open(t, "IMPLEMENT")
	tools := in.tools(impl)
	wantTools(t, "IMPLEMENT", tools, []string{"context", "session_end", "create_branch", "feature_fail"}, []string{"merge", "add_review", "add_fix", "reject"})
	if out := in.call(impl, "context", "budget=1500"); !strings.Contains(out, "IMPLEMENT") || !strings.Contains(out, "F001") {
		t.Errorf("context of the IMPLEMENT session:\n%s", out)
	}
	in.call(impl, "create_branch", "name=feature/f001")
	p.run("git", "switch", "-q", "feature/f001")
	// a refusal: READY_FOR_REVIEW with nothing committed yet, refused with
	// the CLI's words (exit 3 there), and nothing recorded
	refused := in.callErr(impl, "session_end", "outcome=READY_FOR_REVIEW", "summary=done")
	cli, err := p.tryEnv([]string{"BATON_SESSION=" + impl}, batonBin, "session", "end", "-o", "READY_FOR_REVIEW", "-s", "done")
	if line := firstError(cli); exitCode(err) != 3 || line == "" || !strings.Contains(refused, line) {
		t.Errorf("the refusal through MCP:\n%s\nwant the CLI's (exit 3, got %v):\n%s", refused, err, cli)
	}
	if err := os.WriteFile(p.dir+"/hello.sh", []byte("#!/bin/sh\necho hello\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p.run("git", "add", "hello.sh")
	p.run("git", "commit", "-q", "-m", "Implement F001")
	in.call(impl, "session_end", "outcome=READY_FOR_REVIEW", "summary=Implemented F001")

	rev := p.open(t, "REVIEW")
	tools = in.tools(rev)
	wantTools(t, "REVIEW", tools, []string{"context", "session_end", "add_review", "merge", "reject"}, []string{"add_fix", "create_branch", "feature_fail"})
	in.call(rev, "add_review", "verdict=REQUEST_CHANGES", "summary=errors ignored", `features=["F001"]`, "branch=feature/f001",
		`issues=[{"severity":"major","description":"hello.sh goes on after an error","location":"hello.sh:1"}]`)
	in.call(rev, "session_end", "outcome=SUCCESS", "summary=R1: REQUEST_CHANGES")

	fix := p.open(t, "FIX")
	tools = in.tools(fix)
	wantTools(t, "FIX", tools, []string{"context", "session_end", "add_fix"}, []string{"merge", "add_review", "reject", "feature_fail"})
	if out := in.call(fix, "context"); !strings.Contains(out, "R1-M1") {
		t.Errorf("FIX's context lacks the issue to fix:\n%s", out)
	}
	if err := os.WriteFile(p.dir+"/hello.sh", []byte("#!/bin/sh -e\necho hello\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p.run("git", "commit", "-q", "-am", "hello.sh: stop at the first error")
	in.call(fix, "add_fix", "review=R1", `issues_fixed=[{"issue_id":"R1-M1","fix_description":"sh -e"}]`)
	in.call(fix, "session_end", "outcome=READY_FOR_REVIEW", "summary=fixed R1-M1")

	rev = p.open(t, "REVIEW")
	p.run("git", "switch", "-q", "main")
	in.call(rev, "add_review", "verdict=PASS", "summary=hello.sh prints hello", `features=["F001"]`, "branch=feature/f001")
	in.call(rev, "merge", "review=R2")
	in.call(rev, "session_end", "outcome=SUCCESS", "summary=R2: PASS, merged")

	rv := gjson.Parse(p.run(batonBin, "--json", "reviews", "get-last"))
	if rv.Get("verdict").String() != "PASS" || rv.Get("merge_commit").String() == "" {
		t.Errorf("the review recorded through MCP: %s", rv.Raw)
	}
	p.run(batonBin, "verify")
}

// inspector runs the MCP Inspector's CLI against 'baton mcp'.
type inspector struct {
	t   *testing.T
	p   *agentProject
	bin string
}

// run starts 'baton mcp' through the Inspector, bound to cred ("" for
// none), with one method.
func (in inspector) run(cred string, args ...string) (string, error) {
	argv := []string{"--cli", "--cwd", in.p.dir}
	if cred != "" {
		argv = append(argv, "-e", "BATON_SESSION="+cred)
	}
	argv = append(append(argv, batonBin, "mcp"), args...)
	cmd := exec.Command(in.bin, argv...)
	cmd.Dir, cmd.Env = in.p.dir, in.p.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// tools lists the server's tool names.
func (in inspector) tools(cred string) []string {
	in.t.Helper()
	out, err := in.run(cred, "--method", "tools/list")
	if err != nil {
		in.t.Fatalf("inspector tools/list: %v\n%s", err, out)
	}
	var names []string
	gjson.Get(jsonPart(out), "tools.#.name").ForEach(func(_, n gjson.Result) bool { names = append(names, n.String()); return true })
	if len(names) == 0 {
		in.t.Fatalf("inspector tools/list listed nothing:\n%s", out)
	}
	return names
}

// call calls a tool that must succeed and returns its output.
func (in inspector) call(cred, tool string, kv ...string) string {
	in.t.Helper()
	out, err := in.run(cred, in.callArgs(tool, kv)...)
	if err != nil || gjson.Get(jsonPart(out), "isError").Bool() {
		in.t.Fatalf("inspector tools/call %s %v: %v\n%s", tool, kv, err, out)
	}
	return out
}

// callErr calls a tool that must fail with a tool error and returns it.
func (in inspector) callErr(cred, tool string, kv ...string) string {
	in.t.Helper()
	out, _ := in.run(cred, in.callArgs(tool, kv)...)
	if !gjson.Get(jsonPart(out), "isError").Bool() {
		in.t.Fatalf("inspector tools/call %s %v succeeded, want a tool error:\n%s", tool, kv, out)
	}
	return out
}

func (in inspector) callArgs(tool string, kv []string) []string {
	args := []string{"--method", "tools/call", "--tool-name", tool}
	if len(kv) > 0 {
		args = append(append(args, "--tool-arg"), kv...)
	}
	return args
}

// jsonPart is the JSON document the Inspector printed (it may print
// notices around it).
func jsonPart(out string) string {
	i, j := strings.Index(out, "{"), strings.LastIndex(out, "}")
	if i < 0 || j < i {
		return ""
	}
	return out[i : j+1]
}

// firstError is the CLI's ERROR line.
func firstError(out string) string {
	if m := regexp.MustCompile(`(?m)^ERROR: .*$`).FindString(out); m != "" {
		return strings.TrimPrefix(m, "ERROR: ")
	}
	return ""
}

func wantTools(t *testing.T, role string, got, has, lacks []string) {
	t.Helper()
	for _, n := range has {
		if !slices.Contains(got, n) {
			t.Errorf("%s's tools %v lack %s", role, got, n)
		}
	}
	for _, n := range lacks {
		if slices.Contains(got, n) {
			t.Errorf("%s's tools %v include %s", role, got, n)
		}
	}
}

// open opens a session of role as the person and returns its credential.
func (p *agentProject) open(t *testing.T, role string) string {
	t.Helper()
	out := p.run(batonBin, "--json", "session", "start", "--agent", role)
	cred := gjson.Get(out, "env.BATON_SESSION").String()
	if cred == "" {
		t.Fatalf("session start %s printed no credential:\n%s", role, out)
	}
	return cred
}

// tryEnv runs a command in the project with extra environment.
func (p *agentProject) tryEnv(extra []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = p.dir, append(append([]string(nil), p.env...), extra...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// checkOffered checks the baton MCP tools an agent CLI offered its model
// in each session (role -> " name name ... "): the session role's.
func checkOffered(t *testing.T, offered map[string]string) {
	t.Helper()
	for role, want := range map[string][2]string{"IMPLEMENT": {"create_branch", "merge"}, "REVIEW": {"merge", "add_fix"}} {
		wantTools(t, role+" (as offered to the model)", strings.Fields(offered[role]), []string{"context", "session_end", want[0]}, []string{want[1]})
	}
}
