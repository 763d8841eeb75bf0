package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/workflow"
)

// listFor lists the tools a server acting as role offers, over the SDK's
// in-memory transport (the role is set directly: no state is read).
func listFor(t *testing.T, role string) []*mcp.Tool {
	t.Helper()
	s := &Server{role: role}
	m := mcp.NewServer(&mcp.Implementation{Name: "baton", Version: "test"}, nil)
	for _, sp := range catalog() {
		if sp.offeredTo(role) {
			sp.add(m, sp.tool(), s)
		}
	}
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := m.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

func names(tools []*mcp.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

// schemaBudget is the most tokens of schema a role's whole tool list may
// take in an agent's context.
const schemaBudget = 5000

// TestSchemaSizePerRole measures each role's whole tools/list (names,
// descriptions, input and output schemas, annotations) as the client
// receives it, in tokens estimated as bytes/4 (ctxpack.Tokens' rule, the
// usual one for BPE tokenizers on English and JSON), and keeps it under
// the budget.
func TestSchemaSizePerRole(t *testing.T) {
	for _, role := range append([]string{""}, workflow.Roles...) {
		tools := listFor(t, role)
		b, err := json.Marshal(tools)
		if err != nil {
			t.Fatal(err)
		}
		tokens := (len(b) + 3) / 4
		t.Logf("%-22s %2d tools %6d bytes ~%5d tokens", orUnbound(role), len(tools), len(b), tokens)
		if tokens >= schemaBudget {
			t.Errorf("%s: the tool list is ~%d tokens of schema, over the budget of %d", orUnbound(role), tokens, schemaBudget)
		}
	}
}

func orUnbound(role string) string {
	if role == "" {
		return "(unbound)"
	}
	return role
}

// TestToolsFollowTheMatrix checks each role's tool list against the
// responsibility matrix: the reads for everyone, and each write exactly
// for the roles workflow.Check lets take its action.
func TestToolsFollowTheMatrix(t *testing.T) {
	reads := []string{"context", "next", "status", "session_current", "features_list", "features_get", "features_next",
		"reviews_get", "fix_count", "progress_session", "log"}
	cases := map[string]struct{ has, lacks []string }{
		"":                       {nil, []string{"session_end", "add_session", "add_review", "add_fix", "merge", "reject", "feature_fail", "append_features", "create_branch"}},
		"INITIALIZER":            {[]string{"session_end", "append_features"}, []string{"merge", "add_review", "add_fix", "create_branch", "feature_fail"}},
		"IMPLEMENT":              {[]string{"session_end", "create_branch", "feature_fail"}, []string{"merge", "reject", "add_review", "add_fix", "append_features"}},
		"BUGFIX":                 {[]string{"session_end", "create_branch", "feature_fail"}, []string{"merge", "reject", "add_review", "add_fix"}},
		"REVIEW":                 {[]string{"session_end", "add_review", "merge", "reject"}, []string{"add_fix", "create_branch", "feature_fail", "append_features"}},
		"FIX":                    {[]string{"session_end", "add_fix", "create_branch"}, []string{"merge", "reject", "add_review", "feature_fail"}},
		"GLOBAL_FIX":             {[]string{"session_end", "add_fix"}, []string{"merge", "add_review"}},
		"ARCHITECTURE":           {[]string{"session_end", "add_review"}, []string{"merge", "reject", "add_fix", "create_branch"}},
		"BROWNFIELD_INITIALIZER": {[]string{"append_features"}, []string{"merge", "add_fix"}},
	}
	for role, c := range cases {
		got := names(listFor(t, role))
		for _, n := range append(append([]string(nil), reads...), c.has...) {
			if !slices.Contains(got, n) {
				t.Errorf("%s lacks %s: %v", orUnbound(role), n, got)
			}
		}
		for _, n := range c.lacks {
			if slices.Contains(got, n) {
				t.Errorf("%s is offered %s: %v", orUnbound(role), n, got)
			}
		}
		if role == "" && len(got) != len(reads) {
			t.Errorf("unbound: %v, want only the reads %v", got, reads)
		}
	}
}

// TestAnnotations: reads say so; merge and reject are destructive; no
// write claims to be read-only.
func TestAnnotations(t *testing.T) {
	for _, tool := range listFor(t, "REVIEW") {
		a := tool.Annotations
		if a == nil {
			t.Fatalf("%s has no annotations", tool.Name)
		}
		sp := specNamed(tool.Name)
		if a.ReadOnlyHint != sp.readOnly() {
			t.Errorf("%s: readOnlyHint %v", tool.Name, a.ReadOnlyHint)
		}
		destructive := a.DestructiveHint != nil && *a.DestructiveHint
		if want := tool.Name == "merge" || tool.Name == "reject"; destructive != want {
			t.Errorf("%s: destructiveHint %v, want %v", tool.Name, destructive, want)
		}
		if sp.readOnly() && !a.IdempotentHint {
			t.Errorf("%s: a read is idempotent", tool.Name)
		}
	}
}

func specNamed(name string) spec {
	for _, sp := range catalog() {
		if sp.name == name {
			return sp
		}
	}
	return spec{}
}

// notTools are the matrix's actions no tool takes, and why.
var notTools = map[workflow.Action]string{
	workflow.InitFiles: "the state files come from 'baton init' (or the CLI's progress/reviews init) before any session",
	workflow.Land:      "the launcher lands the queue; no agent role may, so no session's server offers it",
}

// TestEveryActionHasATool: every action of the responsibility matrix, and
// every write of the application's registry, is some tool's — a write
// added to either shows up here until the server offers it.
func TestEveryActionHasATool(t *testing.T) {
	covered := map[workflow.Action]bool{}
	for _, sp := range catalog() {
		for _, a := range sp.actions {
			covered[a] = true
		}
	}
	for _, a := range workflow.Actions() {
		if !covered[a] && notTools[a] == "" {
			t.Errorf("the matrix's action %q has no tool", a)
		}
	}
	for _, op := range app.Operations() {
		if a := op.Info().Action; a != "" && !covered[a] && notTools[a] == "" {
			t.Errorf("the operation %s (%s) has no tool", op.Info().Name, a)
		}
	}
}
