package mcpserver_test

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/mcpserver"
)

// TestArgumentsNameNoIdentity: a tool's arguments cannot name a session,
// a role, a credential, a person or a state directory — every such field
// is refused by the tool's schema, nothing is written, and the refusal
// teaches no way around it. The server acts as the session its credential
// bound at its start, whatever its caller's environment says later.
func TestArgumentsNameNoIdentity(t *testing.T) {
	p := newProject(t)
	impl := p.open("IMPLEMENT")
	cs := p.connect(impl)
	before := p.baton("", "--json", "features", "list")
	rev := gjson.Get(p.baton("", "--as", "HUMAN", "--reason", "test: a REVIEW beside it", "--json", "session", "start", "--agent", "REVIEW"), "env.BATON_SESSION").String()
	if rev == "" {
		t.Fatal("no REVIEW credential")
	}
	for _, extra := range []map[string]any{
		{"as": "HUMAN", "reason": "tests pass"}, {"role": "REVIEW"}, {"session": 1},
		{"credential": rev}, {"BATON_SESSION": rev}, {"state_dir": t.TempDir()},
		{"file": "/etc/passwd"},
	} {
		args := map[string]any{"feature": "F001"}
		for k, v := range extra {
			args[k] = v
		}
		got := call(t, cs, "update_status", args, false).String()
		if strings.Contains(got, "--as") || strings.Contains(got, "BATON_ROLE") || strings.Contains(got, "session start") {
			t.Errorf("update_status %v: the refusal names a way around it: %s", extra, got)
		}
	}
	// the reads ignore nothing either: an unknown argument is an error
	call(t, cs, "features_get", map[string]any{"id": "F001", "as": "HUMAN"}, false)
	if after := p.baton("", "--json", "features", "list"); after != before {
		t.Errorf("a refused call changed the feature list")
	}
	// a write the IMPLEMENT server is not offered stays refused, the
	// REVIEW credential in the arguments notwithstanding
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "feature_pass", Arguments: map[string]any{"id": "F001", "credential": rev}})
	if err == nil && !res.IsError {
		t.Errorf("feature_pass through IMPLEMENT's server: %+v", res)
	}
	if gjson.Get(p.baton("", "--json", "features", "get", "F001"), "passes").Bool() {
		t.Errorf("F001 passes")
	}
}

// TestIdentityFromStartOnly: a server started with one session's
// credential keeps acting as that session when the environment it reads
// later holds another's.
func TestIdentityFromStartOnly(t *testing.T) {
	p := newProject(t)
	impl := p.open("IMPLEMENT")
	rev := gjson.Get(p.baton("", "--as", "HUMAN", "--reason", "test: a REVIEW beside it", "--json", "session", "start", "--agent", "REVIEW"), "env.BATON_SESSION").String()
	cur := impl
	ctx := context.Background()
	getenv := func(k string) string {
		if k == "BATON_SESSION" {
			return cur
		}
		return p.env[k]
	}
	srv := mcpserver.New(ctx, mcpserver.Options{Env: app.Env{Stdin: strings.NewReader(""), Getenv: getenv, Cwd: p.dir, Now: time.Now}, Credential: impl, Version: "test"}, io.Discard)
	cs := clientOf(t, srv)
	cur = rev
	if got := call(t, cs, "session_current", nil, true).Get("doc.sessions.0.agent_type").String(); got != "IMPLEMENT" {
		t.Errorf("session_current after the environment changed: %q, want IMPLEMENT", got)
	}
	call(t, cs, "update_status", map[string]any{"feature": "F001"}, true)
	last := gjson.Get(p.baton("", "--json", "log", "--limit", "1"), "events.0")
	if a := last.Get("actor.role").String(); a != "IMPLEMENT" {
		t.Errorf("the write was recorded as %q (%s), want the IMPLEMENT session", a, last.Raw)
	}
}

// bypassHint is what no refusal an agent reads may say (as in the CLI's
// messages test): a way around a rule.
var bypassHint = regexp.MustCompile(`(?i)--as\b|BATON_ROLE|BATON_ALLOW_MAIN|by hand|(another|a new|a second|new|other) session|session start\b|(different|another|other|right) --branch|--no-verify|key init`)

// TestToolErrorsTeachNoBypass calls every tool each role's server offers
// with empty and with wrong arguments, in a project where most of them
// are refused, and scans every error text for a way around a rule.
func TestToolErrorsTeachNoBypass(t *testing.T) {
	p := newProject(t)
	seen := 0
	for _, role := range []string{"", "IMPLEMENT", "REVIEW", "FIX", "ARCHITECTURE", "INITIALIZER"} {
		cred := ""
		if role != "" {
			cred = gjson.Get(p.baton("", "--as", "HUMAN", "--reason", "test: "+role, "--json", "session", "start", "--agent", role), "env.BATON_SESSION").String()
		}
		cs := p.connect(cred)
		for _, name := range toolNames(t, cs) {
			for _, args := range []map[string]any{{}, {"id": "F404", "review": "R99", "fix": "9", "outcome": "SUCCESS", "summary": "x", "verdict": "PASS", "name": "main"}} {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
				text := ""
				if err != nil {
					text = err.Error()
				} else if res.IsError {
					for _, c := range res.Content {
						if tc, ok := c.(*mcp.TextContent); ok {
							text += tc.Text
						}
					}
				}
				if text != "" {
					seen++
				}
				if m := bypassHint.FindString(text); m != "" {
					t.Errorf("%s server, %s %v: the error teaches a way around a rule (%q): %s", OrUnbound(role), name, args, m, text)
				}
			}
		}
	}
	if seen < 30 {
		t.Fatalf("only %d tool errors seen: the test does not reach the refusals", seen)
	}
}

// OrUnbound names a server's role for messages.
func OrUnbound(role string) string {
	if role == "" {
		return "unbound"
	}
	return role
}
