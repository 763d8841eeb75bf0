package mcpserver_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/app"
	"github.com/baton-cli/baton/mcpserver"
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
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
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
