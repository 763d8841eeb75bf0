// Package mcpserver is baton's MCP front end: `baton mcp` serves the
// application layer's operations as MCP tools over stdio, on the official
// Go SDK. A server is bound the way a CLI call is — by the session
// credential in its environment (BATON_SESSION) — and offers that
// session's role's tools only: the reads to everyone, each write to the
// roles the responsibility matrix lets take it. Unbound, it offers the
// reads. Every call is still checked by the application inside its
// transaction, exactly as the CLI's; a refusal comes back as a tool error
// with the CLI's text. Handlers only translate: tool input to the
// application's input, its result to the tool's output.
package mcpserver

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/jsondoc"
)

// Server is one MCP server: the application, the caller every call acts
// as, and the role that caller's session was opened with ("" unbound).
type Server struct {
	mcp    *mcp.Server
	app    *app.App
	caller app.Caller
	mu     sync.Mutex // guards role, which session_end clears
	role   string
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
	// Remote, when set, runs every call elsewhere: the session's broker,
	// which binds the calls itself (Credential is then empty).
	Remote app.Remote
}

// New makes the server for o: it finds the role of the session its
// credential binds (none: read-only tools) and registers that role's
// tools. A credential that binds no open session serves the reads, and
// says so in warn.
func New(ctx context.Context, o Options, warn io.Writer) *mcp.Server {
	s := &Server{caller: app.Bound(o.Credential)}
	s.app = app.New(o.Env, o.AppOptions, &app.Notes{}) // each call has its own (WithSink)
	if o.Remote != nil {
		s.app.UseRemote(o.Remote)
	}
	if o.Credential != "" || o.Remote != nil {
		cur, err := s.app.SessionCurrent(ctx, s.caller)
		switch {
		case err != nil:
			fmt.Fprintf(warn, "baton mcp: serving the read-only tools: %s\n", Message(err))
		case len(cur.Sessions) == 1:
			s.role = cur.Sessions[0].AgentType
		}
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "baton", Title: "baton", Version: o.Version}, &mcp.ServerOptions{Instructions: s.instructions()})
	for _, sp := range catalog() {
		if sp.offeredTo(s.role) {
			sp.add(s.mcp, sp.tool(), s)
		}
	}
	return s.mcp
}

// unbind withdraws the writes once the session has ended: its credential
// binds nothing any more, and the client is told the list changed.
func (s *Server) unbind() {
	role := s.Role()
	var writes []string
	for _, sp := range catalog() {
		if !sp.readOnly() && sp.offeredTo(role) {
			writes = append(writes, sp.name)
		}
	}
	s.mu.Lock()
	s.role = ""
	s.mu.Unlock()
	if s.mcp != nil {
		s.mcp.RemoveTools(writes...)
	}
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
