package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/baton-cli/baton/app"
	"github.com/baton-cli/baton/workflow"
)

// spec is one tool: its name, what it does, the matrix actions that
// make it a write (none for a read), its hints, its input and output
// schemas, and its handler over raw arguments.
type spec struct {
	name, desc string
	// actions: a write is offered to a role that may take any of them
	// (workflow.Check); a read (no action) is offered to everyone.
	actions     []workflow.Action
	destructive bool // a write that removes or overrides what was there
	idempotent  bool // a write that changes nothing the second time
	in, out     *schema
	run         func(ctx context.Context, s *Server, args json.RawMessage) toolResult
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

// tool is the MCP description of sp, as tools/list gives it, with its
// annotations.
type tool struct {
	Name         string      `json:"name"`
	Description  string      `json:"description,omitempty"`
	InputSchema  *schema     `json:"inputSchema"`
	OutputSchema *schema     `json:"outputSchema,omitempty"`
	Annotations  annotations `json:"annotations"`
}

type annotations struct {
	ReadOnlyHint    bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	IdempotentHint  bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
}

func (sp spec) tool() tool {
	ann := annotations{ReadOnlyHint: sp.readOnly(), IdempotentHint: sp.readOnly() || sp.idempotent}
	if !sp.readOnly() {
		d := sp.destructive
		ann.DestructiveHint = &d
	}
	closed := false
	ann.OpenWorldHint = &closed
	return tool{Name: sp.name, Description: sp.desc, InputSchema: sp.in, OutputSchema: sp.out, Annotations: ann}
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

// def makes a spec whose handler takes In and returns Out. Its arguments
// are checked against In's schema first. A failure — arguments the schema
// refuses, a refusal, bad input, a missing file — comes back as a tool
// error (isError) carrying the same text the CLI prints, never as a
// protocol error: the agent reads it and acts on it.
func def[In, Out any](name, desc string, h handler[In, Out], actions ...workflow.Action) spec {
	sp := spec{name: name, desc: desc, actions: actions,
		in: schemaFor(reflect.TypeFor[In](), map[reflect.Type]bool{}), out: schemaFor(reflect.TypeFor[Out](), map[reflect.Type]bool{})}
	in := sp.in
	sp.run = func(ctx context.Context, s *Server, args json.RawMessage) toolResult {
		var v In
		if err := decodeArgs(in, args, &v); err != nil {
			return errorResult(`validating "arguments": ` + err.Error())
		}
		k := &sink{}
		out, err := h(ctx, &call{app: s.app.WithSink(k), caller: s.caller, srv: s}, v)
		notes := k.take()
		if err != nil {
			return errorResult(strings.Join(append(notes, Message(err)), "\n"))
		}
		return outputResult(out, notes)
	}
	return sp
}

// decodeArgs checks args (none: {}) against in, then decodes them into v.
func decodeArgs(in *schema, args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage("{}")
	}
	var raw any
	if err := json.Unmarshal(args, &raw); err != nil {
		return err
	}
	if err := in.check(raw, "arguments"); err != nil {
		return err
	}
	return json.Unmarshal(args, v)
}

// toolResult is a tools/call result.
type toolResult struct {
	Content           []textContent   `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func errorResult(text string) toolResult {
	return toolResult{Content: []textContent{{Type: "text", Text: text}}, IsError: true}
}

// outputResult is a call's output as structured content and as JSON text;
// a call that warned has the warnings as a second text, so that a client
// reading only text sees both.
func outputResult(out any, notes []string) toolResult {
	b, err := json.Marshal(out)
	if err != nil {
		return errorResult(Message(err))
	}
	r := toolResult{Content: []textContent{{Type: "text", Text: string(b)}}, StructuredContent: b}
	if len(notes) > 0 {
		r.Content = append(r.Content, textContent{Type: "text", Text: strings.Join(notes, "\n")})
	}
	return r
}

// destructive and idempotent mark a write's hints.
func (sp spec) destroys() spec   { sp.destructive = true; return sp }
func (sp spec) repeatable() spec { sp.idempotent = true; return sp }
