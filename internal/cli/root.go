// Package cmd is baton's command line: cobra commands that parse flags into
// options and run them against the state store and the domain packages. It
// is also the composition root: Main receives the process's environment once
// and maps every error to an exit code in one place.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/third_party/gojq"
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
	// OneShot is set when the process exits once Main returns (ProcessEnv;
	// Main clears it for the commands that live): what a call maps is
	// then left to the exit to unmap.
	OneShot bool
}

// ProcessEnv reads the real process environment.
func ProcessEnv() Env {
	cwd, _ := os.Getwd()
	return Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Cwd: cwd, Now: time.Now, OneShot: true}
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

	// completing is set for a shell's completion request (cobra's
	// __complete): only then are the completion functions registered.
	completing bool
	// group is the one command group (progress, reviews, features) the
	// arguments run, the only part of the tree then built ("" for all);
	// subName the subcommand of it they name, the only one then built ("" for
	// all of them, as for a help request).
	group, subName string

	// guard, when set, may refuse a command once its arguments are parsed
	// (the sandbox's broker: see sandboxbroker.go).
	guard func(*cobra.Command) error
	// box is how baton run confines its agents (nil: unconfined); tried is
	// what the last sandboxed agent tried that its broker refused.
	box   *sandboxConf
	tried *failureSignature
	ran   bool // a command's run started: later errors are not usage errors
	// trapSignals: SIGINT cancels a command that may write (Main's
	// process); sigintSeen: it did.
	trapSignals, sigintSeen bool

	warnings []string // under --json: the warnings and notices for the document
	emitted  bool     // under --json: the document was printed
	jq       *gojq.Code
	fields   []string
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
  42  need agent: a bridge checkpoint (answer the request, re-run with --resume)
  129 stopped by SIGHUP, 130 interrupted (SIGINT), 143 stopped by SIGTERM`

// Main runs baton with args and returns the exit code. Nothing else in baton
// exits the process.
func Main(args []string, env Env) int {
	if code, ok := agentSide(args, env); ok {
		return code
	}
	if LongRunning(args) {
		env.OneShot = false
	}
	a := newApp(env)
	a.trapSignals = true // the process is this call's: SIGINT interrupts its command (interrupt.go)
	return execute(context.Background(), a, args)
}

// execute runs one baton command with a and returns its exit code.
func execute(ctx context.Context, a *App, args []string) int {
	env := a.env
	if versionRequest(args) { // the version alone: no command tree, no parsing
		return a.printVersion(wantsJSON(args))
	}
	a.completing = completionRequest(args)
	a.group, a.subName = groupRequest(args)
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

// printVersion prints what the root command's version template prints
// (see newRootCmd), without building a command or executing a template.
func (a *App) printVersion(json bool) int {
	if json {
		fmt.Fprintf(a.env.Stdout, "{\"version\": %s, \"warnings\": []}\n", strconv.Quote(version()))
	} else {
		fmt.Fprintf(a.env.Stdout, "baton version %s\n", version())
	}
	return 0
}

// newApp is the command line's front end over the application.
func newApp(env Env) *App {
	a := &App{env: env}
	a.app = app.New(app.Env{Stdin: env.Stdin, Getenv: env.Getenv, Cwd: env.Cwd, Now: env.Now, OneShot: env.OneShot}, &a.g.Options, a)
	return a
}

// caller is how this call authenticates: the session credential in
// BATON_SESSION, or a person's --as HUMAN --reason.
func (a *App) caller() app.Caller {
	c := app.Bound(a.env.Getenv("BATON_SESSION"))
	c.As, c.Reason = a.g.As, a.g.Reason
	return c
}

// completionRequest says whether args are a shell's completion request
// (the hidden commands cobra's completion scripts run).
func completionRequest(args []string) bool {
	return len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd)
}

// versionRequest says whether args are --version, with --json at most.
func versionRequest(args []string) bool {
	version := false
	for _, s := range args {
		switch s {
		case "--version", "--version=true":
			version = true
		case "--json", "--json=true":
		default:
			return false
		}
	}
	return version
}

// groupRequest names the command group the arguments run when it is
// progress, reviews or features ("" otherwise, and for a completion
// request), and the subcommand of it they name ("" for none, and for a
// help request).
func groupRequest(args []string) (group, sub string) {
	if completionRequest(args) {
		return "", ""
	}
	words := commandWords(args, 2)
	if len(words) == 0 || (words[0] != "progress" && words[0] != "reviews" && words[0] != "features") {
		return "", ""
	}
	if len(words) == 1 || helpRequest(args) {
		return words[0], ""
	}
	return words[0], words[1]
}

// commandWords are the first n arguments that are neither a global flag
// nor its value: the command's path (at most n words of it).
func commandWords(args []string, n int) []string {
	var words []string
	for i := 0; i < len(args) && len(words) < n; i++ {
		switch s := args[i]; {
		case s == "-d" || s == "--state-dir" || s == "--agent-state-dir" || s == "-f" || s == "--file" ||
			s == "--as" || s == "--reason" || s == "--jq" || s == "--fields":
			i++ // the flag's value
		case s == "--":
			return words
		case strings.HasPrefix(s, "-"):
		default:
			words = append(words, s)
		}
	}
	return words
}

// helpRequest says whether the arguments ask for help.
func helpRequest(args []string) bool {
	for _, s := range args {
		if s == "-h" || s == "--help" || s == "--help=true" || s == "help" {
			return true
		}
	}
	return false
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
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	if a.subName == "" {
		root.Version = version() // the one-subcommand tree neither prints nor serves it
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
	// a person's override is documented in the README, docs/security.md and
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
	if build, ok := a.groups()[a.group]; ok {
		root.AddCommand(build()) // the commands an agent calls most: nothing else is built
	} else {
		a.addAllCommands(root)
	}
	root.InitDefaultHelpCmd()
	if a.subName == "" {
		root.InitDefaultCompletionCmd()
	} else {
		root.CompletionOptions.DisableDefaultCmd = true // one subcommand runs: 'baton completion' is not it
	}
	a.jsonHelp(root)
	if a.subName == "" {
		addExamples(root) // for help and man pages, which the one-subcommand tree never prints
	}
	if a.completing {
		a.addCompletions(root)
	}
	a.markRuns(root)
	return root
}

// groups are the command groups that run without the rest of the tree.
func (a *App) groups() map[string]func() *cobra.Command {
	return map[string]func() *cobra.Command{"progress": a.newProgressCmd, "reviews": a.newReviewsCmd, "features": a.newFeaturesCmd}
}

func (a *App) addAllCommands(root *cobra.Command) {
	root.AddCommand(a.newProgressCmd(), a.newReviewsCmd(), a.newFeaturesCmd(), a.newInitCmd(), a.newSessionCmd(),
		a.newBridgeCmd(),
		a.newStatusCmd(), a.newWhatNextCmd(), a.newLogCmd(), a.newVerifyCmd(), a.newReconcileCmd(), a.newBranchCmd())
	root.AddCommand(a.newRunCmd(), a.newDemoCmd(), a.newContextCmd(), a.newKeyCmd(), a.newMCPCmd())
	root.AddCommand(a.newManCmd(), a.newShowCmd(), a.newSchemaCmd(), a.newReportCmd(), a.newVerificationCmd())
}

// markRuns wraps every command's run so that Main can tell an error of
// cobra's own argument checking (a usage error) from one a command returned.
func (a *App) markRuns(c *cobra.Command) {
	if run := c.RunE; run != nil {
		c.RunE = func(c *cobra.Command, args []string) error {
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

// sub is one subcommand of a command group and how it is built.
type sub struct {
	name  string
	build func() *cobra.Command
}

// lazyGroup builds the command group use: when the arguments run one of its
// subcommands (a.group and a.subName), that one alone — an agent's call builds
// one command, not the dozen of its group — else all of them.
func (a *App) lazyGroup(use, short string, subs ...sub) *cobra.Command {
	var cmds []*cobra.Command
	for _, s := range subs {
		if a.group == use && s.name == a.subName {
			return group(use, short, s.build())
		}
	}
	for _, s := range subs {
		cmds = append(cmds, s.build())
	}
	return group(use, short, cmds...)
}

// group builds a command group (progress, reviews, features).
func group(use, short string, cmds ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs, RunE: func(c *cobra.Command, args []string) error {
		return errs.New(errs.Usage, "%s needs a subcommand (see 'baton %s --help')", use, use)
	}}
	c.AddCommand(cmds...)
	return c
}
