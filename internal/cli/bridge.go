package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/bridge"
	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
)

const bridgeLong = `The agent bridge: an orchestrator that needs an AI agent writes
.agent-request.json in the state directory, checkpoints and exits 42; a host runs the agent,
writes .agent-response.json and re-runs the orchestrator with --resume.

  request    ask for an agent (what an orchestrator calls); prints the answer on a resumed run
  respond    write the response envelope from an agent's raw output (what a host calls)
  validate   check a response (or request) file and name what is wrong with it
  status     show the run, the outstanding request and whether the response would be accepted
  complete   end a run that finished: its state is removed (what an orchestrator calls last)
  clean      remove every bridge file
  loop       be the host: run an orchestrator and an agent command until it finishes
  install-claude-command  make Claude Code the host: write .claude/commands/baton-run.md

A response is accepted only for the outstanding request: a stale, mismatched, already
consumed or malformed one is refused (exit 5) and set aside as
.agent-response.rejected-<time>.json, never consumed. See docs/bridge.md.`

func (a *App) newBridgeCmd() *cobra.Command {
	c := group("bridge", "The agent bridge: request an agent (exit 42), respond, validate, run the host loop",
		a.newBridgeRequestCmd(), a.newBridgeRespondCmd(), a.newBridgeValidateCmd(),
		a.newBridgeStatusCmd(), a.newBridgeCleanCmd(), a.newBridgeLoopCmd(), a.newBridgeCompleteCmd(),
		a.newBridgeInstallClaudeCmd())
	c.Long = bridgeLong
	return c
}

// bridgeDir is the state directory the bridge's files live in (--file
// names a state file, not a bridge file, and is ignored here).
func (a *App) bridgeDir() string {
	return a.app.BridgeDir()
}

// readInput reads a file named on the command line, "-" being stdin.
func (a *App) readInput(flag, path string) ([]byte, error) {
	if path == "-" {
		data, err := io.ReadAll(a.env.Stdin)
		if err != nil {
			return nil, fmt.Errorf("%s: reading stdin: %w", flag, err)
		}
		return data, nil
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(a.env.Cwd, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errs.New(errs.NotFound, "%s: %v", flag, err)
	}
	return data, nil
}

// parseObject reads a JSON object flag ("" is none).
func parseObject(flag, s string) (map[string]any, error) {
	if s == "" {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		return nil, errs.New(errs.Usage, "%s must be a JSON object, such as '{\"key\": \"value\"}'", flag)
	}
	return m, nil
}

// ---- bridge request

type bridgeRequestOpts struct {
	Agent, PhaseName        string
	Prompt, PromptFile      string
	Context, Config         string
	Checkpoint              string
	Phase, Timeout, MaxInln int
	Retries                 int
	Resume                  bool
}

func (a *App) newBridgeRequestCmd() *cobra.Command {
	var o bridgeRequestOpts
	c := &cobra.Command{
		Use:   "request",
		Short: "Ask for an agent: print its answer on a resumed run, else write the request and exit 42",
		Long: `Ask for an agent, as an orchestrator written as a script does. Without --resume it starts a new
run: the request is written to .agent-request.json, the run is checkpointed, and baton exits 42.
With --resume (pass your orchestrator's own --resume on) it continues the run: the first call
takes the response to the outstanding request, and every call prints the answer of its request
on stdout. A request is known by the digest of its agent, --phase-name, prompt and --context, so
a resumed run gets each earlier answer back, and a changed prompt is a new request (it writes
the next request and exits 42) — never another request's answer. A resume without a response
exits 4 instead of asking again; a run started without --resume while the answer to its
outstanding request waits exits 5 and says to pass --resume.

An answer whose status is not success exits 1 with its error message (print the envelope with
--json); --retries N asks again up to N times first. The request file is at most
--max-request-bytes, measured on the encoded JSON: a larger prompt goes to a side file named in
the request's context.prompt_file; a larger context is refused (put large material in a file
and its path in the context). --checkpoint names the run's checkpoint and --config keeps the
orchestrator's options in it (the run's state file).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.runBridgeRequest(c.Context(), o) },
	}
	f := c.Flags()
	f.StringVar(&o.Agent, "agent", "", "name of the agent to invoke (required)")
	f.StringVar(&o.PhaseName, "phase-name", "", "name of this step of the run (default: the agent's name)")
	f.IntVar(&o.Phase, "phase", 0, "step number (default: the step already named --phase-name, else the next)")
	f.StringVar(&o.Prompt, "prompt", "", "the prompt text")
	f.StringVar(&o.PromptFile, "prompt-file", "", "read the prompt from this file (- for stdin)")
	f.IntVar(&o.Timeout, "timeout", bridge.DefaultTimeoutSeconds, "seconds the host gives the agent")
	f.StringVar(&o.Context, "context", "", "JSON object added to the request's context")
	f.IntVar(&o.MaxInln, "max-request-bytes", bridge.DefaultMaxRequestBytes, "largest request file (bytes of encoded JSON, prompt and context together)")
	f.IntVar(&o.MaxInln, "max-inline-prompt", bridge.DefaultMaxRequestBytes, "former name of --max-request-bytes")
	_ = f.MarkHidden("max-inline-prompt")
	f.IntVar(&o.Retries, "retries", 0, "ask again up to N times when the agent answers error or timeout")
	f.StringVar(&o.Checkpoint, "checkpoint", "", "name of the run's checkpoint while this request waits")
	f.StringVar(&o.Config, "config", "", "JSON object merged into the checkpoint's config")
	f.BoolVar(&o.Resume, "resume", false, "continue the run (the orchestrator was re-run with --resume)")
	_ = c.MarkFlagRequired("agent")
	c.MarkFlagsMutuallyExclusive("prompt", "prompt-file")
	return c
}

func (a *App) runBridgeRequest(ctx context.Context, o bridgeRequestOpts) error {
	if err := a.refuseInsideSession("baton bridge request"); err != nil {
		return err
	}
	prompt, err := a.requestPrompt(o)
	if err != nil {
		return err
	}
	extra, err := parseObject("--context", o.Context)
	if err != nil {
		return err
	}
	cfg, err := parseObject("--config", o.Config)
	if err != nil {
		return err
	}
	b, err := bridge.Open(bridge.Options{Dir: a.bridgeDir(), Resume: o.Resume, Cwd: a.env.Cwd, Now: a.env.Now,
		MaxRequestBytes: o.MaxInln, Warn: a.messages(), Ctx: ctx})
	if err != nil {
		return err
	}
	if cfg != nil {
		if err := b.SetConfig(cfg); err != nil {
			return err
		}
	}
	resp, err := b.Ask(o.Agent, prompt, bridge.InvokeOptions{Phase: o.Phase, PhaseName: o.PhaseName, TimeoutSeconds: o.Timeout, Context: extra,
		Retries: o.Retries, Checkpoint: o.Checkpoint})
	if err != nil {
		return err
	}
	if a.g.JSON {
		if err := a.writeJSON(a.env.Stdout, resp); err != nil {
			return err
		}
	} else if resp.Status == bridge.StatusSuccess {
		if _, err := io.WriteString(a.env.Stdout, resp.Text()); err != nil {
			return err
		}
	}
	return resp.Err(o.Agent)
}

func (a *App) requestPrompt(o bridgeRequestOpts) (string, error) {
	if o.PromptFile == "" {
		if o.Prompt == "" {
			return "", errs.New(errs.Usage, "bridge request needs --prompt TEXT or --prompt-file FILE")
		}
		return o.Prompt, nil
	}
	data, err := a.readInput("--prompt-file", o.PromptFile)
	return string(data), err
}

// checkpointDoc is what --json prints at exit 42: the checkpoint, not an
// error — the run is paused for an agent, with the request to answer.
type checkpointDoc struct {
	Checkpoint     string          `json:"checkpoint"`
	ExitCode       int             `json:"exit_code"`
	RunID          string          `json:"run_id,omitempty"`
	Phase          int             `json:"phase"`
	PhaseName      string          `json:"phase_name"`
	AgentName      string          `json:"agent_name"`
	RequestID      string          `json:"request_id"`
	RetryCount     int             `json:"retry_count"`
	RequestFile    string          `json:"request_file"`
	ResponseFile   string          `json:"response_file"`
	RespondCommand string          `json:"respond_command"`
	HostToken      string          `json:"host_token,omitempty"`
	Request        json.RawMessage `json:"request,omitempty"`
	Message        string          `json:"message"`
}

// reportCheckpoint prints a checkpoint (exit 42) under --json as one
// checkpoint document on stdout, and reports whether it did.
func (a *App) reportCheckpoint(err error) bool {
	var ne *bridge.NeedAgentError
	if !a.g.JSON || a.emitted || !errs.Is(err, errs.NeedAgent) || !errors.As(err, &ne) {
		return false
	}
	cmd := bridge.FixCommand(bridge.KindResponse, ne.StateDir)
	if ne.Token != "" {
		cmd = strings.Replace(cmd, " respond ", " respond --token "+ne.Token+" ", 1)
	}
	doc := checkpointDoc{Checkpoint: "need_agent", ExitCode: errs.ExitNeedAgent, Phase: ne.Request.Phase, PhaseName: ne.Request.PhaseName,
		AgentName: ne.Request.AgentName, RequestID: ne.Request.RequestID, RetryCount: ne.Request.RetryCount, RequestFile: ne.RequestPath,
		ResponseFile: ne.ResponsePath, RespondCommand: cmd, HostToken: ne.Token, Message: err.Error()}
	if data, rerr := os.ReadFile(ne.RequestPath); rerr == nil && json.Valid(data) {
		doc.Request = data
		var r struct {
			Context struct {
				RunID string `json:"run_id"`
			} `json:"context"`
		}
		_ = json.Unmarshal(data, &r)
		doc.RunID = r.Context.RunID
	}
	_ = a.writeJSON(a.env.Stdout, doc)
	return true
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ---- bridge respond

type bridgeRespondOpts struct {
	Token                    string
	MaxOutput                int
	Input, Status, RequestID string
	ErrorMessage, ErrorType  string
	Model, Metadata          string
	Duration                 float64
	DurationSet, InputSet    bool
	Tokens                   int
	Force                    bool
}

type bridgeResponded struct {
	Path     string           `json:"path"`
	Response *bridge.Response `json:"response"`
}

func (a *App) newBridgeRespondCmd() *cobra.Command {
	var o bridgeRespondOpts
	c := &cobra.Command{
		Use:   "respond",
		Short: "Write the response envelope to the outstanding request from an agent's raw output",
		Long: `Write .agent-response.json for the outstanding request, the way a host must write it: the
request's request_id, version 1.0, the status, the agent's raw output (stdin or --input) as
the "response" string, error_message and error_type (null on success), created_at, a numeric
duration_seconds (default: the time since the request was written) and metadata (agent_name,
--model, --tokens, --metadata). It goes to the absolute path the request names, whatever the
working directory. A response already waiting is not replaced without --force.

For a failed agent: --status error --error-message '...' [--error-type INVOCATION_FAILED];
for one that overran: --status timeout. Output is read only for success or with --input.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.DurationSet, o.InputSet = c.Flags().Changed("duration"), c.Flags().Changed("input")
			return a.runBridgeRespond(c.Context(), o)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.Input, "input", "i", "-", "file holding the agent's raw output (- for stdin)")
	f.StringVar(&o.Status, "status", bridge.StatusSuccess, "success, error or timeout")
	f.StringVar(&o.ErrorMessage, "error-message", "", "what went wrong (error and timeout)")
	f.StringVar(&o.ErrorType, "error-type", "", "error type (default INVOCATION_FAILED, or TIMEOUT for timeout)")
	f.Float64Var(&o.Duration, "duration", 0, "seconds the agent took (default: since the request was written)")
	f.StringVar(&o.Model, "model", "", "metadata.model")
	f.IntVar(&o.Tokens, "tokens", 0, "metadata.tokens_used")
	f.StringVar(&o.Metadata, "metadata", "", "JSON object merged into metadata")
	f.StringVar(&o.RequestID, "request-id", "", "refuse unless this is the outstanding request")
	f.StringVar(&o.Token, "token", "", "the host token printed when the request was made (requests of 'baton run' need it)")
	f.IntVar(&o.MaxOutput, "max-output", bridge.DefaultMaxOutput, "largest agent output (bytes) accepted")
	f.BoolVar(&o.Force, "force", false, "replace a response already waiting")
	return c
}

// refuseInsideSession refuses a host's command to an agent (app.HostOnly).
func (a *App) refuseInsideSession(what string) error { return app.HostOnly(a.caller(), what) }

func (a *App) runBridgeRespond(ctx context.Context, o bridgeRespondOpts) error {
	if err := a.refuseInsideSession("baton bridge respond"); err != nil {
		return err
	}
	ans, err := a.respondAnswer(o)
	if err != nil {
		return err
	}
	resp, path, err := bridge.Respond(bridge.RespondOptions{Dir: a.bridgeDir(), RequestID: o.RequestID, Force: o.Force, Token: o.Token,
		Answer: ans, TimeAnswer: !o.DurationSet, Now: a.env.Now(), Ctx: ctx})
	if err != nil {
		return err
	}
	return a.emit(bridgeResponded{Path: path, Response: resp}, func(w io.Writer) {
		printf(w, "SUCCESS: wrote the %s response to request %s to %s", resp.Status, resp.RequestID, path)
	})
}

func (a *App) respondAnswer(o bridgeRespondOpts) (bridge.Answer, error) {
	md, err := parseObject("--metadata", o.Metadata)
	if err != nil {
		return bridge.Answer{}, err
	}
	if md == nil {
		md = map[string]any{}
	}
	if o.Model != "" {
		md["model"] = o.Model
	}
	if o.Tokens != 0 {
		md["tokens_used"] = o.Tokens
	}
	if o.DurationSet && o.Duration < 0 {
		return bridge.Answer{}, errs.New(errs.Usage, "--duration %v: seconds cannot be negative", o.Duration)
	}
	ans := bridge.Answer{Status: o.Status, ErrorType: o.ErrorType, ErrorMessage: o.ErrorMessage, Metadata: md,
		Duration: secondsDuration(o.Duration)}
	if o.Status == bridge.StatusSuccess || o.InputSet {
		out, err := a.readCapped("--input", o.Input, o.MaxOutput)
		if err != nil {
			return ans, err
		}
		ans.Output = string(out)
	}
	return ans, nil
}

// readCapped reads an agent's output (a file, or - for stdin), refusing
// more than max bytes without reading more than that into memory.
func (a *App) readCapped(flag, path string, max int) ([]byte, error) {
	if max <= 0 {
		max = bridge.DefaultMaxOutput
	}
	var r io.Reader = a.env.Stdin
	if path != "-" {
		if !filepath.IsAbs(path) {
			path = filepath.Join(a.env.Cwd, path)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, errs.New(errs.NotFound, "%s: %v", flag, err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if len(data) > max {
		return nil, errs.New(errs.Usage, "%s: the agent's output is larger than %d bytes (--max-output); nothing was written. Raise --max-output, or have the agent write large results to a file and answer with the file's path", flag, max)
	}
	return data, nil
}

// ---- bridge validate

type bridgeValidateOpts struct {
	File, Kind string
}

type bridgeValidation struct {
	File     string           `json:"file"`
	Kind     string           `json:"kind"`
	Valid    bool             `json:"valid"`
	Problems []bridge.Problem `json:"problems"`
	Fix      string           `json:"fix,omitempty"`
}

func (a *App) newBridgeValidateCmd() *cobra.Command {
	var o bridgeValidateOpts
	c := &cobra.Command{
		Use:   "validate [FILE]",
		Short: "Check a response (or request) file against the bridge's JSON Schema and name each mistake",
		Long: `Check FILE (default: the state directory's .agent-response.json) with the shipped JSON Schema
and list each problem, naming the common mistakes: "result" instead of "response",
"response" as an object instead of a string, missing fields, duration_seconds as a string.
A response is also compared with the outstanding request. Exits 6 when anything is wrong and
prints the command that writes the file right.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.File = args[0]
			}
			return a.runBridgeValidate(c.Context(), o)
		},
	}
	c.Flags().StringVar(&o.Kind, "kind", "", "request, response or checkpoint (default: from the file)")
	return c
}

func (a *App) runBridgeValidate(_ context.Context, o bridgeValidateOpts) error {
	dir := a.bridgeDir()
	path := o.File
	switch {
	case path == "":
		path = bridge.PathsIn(dir).Response
	case !filepath.IsAbs(path):
		path = filepath.Join(a.env.Cwd, path)
	}
	data, err := a.readInput("validate", path)
	if err != nil {
		return err
	}
	k, err := validateKind(o.Kind, path, data)
	if err != nil {
		return err
	}
	v := bridgeValidation{File: path, Kind: string(k), Problems: bridge.Diagnose(k, data)}
	if k == bridge.KindResponse {
		p, err := bridge.CheckOutstanding(dir, data)
		if err != nil {
			return err
		}
		if p != nil {
			v.Problems = append(v.Problems, *p)
		}
	}
	if v.Valid = len(v.Problems) == 0; !v.Valid {
		v.Fix = bridge.FixCommand(k, dir)
	} else {
		v.Problems = []bridge.Problem{}
	}
	if err := a.emit(v, func(w io.Writer) { printValidation(w, v) }); err != nil || v.Valid {
		return err
	}
	return errs.New(errs.Invalid, "%s is not a valid agent %s (%d problems); write it with '%s'", path, k, len(v.Problems), v.Fix)
}

func validateKind(flag, path string, data []byte) (bridge.Kind, error) {
	switch flag {
	case "request", "response", "checkpoint":
		return bridge.Kind(flag), nil
	case "":
	default:
		return "", errs.New(errs.Usage, "--kind %q: it is request, response or checkpoint", flag)
	}
	switch filepath.Base(path) {
	case bridge.RequestFile:
		return bridge.KindRequest, nil
	case "checkpoint.json":
		return bridge.KindCheckpoint, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) == nil && m["prompt"] != nil && m["agent_name"] != nil {
		return bridge.KindRequest, nil
	}
	return bridge.KindResponse, nil
}

func printValidation(w io.Writer, v bridgeValidation) {
	if v.Valid {
		printf(w, "OK: %s is a valid agent %s", v.File, v.Kind)
		return
	}
	printf(w, "INVALID: %s is not a valid agent %s (%d problems):", v.File, v.Kind, len(v.Problems))
	for _, p := range v.Problems {
		printf(w, "  - %s", p.Message)
	}
	printf(w, "FIX: %s", v.Fix)
}

// ---- bridge status

func (a *App) newBridgeStatusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the run, the outstanding request, and whether the waiting response would be accepted",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return a.runBridgeStatus(c.Context()) },
	}
}

func (a *App) runBridgeStatus(_ context.Context) error {
	st, err := bridge.Inspect(a.bridgeDir())
	if err != nil {
		return err
	}
	return a.emit(st, func(w io.Writer) { printBridgeStatus(w, st) })
}

func printBridgeStatus(w io.Writer, st *bridge.Status) {
	printf(w, "STATE_DIR: %s", st.Dir)
	if st.RunID == "" {
		printf(w, "RUN: none")
	} else {
		printf(w, "RUN: %s (checkpoint %s, updated %s)", st.RunID, st.Checkpoint, st.UpdatedAt)
	}
	if p := st.Pending; p != nil {
		printf(w, "PENDING: request %s (phase %d %q, agent %s), written %s, timeout %ds", p.RequestID, p.Phase, p.PhaseName, p.AgentName, p.CreatedAt, p.TimeoutSeconds)
	} else {
		printf(w, "PENDING: none")
	}
	if st.Request != "" {
		printf(w, "REQUEST_FILE: %s", st.Request)
	}
	printf(w, "RESPONSE: %s", describeResponse(st.Response))
	for _, r := range st.Requests {
		printf(w, "REQUEST: %d %s %s %s %s", r.Phase, r.PhaseName, r.AgentName, r.RequestID, orDefault(r.ResponseStatus, r.Status))
	}
	for _, s := range st.SetAside {
		printf(w, "SET_ASIDE: %s", s)
	}
}

func describeResponse(r *bridge.ResponseStatus) string {
	switch {
	case r == nil:
		return "none"
	case r.Accepted:
		return fmt.Sprintf("%s answers the outstanding request: a resume will accept it", r.Path)
	}
	msg := fmt.Sprintf("%s would be refused: %s", r.Path, r.Reason)
	for _, p := range r.Problems {
		msg += "; " + p.Message
	}
	return msg
}

// ---- bridge clean

type bridgeCleaned struct {
	Dir     string   `json:"state_dir"`
	Removed []string `json:"removed"`
}

func (a *App) newBridgeCleanCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "clean",
		Short: "Remove the request, the response, set-aside responses, the checkpoint and the run store",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return a.runBridgeClean(c.Context()) },
	}
}

func (a *App) runBridgeClean(_ context.Context) error {
	if err := a.refuseInsideSession("baton bridge clean"); err != nil {
		return err
	}
	dir := a.bridgeDir()
	removed, err := bridge.Clean(dir)
	if err != nil {
		return fmt.Errorf("bridge clean: %w (removed so far: %s)", err, strings.Join(removed, ", "))
	}
	if removed == nil {
		removed = []string{}
	}
	return a.emit(bridgeCleaned{Dir: dir, Removed: removed}, func(w io.Writer) {
		for _, p := range removed {
			printf(w, "REMOVED: %s", p)
		}
		printf(w, "SUCCESS: removed %d bridge files from %s", len(removed), dir)
	})
}

// ---- bridge complete

func (a *App) newBridgeCompleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "complete",
		Short: "End a finished run: no request is left, and its checkpoint and stored answers are removed",
		Long: `What an orchestrator written as a script calls when it has finished (an orchestrator
removes its state file on success): the request and any unasked response are removed or set
aside, and the run's checkpoint and stored answers are deleted. A later --resume finds nothing
to resume (exit 4).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.runBridgeComplete(c.Context()) },
	}
}

func (a *App) runBridgeComplete(ctx context.Context) error {
	if err := a.refuseInsideSession("baton bridge complete"); err != nil {
		return err
	}
	dir := a.bridgeDir()
	b, err := bridge.Open(bridge.Options{Dir: dir, Resume: true, Cwd: a.env.Cwd, Now: a.env.Now, Warn: a.messages(), Ctx: ctx})
	if err != nil {
		return err
	}
	if err := b.Complete(); err != nil {
		return err
	}
	return a.emit(map[string]string{"state_dir": dir, "run_id": b.Checkpoint().RunID, "checkpoint": bridge.CheckpointDone}, func(w io.Writer) {
		printf(w, "SUCCESS: run %s is complete; its state was removed from %s", b.Checkpoint().RunID, dir)
	})
}

// ---- bridge install-claude-command

type installClaudeOpts struct {
	Name, Dir string
	Force     bool
}

type installedClaude struct {
	Path    string `json:"path"`
	Command string `json:"command"`
}

func (a *App) newBridgeInstallClaudeCmd() *cobra.Command {
	var o installClaudeOpts
	c := &cobra.Command{
		Use:   "install-claude-command",
		Short: "Write the Claude Code slash command that hosts 'baton run' (.claude/commands/baton-run.md)",
		Long: `Write a ready-to-use Claude Code slash command to .claude/commands/NAME.md in the project (the
state directory, or --dir). In Claude Code, /NAME [baton run flags] then drives the run: it runs
'baton --json run', treats exit 42 as "run this agent" (never as an error), runs the named role
as a subagent with the request's prompt, writes its answer with 'baton bridge respond --token',
and resumes with 'baton run --resume' until baton is done or stops. An existing file is not
replaced without --force. The same file is shipped as bridge/claude-command.md.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.runInstallClaude(o) },
	}
	c.Flags().StringVar(&o.Name, "name", "baton-run", "name of the slash command (the file NAME.md)")
	c.Flags().StringVar(&o.Dir, "dir", "", "project directory holding .claude/ (default: the state directory)")
	c.Flags().BoolVar(&o.Force, "force", false, "replace an existing command file")
	return c
}

func (a *App) runInstallClaude(o installClaudeOpts) error {
	if o.Name == "" || strings.ContainsAny(o.Name, `/\ `) || strings.HasPrefix(o.Name, ".") {
		return errs.New(errs.Usage, "--name %q: a command name is a plain file name, such as baton-run", o.Name)
	}
	dir := o.Dir
	switch {
	case dir == "":
		dir = a.bridgeDir()
	case !filepath.IsAbs(dir):
		dir = filepath.Join(a.env.Cwd, dir)
	}
	path := filepath.Join(dir, ".claude", "commands", o.Name+".md")
	if _, err := os.Lstat(path); err == nil && !o.Force {
		return errs.New(errs.Conflict, "%s already exists; nothing was written (pass --force to replace it)", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := app.WriteFile(path, []byte(bridge.ClaudeCommand), 0o644); err != nil {
		return err
	}
	return a.emit(installedClaude{Path: path, Command: "/" + o.Name}, func(w io.Writer) {
		printf(w, "SUCCESS: wrote %s; in Claude Code, run /%s [baton run flags] to drive the run", path, o.Name)
	})
}

// ---- bridge loop

type bridgeLoopOpts struct {
	MaxIterations int
	MaxAttempts   int
	MaxOutput     int
	AgentCmd      string
	Resume        bool
	Orchestrator  []string
}

func (a *App) newBridgeLoopCmd() *cobra.Command {
	var o bridgeLoopOpts
	c := &cobra.Command{
		Use:   "loop [--max-iterations N] [--agent-cmd CMD] [--resume] -- ORCHESTRATOR [ARGS...]",
		Short: "Be the host: run the orchestrator, answer each exit 42 with the agent command, resume",
		Long: `The host's loop. Run ORCHESTRATOR (with $BATON_STATE_DIR set to the state directory);
when it exits 42, run CMD with sh -c, the request's prompt on stdin and the request's
timeout_seconds, and write its stdout as the response (an error envelope when it exits
non-zero, a timeout envelope when it overruns); then re-run ORCHESTRATOR with --resume.
Stop when it exits 0, when it fails (its exit status 1-6 or 130 is passed on, named as baton
names its own), when it asks again without having taken its response (exit 5: it is not
resuming), when it asks one request (same agent, phase name, prompt and context) again after
--max-attempts answers (exit 5: no progress), or, with --max-iterations N, after N runs (exit
42, the request left outstanding). A run that progresses is never stopped for its length.
Agent output over --max-output bytes stops the agent and is answered as an error; output that
is not UTF-8 is kept byte for byte (base64, metadata.response_encoding).
CMD also gets BATON_REQUEST_ID, BATON_AGENT, BATON_PHASE, BATON_PHASE_NAME,
BATON_REQUEST_FILE, BATON_RESPONSE_FILE and BATON_TIMEOUT_SECONDS.

Ctrl-C (SIGINT), SIGTERM and SIGHUP stop the children — the agent's whole process group —
and exit 130, 143 and 129; nothing half-written is left, and
'baton bridge loop --resume ...' continues (answering an outstanding request first).
Without --agent-cmd (or $BATON_AGENT_CMD) the loop stops at the first request (exit 42).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.Orchestrator = args
			return a.runBridgeLoop(c.Context(), o)
		},
	}
	c.Flags().SetInterspersed(false)
	c.Flags().IntVar(&o.MaxIterations, "max-iterations", 0, "run the orchestrator at most N times (0: no limit)")
	c.Flags().IntVar(&o.MaxAttempts, "max-attempts", bridge.DefaultMaxAttempts, "answer one request at most N times")
	c.Flags().IntVar(&o.MaxOutput, "max-output", bridge.DefaultMaxOutput, "largest agent output (bytes) kept; more is answered as an error")
	c.Flags().StringVar(&o.AgentCmd, "agent-cmd", "", "shell command that answers a prompt on stdin (default $BATON_AGENT_CMD)")
	c.Flags().BoolVar(&o.Resume, "resume", false, "continue a run: answer what is outstanding, run the orchestrator with --resume")
	return c
}

func (a *App) runBridgeLoop(ctx context.Context, o bridgeLoopOpts) error {
	if o.MaxIterations < 0 || o.MaxAttempts < 1 || o.MaxOutput < 1 {
		return errs.New(errs.Usage, "--max-iterations %d, --max-attempts %d, --max-output %d: --max-attempts and --max-output must be at least 1, --max-iterations at least 0 (no limit)", o.MaxIterations, o.MaxAttempts, o.MaxOutput)
	}
	if err := a.refuseInsideSession("baton bridge loop"); err != nil {
		return err
	}
	ctx, sig := withTermSignals(ctx)
	defer sig.stop()
	stdout := a.env.Stdout
	if a.g.JSON {
		stdout = a.env.Stderr // stdout carries the one JSON document
	}
	res, err := bridge.Loop(ctx, bridge.LoopOptions{
		Dir: a.bridgeDir(), Orchestrator: o.Orchestrator, AgentCmd: orDefault(o.AgentCmd, a.env.Getenv("BATON_AGENT_CMD")),
		MaxIterations: o.MaxIterations, MaxAttempts: o.MaxAttempts, MaxOutput: o.MaxOutput, Resume: o.Resume, Cwd: a.env.Cwd, Env: os.Environ(),
		Stdout: stdout, Stderr: a.env.Stderr, Now: a.env.Now, Token: a.env.Getenv("BATON_HOST_TOKEN"),
	})
	// under --json a loop stopped at a checkpoint prints the checkpoint
	// document (reportError), its one document
	if res != nil && (err == nil || (a.g.JSON && !errs.Is(err, errs.NeedAgent))) {
		if eerr := a.emit(res, func(w io.Writer) { printLoopResult(w, res) }); eerr != nil {
			return eerr
		}
	}
	return sig.exitFor(err)
}

func printLoopResult(w io.Writer, res *bridge.LoopResult) {
	printf(w, "SUCCESS: the orchestrator finished after %d runs and %d agent invocations", res.Iterations, len(res.Agents))
	for _, r := range res.Agents {
		printf(w, "AGENT: %d %s %s %s %.1fs", r.Phase, r.PhaseName, r.AgentName, r.Status, r.DurationSeconds)
	}
}

func secondsDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
