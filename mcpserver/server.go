// Package mcpserver is baton's MCP front end: `baton mcp` serves the
// application layer's operations as MCP tools over stdio. A server is bound the way a CLI call is — by the session
// credential in its environment (BATON_SESSION) — and offers that
// session's role's tools only: the reads to everyone, each write to the
// roles the responsibility matrix lets take it. Unbound, it offers the
// reads. Every call is still checked by the application inside its
// transaction, exactly as the CLI's; a refusal comes back as a tool error
// with the CLI's text. Handlers only translate: tool input to the
// application's input, its result to the tool's output.
//
// The protocol (rpc.go) and the tools' schemas (schema.go) are baton's own:
// the few methods a tool server answers over stdio. The official Go SDK's
// client drives the server in the tests; the SDK's server is not linked
// into baton, whose every command would pay that package's initialisation
// (its schema library, net/http) at start.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/baton-cli/baton/app"
	"github.com/baton-cli/baton/jsondoc"
)

// Server is one MCP server: the application, the caller every call acts
// as, and the role that caller's session was opened with ("" unbound).
type Server struct {
	app     *app.App
	caller  app.Caller
	version string
	mu      sync.Mutex // guards role, which session_end clears, tools and out
	role    string
	tools   []spec // offered, in the catalog's order
	out     *conn  // the client being served (Serve), nil before
}

// Options make a server.
type Options struct {
	// Env is the application's environment (the CLI's: the process's).
	Env app.Env
	// AppOptions are the state directory and file the server was given.
	AppOptions *app.Options
	// Credential is the session credential the server was started with
	// (BATON_SESSION), "" for none.
	Credential string
	// Version is baton's version, told to clients.
	Version string
}

// New makes the server for o: it finds the role of the session its
// credential binds (none: read-only tools) and registers that role's
// tools. A credential that binds no open session serves the reads, and
// says so in warn.
func New(ctx context.Context, o Options, warn io.Writer) *Server {
	s := &Server{caller: app.Bound(o.Credential), version: o.Version}
	s.app = app.New(o.Env, o.AppOptions, &sink{}) // each call has its own (WithSink)
	if o.Credential != "" {
		cur, err := s.app.SessionCurrent(ctx, s.caller)
		switch {
		case err != nil:
			fmt.Fprintf(warn, "baton mcp: serving the read-only tools: %s\n", Message(err))
		case len(cur.Sessions) == 1:
			s.role = cur.Sessions[0].AgentType
		}
	}
	s.offer()
	return s
}

// offer registers the tools of the server's role.
func (s *Server) offer() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tools = nil
	for _, sp := range catalog() {
		if sp.offeredTo(s.role) {
			s.tools = append(s.tools, sp)
		}
	}
}

// unbind withdraws the writes once the session has ended: its credential
// binds nothing any more, and the client is told the list changed.
func (s *Server) unbind() {
	s.mu.Lock()
	s.role = ""
	s.mu.Unlock()
	s.offer()
	s.notify("notifications/tools/list_changed")
}

// listTools describes the tools offered now.
func (s *Server) listTools() []tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]tool, len(s.tools))
	for i, sp := range s.tools {
		out[i] = sp.tool()
	}
	return out
}

// callTool runs a tools/call: a tool the server does not offer (now) is
// a protocol error, as it is not in the list the client was given.
func (s *Server) callTool(ctx context.Context, params json.RawMessage) result {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return result{err: &rpcError{Code: codeInvalidParams, Message: "tools/call: " + err.Error()}}
	}
	s.mu.Lock()
	i := slices.IndexFunc(s.tools, func(sp spec) bool { return sp.name == p.Name })
	var sp spec
	if i >= 0 {
		sp = s.tools[i]
	}
	s.mu.Unlock()
	if i < 0 {
		return result{err: &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}}
	}
	return result{v: sp.run(ctx, s, p.Arguments)}
}

// instructions tell the client whom the server acts for.
func (s *Server) instructions() string {
	if s.role == "" {
		return "baton: the project's state, read-only (this server is bound to no session). Call context first."
	}
	return fmt.Sprintf("baton: the tools of your %s session. Call context first; end with session_end.", s.role)
}

// Role is the role the server acts as ("" unbound, or its session ended).
func (s *Server) Role() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.role
}

// Message is the text of err as the CLI prints it on stderr.
func Message(err error) string {
	return "ERROR: " + jsondoc.SafeMessage(err.Error())
}

// sink collects the warnings and notices of the call in progress.
type sink struct {
	mu    sync.Mutex
	lines []string
}

func (k *sink) Warnf(format string, args ...any) {
	k.add("WARNING: " + fmt.Sprintf(format, args...))
}

func (k *sink) Noticef(format string, args ...any) { k.add(fmt.Sprintf(format, args...)) }

func (k *sink) Messages() io.Writer { return sinkWriter{k} }

func (k *sink) add(line string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.lines = append(k.lines, strings.TrimRight(line, "\n"))
}

// take returns the lines collected since the last take.
func (k *sink) take() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := k.lines
	k.lines = nil
	return out
}

type sinkWriter struct{ k *sink }

func (w sinkWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if l != "" {
			w.k.add(l)
		}
	}
	return len(p), nil
}
