package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/workflow"
)

// spec is one tool: its name, what it does, the matrix actions that
// make it a write (none for a read), its hints, and how it registers
// itself with its typed input and output.
type spec struct {
	name, desc string
	// actions: a write is offered to a role that may take any of them
	// (workflow.Check); a read (no action) is offered to everyone.
	actions     []workflow.Action
	destructive bool // a write that removes or overrides what was there
	idempotent  bool // a write that changes nothing the second time
	add         func(*mcp.Server, *mcp.Tool, *Server)
}

// readOnly says whether the tool only reads.
func (sp spec) readOnly() bool { return len(sp.actions) == 0 }

// offeredTo says whether a caller acting as role (""= bound to no
// session) sees the tool: a read always, a write when the matrix lets
// role take one of its actions.
func (sp spec) offeredTo(role string) bool {
	if sp.readOnly() {
		return true
	}
	if role == "" {
		return false
	}
	for _, a := range sp.actions {
		if workflow.Check(role, a) == nil {
			return true
		}
	}
	return false
}

// tool is the MCP description of sp, with its annotations.
func (sp spec) tool() *mcp.Tool {
	ann := &mcp.ToolAnnotations{ReadOnlyHint: sp.readOnly(), IdempotentHint: sp.readOnly() || sp.idempotent}
	if !sp.readOnly() {
		d := sp.destructive
		ann.DestructiveHint = &d
	}
	closed := false
	ann.OpenWorldHint = &closed
	return &mcp.Tool{Name: sp.name, Description: sp.desc, Annotations: ann}
}

// handler is a tool's work: its typed input to its typed output, through
// the application layer.
type handler[In, Out any] func(ctx context.Context, c *call, in In) (Out, error)

// call is one tool call: the application with this call's own sink (its
// warnings come back in its result), the caller, and the server.
type call struct {
	app    *app.App
	caller app.Caller
	srv    *Server
}

// def makes a spec whose handler takes In and returns Out. A failure —
// a refusal, bad input, a missing file — comes back as a tool error
// (IsError) carrying the same text the CLI prints, never as a protocol
// error: the agent reads it and acts on it.
func def[In, Out any](name, desc string, h handler[In, Out], actions ...workflow.Action) spec {
	sp := spec{name: name, desc: desc, actions: actions}
	sp.add = func(m *mcp.Server, t *mcp.Tool, s *Server) {
		mcp.AddTool(m, t, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
			k := &app.Notes{}
			out, err := h(ctx, &call{app: s.app.WithSink(k), caller: s.caller, srv: s}, in)
			notes := lines(k.Taken())
			if err != nil {
				// the SDK turns a plain error into an IsError result
				// whose text is the error's, with no structured content
				return nil, out, errors.New(strings.Join(append(notes, Message(err)), "\n"))
			}
			return withNotes(out, notes), out, nil
		})
	}
	return sp
}

// withNotes is the result of a call that warned: the output as JSON (as
// the SDK would give it) and the warnings as a second text, so that a
// client reading only text sees both. nil (the SDK's default) otherwise.
func withNotes(out any, notes []string) *mcp.CallToolResult {
	if len(notes) == 0 {
		return nil
	}
	b, _ := json.Marshal(out)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}, &mcp.TextContent{Text: strings.Join(notes, "\n")}}}
}

// destructive and idempotent mark a write's hints.
func (sp spec) destroys() spec   { sp.destructive = true; return sp }
func (sp spec) repeatable() spec { sp.idempotent = true; return sp }

// lines are a call's warnings and notices as the CLI prints them.
func lines(notes []app.Note) []string {
	out := make([]string, 0, len(notes))
	for _, n := range notes {
		text := strings.TrimRight(n.Text, "\n")
		if n.Warning {
			text = "WARNING: " + text
		}
		out = append(out, text)
	}
	return out
}
