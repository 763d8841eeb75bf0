package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sync"
)

// The protocol: JSON-RPC 2.0 messages, one a line, over the server's input
// and output (MCP's stdio transport). A client initializes, lists the
// tools and calls them; each call runs in its own goroutine, so a client
// may send calls without waiting, and replies are written whole, one at a
// time.

// protocolVersions are the MCP versions the server speaks, newest first.
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// JSON-RPC error codes.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeNoMethod       = -32601
	codeInvalidParams  = -32602
)

// message is a request, a notification (no id) or a client's reply.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return e.Message }

type reply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// conn is the output of a served connection.
type conn struct {
	mu sync.Mutex
	w  io.Writer
}

// send writes one message as one line.
func (c *conn) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(reply{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: -32603, Message: err.Error()}})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _ = c.w.Write(append(b, '\n'))
}

// Serve serves the MCP protocol on r and w until r ends (nil) or ctx is
// done. It serves one client.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	c := &conn{w: w}
	s.mu.Lock()
	s.out = c
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var calls sync.WaitGroup
	defer calls.Wait()
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() { readErr <- readLines(r, lines) }()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-readErr:
			return err
		case line := <-lines:
			s.handle(ctx, c, line, &calls)
		}
	}
}

// readLines sends r's lines, each a message, until r ends (nil at EOF).
func readLines(r io.Reader, lines chan<- []byte) error {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			lines <- line
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// handle answers one message: a tool call in its own goroutine, anything
// else at once.
func (s *Server) handle(ctx context.Context, c *conn, line []byte, calls *sync.WaitGroup) {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		c.send(reply{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: codeParse, Message: "parse error: " + err.Error()}})
		return
	}
	if m.Method == "" {
		return // a reply to a request: the server sends none
	}
	if len(m.ID) == 0 {
		return // a notification (initialized, cancelled): nothing to answer
	}
	if m.Method != "tools/call" {
		s.answer(c, m, s.dispatch(m))
		return
	}
	calls.Add(1)
	go func() {
		defer calls.Done()
		s.answer(c, m, s.callTool(ctx, m.Params))
	}()
}

// result is a method's result, or its error.
type result struct {
	v   any
	err *rpcError
}

func (s *Server) answer(c *conn, m message, r result) {
	if r.err != nil {
		c.send(reply{JSONRPC: "2.0", ID: m.ID, Error: r.err})
		return
	}
	c.send(reply{JSONRPC: "2.0", ID: m.ID, Result: r.v})
}

// dispatch answers the requests other than tools/call.
func (s *Server) dispatch(m message) result {
	switch m.Method {
	case "initialize":
		return result{v: s.initialize(m.Params)}
	case "ping":
		return result{v: struct{}{}}
	case "tools/list":
		return result{v: map[string]any{"tools": s.listTools()}}
	}
	return result{err: &rpcError{Code: codeNoMethod, Message: "method not found: " + m.Method}}
}

// initialize agrees on a protocol version — the client's when the server
// speaks it, else the newest the server speaks — and says who the server
// is, what it offers and whom it acts for.
func (s *Server) initialize(params json.RawMessage) any {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(params, &p)
	version := protocolVersions[0]
	if slices.Contains(protocolVersions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
		"serverInfo":      map[string]string{"name": "baton", "title": "baton", "version": s.version},
		"instructions":    s.instructions(),
	}
}

// notify sends a notification to the client being served, if any.
func (s *Server) notify(method string) {
	s.mu.Lock()
	c := s.out
	s.mu.Unlock()
	if c != nil {
		c.send(map[string]string{"jsonrpc": "2.0", "method": method})
	}
}
