package cli

import (
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/mcpserver"
)

func (a *App) newMCPCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve the bound session's baton tools to an agent host over MCP (stdio)",
		Long: `Serve baton as an MCP server on standard input and output, for an agent host (Claude Code,
Codex, any MCP client) to start. The server acts as the session whose credential is in its
environment (BATON_SESSION), exactly as a command would, and offers that session's role's tools:
context, next, status and the reads to everyone, and the writes the role may make (session_end,
add_review, merge, add_fix, ...). Without a credential it offers the reads only. 'baton run
--agent claude|codex' hands each agent the server for its session: started by the agent's CLI,
it sends its calls to the session's broker, which holds the credential. Standard output carries only
the protocol's JSON-RPC messages; warnings go to standard error.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := nonDumpable(); err != nil { // it may hold a credential
				return err
			}
			o := mcpserver.Options{
				// no Stdin: standard input carries the protocol, never an argument
				Env:        app.Env{Getenv: a.env.Getenv, Cwd: a.env.Cwd, Now: a.env.Now},
				AppOptions: &a.g.Options,
				Credential: a.env.Getenv("BATON_SESSION"),
				Version:    c.Root().Version,
			}
			if sock := brokerSocket(a.env); sock != "" { // an agent of baton run: its session's broker binds the calls
				o.Credential, o.Remote = "", brokerClient(sock)
			}
			srv := mcpserver.New(c.Context(), o, a.env.Stderr)
			t := &mcp.IOTransport{Reader: io.NopCloser(a.env.Stdin), Writer: nopWriteCloser{a.env.Stdout}}
			return srv.Run(c.Context(), t)
		},
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
