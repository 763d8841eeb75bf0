// Package cli is baton's command line: cobra commands that parse flags into
// options and run them against the state store and the domain packages. It
// is also the composition root: Main receives the process's environment once
// and maps every error to an exit code in one place.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/itchyny/gojq"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
)

// Version is baton's version. Releases set it at build time
// (make build VERSION=v1.2.3, or -ldflags "-X .../internal/cli.Version=v1.2.3");
// otherwise it comes from the build: the module version of a
// 'go install …@version', or the VCS revision of a build from a checkout.
var Version = ""

// version is Version, or what the build info says when it is unset.
func version() string {
	if Version != "" {
		return Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionFrom(bi)
}

// versionFrom names a build: its module version when it has one, else
// "devel" with the commit (and "+dirty" for uncommitted changes).
func versionFrom(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += "+dirty"
	}
	return "devel-" + rev
}

// Env is everything baton takes from its process: streams, environment,
// working directory and clock.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Cwd            string
	Now            func() time.Time
}

// ProcessEnv reads the real process environment.
func ProcessEnv() Env {
	cwd, _ := os.Getwd()
	return Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Cwd: cwd, Now: time.Now}
}

// globalOpts are the flags every command takes.
type globalOpts struct {
	app.Options
	JSON   bool
	As     string
	Reason string
	JQ     string
	Fields string
}

// App carries the environment and global options to every command.
type App struct {
	env Env
	g   globalOpts
	app *app.App // the operations, which this front end translates to and from

	// guard, when set, may refuse a command once its arguments are parsed
	// (the sandbox's broker: see sandboxbroker.go).
	guard func(*cobra.Command) error
	// box is how baton run confines its agents (nil: unconfined); tried is
	// what the last sandboxed agent tried that its broker refused.
	box   *sandboxConf
	tried *failureSignature
	spend runSpend // what the run's agents spent (runbudget.go)
	ran   bool     // a command's run started: later errors are not usage errors
	// trapSignals: SIGINT cancels the command (Main's process); sigintSeen:
	// it did.
	trapSignals, sigintSeen bool

	progressShown bool // a progress line is on the terminal (progress)

	warnings []string  // under --json: the warnings and notices for the document
	emitted  bool      // under --json: the document was printed
	view     *laneView // the live view of a lanes run on a terminal (nil: none)
	jq       *gojq.Code
	fields   []string
	cmdName  string // the running command's path below baton, as its schema is named
}

const exitCodeHelp = `Exit codes:
  0   ok
  1   unexpected error
  2   usage: a bad flag, argument or input value
  3   refused by policy (role, no role bound, fix-cycle limit, a contradicting phase, STOPPED)
  4   not found: an unknown id, a missing state file, baton run's missing agent program or OS sandbox
  5   conflict: lock timeout, merge conflict or dirty checkout, a branch moved, stale bridge
      response, file exists
  6   invalid state file: corrupt or schema-invalid JSON (nothing is written)
  7   baton run stopped at --max-sessions before DONE (run it again to continue)
  8   baton run stopped before a session past its cost budget (--max-cost, "budget")
  9   unreachable: baton runner check could not reach the runner over ssh
  42  need agent: a bridge checkpoint (answer the request, re-run with --resume)
  129 stopped by SIGHUP, 130 interrupted (SIGINT), 143 stopped by SIGTERM`

// Main runs baton with args and returns the exit code. Nothing else in baton
// exits the process.
func Main(args []string, env Env) int {
	if code, ok := agentSide(args, env); ok {
		return code
	}
	a := newApp(env)
	a.trapSignals = true // the process is this call's: SIGINT interrupts its command (interrupt.go)
	return execute(context.Background(), a, args)
}

// execute runs one baton command with a and returns its exit code.
func execute(ctx context.Context, a *App, args []string) int {
	env := a.env
	root := a.newRootCmd()
	if wantsJSON(args) { // known before parsing: a usage error is JSON too
		a.g.JSON = true
		root.SetVersionTemplate(`{"version": {{printf "%q" .Version}}, "warnings": []}` + "\n")
	}
	root.SetArgs(rewriteArgs(args))
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	a.endProgress()
	if err != nil && !a.ran {
		err = unknownCommand(root, mistypedCommand(root, args, err))
	}
	if err != nil && !a.ran && errs.KindOf(err) == errs.Unexpected {
		err = &errs.Error{Kind: errs.Usage, Msg: err.Error() + " (see 'baton --help')", Err: err}
	}
	if err != nil && a.wasInterrupted(ctx) && !errs.Is(err, errs.Interrupted) {
		err = &errs.Error{Kind: errs.Interrupted, Msg: "interrupted: " + err.Error(), Err: err}
	}
	if err != nil {
		a.reportError(err)
	}
	return errs.Code(err)
}

// newApp is the command line's front end over the application.
func newApp(env Env) *App {
	a := &App{env: env}
	a.app = app.New(app.Env{Stdin: env.Stdin, Getenv: env.Getenv, Cwd: env.Cwd, Now: env.Now, Progress: a.progress}, &a.g.Options, a)
	return a
}

// caller is how this call authenticates: the session credential in
// BATON_SESSION, or a person's --as HUMAN --reason.
func (a *App) caller() app.Caller {
	c := app.Bound(a.env.Getenv("BATON_SESSION"))
	c.As, c.Reason = a.g.As, a.g.Reason
	return c
}

// wantsJSON says whether --json (or --jq or --fields, which imply it) is
// among the arguments (before any "--").
func wantsJSON(args []string) bool {
	for _, s := range args {
		switch {
		case s == "--":
			return false
		case s == "--json" || s == "--json=true" || s == "--jq" || s == "--fields" ||
			strings.HasPrefix(s, "--jq=") || strings.HasPrefix(s, "--fields="):
			return true
		}
	}
	return false
}

func (a *App) newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "baton",
		Short: "Coordinate multi-agent coding sessions through progress.json, reviews.json and feature_list.json",
		Long: `baton is the only reader and writer of a project's progress.json, reviews.json and
feature_list.json. Every change happens under a file lock, atomically across files, with
ids assigned inside the lock and counters computed from the files.

` + exitCodeHelp,
		Version:       version(),
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetVersionTemplate("baton version {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &errs.Error{Kind: errs.Usage, Msg: err.Error(), Err: err}
	})
	pf := root.PersistentFlags()
	pf.StringVarP(&a.g.StateDir, "state-dir", "d", "", "state directory (default: $BATON_STATE_DIR, $AGENT_STATE_DIR, the main worktree's top, or .)")
	pf.StringVarP(&a.g.File, "file", "f", "", "path of this command group's state file (overrides the state directory for that file)")
	pf.BoolVar(&a.g.JSON, "json", false, "print one JSON document on stdout (errors as one JSON object on stderr)")
	pf.StringVar(&a.g.As, "as", "", "person only: act as HUMAN with your personal key (see 'baton key --help'); requires --reason")
	pf.StringVar(&a.g.Reason, "reason", "", "person only: why you override (recorded)")
	// a person's override is documented in docs/identity.md, docs/security.md and
	// 'baton key --help', not in the help every agent reads
	_ = pf.MarkHidden("as")
	_ = pf.MarkHidden("reason")
	pf.StringVar(&a.g.JQ, "jq", "", "filter the JSON document with a jq expression (implies --json), e.g. '.next.phase'")
	pf.StringVar(&a.g.Fields, "fields", "", "keep only these fields (comma-separated gjson paths) of the JSON document or of each record of its list (implies --json)")
	// --version without a short form: -v is add-review's --verdict.
	root.Flags().Bool("version", false, "print baton's version")
	root.SetGlobalNormalizationFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "agent-state-dir" {
			name = "state-dir"
		}
		return pflag.NormalizedName(name)
	})
	a.addAllCommands(root)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	a.jsonHelp(root)
	addExamples(root)
	a.addCompletions(root)
	a.markRuns(root)
	return root
}

func (a *App) addAllCommands(root *cobra.Command) {
	root.AddCommand(a.newProgressCmd(), a.newReviewsCmd(), a.newFeaturesCmd(), a.newInitCmd(), a.newSessionCmd(),
		a.newBridgeCmd(),
		a.newStatusCmd(), a.newWhatNextCmd(), a.newLogCmd(), a.newVerifyCmd(), a.newReconcileCmd(), a.newBranchCmd())
	root.AddCommand(a.newRunCmd(), a.newLandCmd(), a.newDemoCmd(), a.newContextCmd(), a.newKeyCmd(), a.newMCPCmd(), a.newRunnerCmd())
	root.AddCommand(a.newManCmd(), a.newShowCmd(), a.newSchemaCmd(), a.newReportCmd(), a.newVerificationCmd())
}

// unknownCommandError is cobra's first line for a word that names no
// command: the word and the path of the command it was given to.
var unknownCommandError = regexp.MustCompile(`^unknown command "([^"]*)" for "([^"]*)"`)

// unknownCommand rewrites cobra's unknown-command error, of the root or of
// a command group, as one line with the commands the word may have meant.
func unknownCommand(root *cobra.Command, err error) error {
	m := unknownCommandError.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	parent, _, ferr := root.Find(strings.Fields(m[2])[1:])
	if ferr != nil || parent.CommandPath() != m[2] {
		parent = root
	}
	msg := fmt.Sprintf("unknown command %q for %q", m[1], m[2])
	if parent.SuggestionsMinimumDistance <= 0 {
		parent.SuggestionsMinimumDistance = 2 // cobra's default, which it sets on the root only
	}
	if s := parent.SuggestionsFor(m[1]); len(s) > 0 {
		for i := range s {
			s[i] = strconv.Quote(s[i])
		}
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return &errs.Error{Kind: errs.Usage, Msg: fmt.Sprintf("%s (see '%s --help')", msg, m[2]), Err: err}
}

// mistypedCommand is cobra's unknown-command error for a word that names no
// subcommand of a command group, when cobra reported a flag the group does
// not take instead ("baton reviews get-lats --field verdict"); otherwise err.
func mistypedCommand(root *cobra.Command, args []string, err error) error {
	c, rest, ferr := root.Find(args)
	if ferr != nil || !c.HasSubCommands() {
		return err
	}
	flags := c.Flags()
	flags.AddFlagSet(c.InheritedFlags())
	for i := 0; i < len(rest); i++ {
		s := rest[i]
		if s == "--" {
			return err
		}
		if !strings.HasPrefix(s, "-") || s == "-" {
			return fmt.Errorf("unknown command %q for %q", s, c.CommandPath())
		}
		if strings.Contains(s, "=") {
			continue
		}
		name := strings.TrimLeft(s, "-")
		f := flags.Lookup(name)
		if !strings.HasPrefix(s, "--") && len(name) == 1 {
			f = flags.ShorthandLookup(name)
		}
		if f != nil && f.NoOptDefVal == "" {
			i++ // the flag's value
		}
	}
	return err
}

// markRuns wraps every command's run so that Main can tell an error of
// cobra's own argument checking (a usage error) from one a command returned.
func (a *App) markRuns(c *cobra.Command) {
	if run := c.RunE; run != nil {
		c.RunE = func(c *cobra.Command, args []string) error {
			a.cmdName = strings.TrimPrefix(c.CommandPath(), "baton ")
			if err := a.prepareFilters(); err != nil {
				return err
			}
			a.ran = true
			if a.guard != nil {
				if err := a.guard(c); err != nil {
					return err
				}
			}
			if err := checkInputText(c, args); err != nil {
				return err
			}
			defer a.trapInterrupt(c)()
			return run(c, args)
		}
	}
	for _, sub := range c.Commands() {
		a.markRuns(sub)
	}
}

// negativeIndex says whether s is a negative number (-1, -12).
func negativeIndex(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// rewriteArgs lets `progress get-session -1` name the last session (pflag
// would read -1 as a flag): a negative number after get-session becomes the
// internal form @-1.
func rewriteArgs(args []string) []string {
	out := make([]string, len(args))
	seen := false
	for i, s := range args {
		if s == "get-session" {
			seen = true
		}
		if seen && negativeIndex(s) {
			s = "@" + s
		}
		out[i] = s
	}
	return out
}

// group builds a command group (progress, reviews, features).
func group(use, short string, cmds ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs, RunE: func(c *cobra.Command, args []string) error {
		return errs.New(errs.Usage, "%s needs a subcommand (see 'baton %s --help')", use, use)
	}}
	c.AddCommand(cmds...)
	return c
}
