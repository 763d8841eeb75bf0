// Package app is baton's application layer: every operation baton offers
// (the transactions on the state files, git recording, merges, verify,
// next and status, the session life cycle, the context package) as a
// function of a context, the caller and a typed input. Front ends — the
// command line in cmd/, the MCP server, the sandbox broker — translate their
// requests into those inputs and the results into text or JSON; nothing here
// writes to stdout or stderr: warnings go to the front end's Sink.
package app

import (
	"io"
	"strings"
	"time"

	"github.com/baton-cli/baton/internal/gitops"
)

// Env is what the application takes from its process: the environment,
// the working directory, the clock, and standard input for arguments
// that name it ("-").
type Env struct {
	Stdin  io.Reader
	Getenv func(string) string
	Cwd    string
	Now    func() time.Time
	// FileDir is where relative file arguments are read (a sandboxed
	// agent's working directory); empty: Cwd.
	FileDir string
	// Head, when set, is the HEAD a call sees instead of the repository's
	// own: the commit and branch of a sandboxed agent's working copy.
	Head func() (hash, branch string)
	// Progress, when set, is told what a long operation is doing (init
	// adopting a large history), for the front end to show.
	Progress func(format string, args ...any)
}

// Options are the front end's settings that every operation reads: where
// the state is, and a person's override.
type Options struct {
	StateDir string // the state directory, when given (else discovered)
	File     string // the path of the operation's own state file, when given
	// Agents, when set, is how many sessions run at once in place of
	// "agents" in .baton/config (baton run --agents).
	Agents int
}

// Caller says how a call is authenticated. The front end fills it from
// where its callers prove themselves — the CLI from BATON_SESSION and
// --as/--reason, the broker from the credential its launcher holds for
// the connection, the MCP server from the one it was started with — and
// the application checks it inside each transaction. A zero Caller may
// read but not write (unless this process is a launcher: baton run).
type Caller struct {
	// Session is a session credential: the call acts as that session.
	Session string `json:"-"`
	// As is HUMAN for a person proving themselves with their key.
	As string `json:"as,omitempty"`
	// Reason is the person's reason for an override (recorded).
	Reason string `json:"reason,omitempty"`
}

// Bound returns the caller of a call whose session credential is cred
// (trimmed, as BATON_SESSION is read).
func Bound(cred string) Caller { return Caller{Session: strings.TrimSpace(cred)} }

// Sink receives an operation's warnings and notices; the front end decides
// where they go (stderr, a JSON document's "warnings", a tool result).
type Sink interface {
	Warnf(format string, args ...any)
	Noticef(format string, args ...any)
	// Messages is where a helper writes whole warning lines.
	Messages() io.Writer
}

// App is the application: one per front-end process (or connection).
type App struct {
	env    Env
	g      *Options
	sink   Sink
	caller Caller // the call's caller: set on the App copy of each call

	repoOpened bool
	// reconciling skips the drift check: the transaction records it.
	reconciling bool
	gitRepo     gitops.Repo
	// creating marks an init command: its transaction may create the state
	// where none exists (any other command is refused there).
	creating bool
	// excluded are the info/exclude patterns this command added (before
	// its first write).
	excluded []string
	// undone says what the undo of an uncommitted git change did, for the
	// failed command's message.
	undone string

	// keyFile overrides where the person's key is read (the demo's scratch
	// key); launch is set in a launcher's own process (baton run).
	keyFile string
	launch  *launcher
	// pred is set when 'baton run --prompts' runs the predecessor's prompt
	// files.
	pred *Predecessor
	// remote, when set, runs every operation (a sandboxed agent's baton:
	// its broker runs them).
	remote Remote
}

// New makes the application for a front end. opts is read at each call, so
// a front end may fill it (parse its flags) after New.
func New(env Env, opts *Options, sink Sink) *App {
	if opts == nil {
		opts = &Options{}
	}
	return &App{env: env, g: opts, sink: sink}
}

// as is the App for one call by c: a copy, so that concurrent calls (the
// broker's, the MCP server's) share no per-call state.
func (a *App) as(c Caller) *App {
	b := *a
	b.caller = c
	b.repoOpened, b.gitRepo, b.undone, b.excluded = false, nil, "", nil
	b.creating, b.reconciling = false, false
	return &b
}

// WithSink is the App with another sink (a front end that answers each
// call with its own warnings: an MCP tool result, a broker response).
func (a *App) WithSink(s Sink) *App {
	b := *a
	b.sink = s
	return &b
}

func (a *App) warn(format string, args ...any)   { a.sink.Warnf(format, args...) }
func (a *App) notice(format string, args ...any) { a.sink.Noticef(format, args...) }
