package cli

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/progress"
)

func (a *App) newSessionCmd() *cobra.Command {
	return group("session", "Start, end and show role-bound sessions",
		a.newSessionStartCmd(), a.newSessionEndCmd(), a.newSessionCurrentCmd())
}

func (a *App) newSessionStartCmd() *cobra.Command {
	var o app.SessionStartInput
	c := &cobra.Command{
		Use:   "start",
		Short: "Open a session for a role (launchers and people only) and print its credential",
		Long: `Open a session for the role the workflow computed as next, and print its credential. Every
later call made with BATON_SESSION=<credential> in its environment acts as that session's role,
and nothing else binds a call: hand the credential to the agent that works in the session, and to
no one else. The credential dies when the session ends; baton keeps only its hash.

Only a launcher ('baton run') or a person holding their personal key ('baton key init') opens
sessions; a call bound to a session never does. A person opens a session for a role other than the
computed phase only on purpose: with --as HUMAN --reason "...", which is recorded.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			out, err := a.app.SessionStart(c.Context(), a.caller(), o)
			if err != nil {
				return err
			}
			return a.emit(out, func(w io.Writer) {
				printf(w, "SUCCESS: Started session %d as %s", out.SessionID, out.AgentType)
				printf(w, "export BATON_SESSION=%s", out.Env["BATON_SESSION"])
			})
		},
	}
	c.Flags().StringVar(&o.Agent, "agent", "", "role: "+strings.Join(progress.AgentTypes, ", ")+" (required)")
	c.Flags().StringVar(&o.Features, "feature", "", "feature id or batch the session works on")
	c.Flags().StringVar(&o.Branch, "branch", "", "branch the session works on")
	_ = c.MarkFlagRequired("agent")
	return c
}

func (a *App) newSessionEndCmd() *cobra.Command {
	var o app.SessionEndInput
	c := &cobra.Command{
		Use:   "end",
		Short: "Finish the bound session: record it in progress.json and compute the next phase",
		Long: `Finish the session this call is bound to (BATON_SESSION holds its credential): record it in
progress.json and compute the next phase. The credential stops binding anything, and the output's
"unset BATON_SESSION" line clears it from a shell: eval "$(baton session end ... | grep '^unset')".`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 && !c.Flags().Changed("commits") {
				return errs.New(errs.Usage, "unexpected argument %q (commits go after --commits)", args[0])
			}
			o.Commits = append(o.Commits, args...)
			ended, err := a.app.SessionEnd(c.Context(), a.caller(), o)
			if err != nil {
				return err
			}
			return a.emit(ended, func(w io.Writer) {
				printf(w, "SUCCESS: Ended session %d", ended.SessionID)
				if o.Session == 0 && a.env.Getenv("BATON_SESSION") != "" {
					// the shell's credential is dead: eval "$(baton session end ... | grep '^unset')"
					printf(w, "unset BATON_SESSION")
				}
				printJSON(w, ended)
			})
		},
	}
	f := c.Flags()
	f.IntVar(&o.Session, "session", 0, "launchers and people: the session to end (an agent's call ends its own)")
	f.StringVarP(&o.Outcome, "outcome", "o", "", "SUCCESS, READY_FOR_REVIEW, NEEDS_FIX, REJECTED or ERROR (required)")
	f.StringVarP(&o.Summary, "summary", "s", "", "what the session did (required)")
	f.StringArrayVar(&o.Commits, "commits", nil, `commits as "hash:message"`)
	f.StringVar(&o.CommitFrom, "commit-from", "", "first commit of the range (default: the session's base commit)")
	f.StringVar(&o.CommitTo, "commit-to", "", "last commit of the range (default HEAD)")
	f.StringVar(&o.Features, "features", "", "feature ids touched (default: the session's)")
	f.StringVar(&o.NextPhase, "next-phase", "", "checked against the computed next phase")
	f.StringVar(&o.Failure, "failure", "", "with -o ERROR: failure signature code ("+strings.Join(progress.FailureCodes, ", ")+")")
	f.StringVar(&o.Severity, "failure-severity", "error", "with --failure: info, warning or error")
	_ = c.MarkFlagRequired("outcome")
	_ = c.MarkFlagRequired("summary")
	return c
}

// ---- session current

func (a *App) newSessionCurrentCmd() *cobra.Command {
	return &cobra.Command{
		Use: "current", Short: "Show the bound session, or every open session", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			out, err := a.app.SessionCurrent(c.Context(), a.caller())
			if err != nil {
				return err
			}
			list := out.Sessions
			return a.emit(map[string]any{"sessions": list}, func(w io.Writer) {
				if len(list) == 0 {
					printf(w, "NO_SESSION: no session is open")
				}
				for _, s := range list {
					printf(w, "SESSION: %d %s started %s features %s branch %s", s.SessionID, s.AgentType, s.StartedAt, app.OrDash(strings.Join(s.Features, ",")), app.OrDash(app.Deref(s.Branch)))
				}
			})
		},
	}
}
