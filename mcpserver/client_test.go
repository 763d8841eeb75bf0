package mcpserver

import (
	"context"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ClientOf serves s on a pair of pipes, as `baton mcp` serves stdio, and
// connects the MCP SDK's client to it; both end with the test.
func ClientOf(t *testing.T, s *Server) *mcp.ClientSession {
	t.Helper()
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := s.Serve(ctx, toServer, fromServer)
		_ = fromServer.Close()
		done <- err
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = fromClient.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		cancel()
	})
	return cs
}
