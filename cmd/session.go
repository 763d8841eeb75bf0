package cmd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/errs"
	"github.com/baton-cli/baton/features"
	"github.com/baton-cli/baton/gitops"
	"github.com/baton-cli/baton/progress"
)

func (a *App) newSessionCmd() *cobra.Command {
	return group("session", "Start, end and show role-bound sessions",
		a.newSessionStartCmd(), a.newSessionEndCmd(), a.newSessionCurrentCmd())
}

// ---- session start

type sessionStartOpts struct {
	Agent, Features, Branch string
}

type sessionStarted struct {
	progress.OpenSession
	Env map[string]string `json:"env"`
}

func (a *App) newSessionStartCmd() *cobra.Command {
	var o sessionStartOpts
	c := &cobra.Command{
		Use:   "start",
		Short: "Open a session for a role (id assigned under the lock) and print how to bind to it",
		Long: `Open a session. Every later call made with BATON_SESSION=<id> in its environment acts as
that session's role. When exactly one session is open, calls without BATON_SESSION act as it.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.runSessionStart(c.Context(), c.CommandPath(), o) },
	}
	c.Flags().StringVar(&o.Agent, "agent", "", "role: "+strings.Join(progress.AgentTypes, ", ")+" (required)")
	c.Flags().StringVar(&o.Features, "feature", "", "feature id or batch the session works on")
	c.Flags().StringVar(&o.Branch, "branch", "", "branch the session works on")
	_ = c.MarkFlagRequired("agent")
	return c
}

func (a *App) runSessionStart(ctx context.Context, cmdPath string, o sessionStartOpts) error {
	role, err := progress.Choose("--agent", o.Agent, progress.AgentTypes, nil)
	if err != nil {
		return err
	}
	ids := features.SplitIDs(o.Features)
	var started progress.OpenSession
	var phase string
	var decided bool // the phase was computed, not the initial default
	err = a.update(ctx, cmdPath, progress.FileName, func(st *state) error {
		p, err := st.progress()
		if err != nil {
			return err
		}
		open, err := st.openSessions()
		if err != nil {
			return err
		}
		if err := checkFeatureIDs(st, ids); err != nil {
			return err
		}
		cur, err := p.Status()
		if err != nil {
			return err
		}
		phase = cur.CurrentPhase
		decided = gjson.GetBytes(p.StatusRaw(), "decision.rule").Exists()
		p.ReserveAfter(open.MaxID())
		started = progress.OpenSession{
			SessionID: p.NextSessionID(), AgentType: role, StartedAt: st.stamp(), Features: ids,
			Branch: progress.Nullable(o.Branch), BaseCommit: a.head(), Phase: phase,
		}
		if started.Features == nil {
			started.Features = []string{}
		}
		open.Open = append(open.Open, started)
		st.touch(progress.OpenFileName)
		id := started.SessionID
		st.who = &actor{Role: role, Session: &id, Source: "session start"}
		st.whoResolved = true
		st.summary = fmt.Sprintf("started session %d as %s", id, role)
		st.taskID = progress.Nullable(strings.Join(ids, ","))
		return nil
	})
	if err != nil {
		return err
	}
	if phase != "" && decided && canonicalRole(phase) != canonicalRole(role) {
		a.warn("the workflow's next phase is %s, not %s (see 'baton next')", phase, role)
	}
	env := map[string]string{"BATON_SESSION": strconv.Itoa(started.SessionID)}
	return a.emit(sessionStarted{OpenSession: started, Env: env}, func(w io.Writer) {
		printf(w, "SUCCESS: Started session %d as %s", started.SessionID, role)
		printf(w, "export BATON_SESSION=%d", started.SessionID)
	})
}

// ---- session end

type sessionEndOpts struct {
	Session              int
	Outcome, Summary     string
	Failure, Severity    string
	Commits              []string
	CommitFrom, CommitTo string
	Features, NextPhase  string
}

func (a *App) newSessionEndCmd() *cobra.Command {
	var o sessionEndOpts
	c := &cobra.Command{
		Use:   "end",
		Short: "Finish the bound session: record it in progress.json and compute the next phase",
		Args:  cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 && !c.Flags().Changed("commits") {
				return errs.New(errs.Usage, "unexpected argument %q (commits go after --commits)", args[0])
			}
			o.Commits = append(o.Commits, args...)
			return a.runSessionEnd(c.Context(), c.CommandPath(), o)
		},
	}
	f := c.Flags()
	f.IntVar(&o.Session, "session", 0, "session to end (default: $BATON_SESSION, else the one open session)")
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

func (a *App) runSessionEnd(ctx context.Context, cmdPath string, o sessionEndOpts) error {
	outcome, err := progress.NormalizeOutcome(o.Outcome)
	if err != nil {
		return err
	}
	commits, err := a.parseCommits(o.Commits)
	if err != nil {
		return err
	}
	fromFlag, err := a.commitRef("--commit-from", o.CommitFrom)
	if err != nil {
		return err
	}
	to, err := a.commitRef("--commit-to", o.CommitTo)
	if err != nil {
		return err
	}
	var failure *progress.FailureSignature
	if o.Failure != "" {
		code := strings.ToLower(strings.TrimSpace(o.Failure))
		if !slices.Contains(progress.FailureCodes, code) {
			return errs.New(errs.Usage, "--failure: %q is not one of %s", o.Failure, strings.Join(progress.FailureCodes, ", "))
		}
		if outcome != "ERROR" {
			return errs.New(errs.Usage, "--failure describes an ERROR outcome; give -o ERROR")
		}
		failure = &progress.FailureSignature{Code: code, Message: o.Summary, Severity: o.Severity}
	}
	var ended progress.Session
	err = a.update(ctx, cmdPath, progress.FileName, func(st *state) error {
		p, err := st.progress()
		if err != nil {
			return err
		}
		open, err := st.openSessions()
		if err != nil {
			return err
		}
		sess, err := a.sessionToEnd(st, open, o.Session)
		if err != nil {
			return err
		}
		ended = progress.Session{
			SessionID: sess.SessionID, AgentType: sess.AgentType, StartedAt: sess.StartedAt, CompletedAt: st.stamp(),
			Summary: o.Summary, FeaturesTouched: sess.Features, Outcome: outcome, Commits: commits, Failure: failure,
		}
		if failure != nil {
			failure.StageID = sess.AgentType
		}
		if o.Features != "" {
			ended.FeaturesTouched = features.SplitIDs(o.Features)
			if err := checkFeatureIDs(st, ended.FeaturesTouched); err != nil {
				return err
			}
		}
		from := sess.BaseCommit
		if fromFlag != nil {
			from = fromFlag
		}
		toGiven := to != nil
		if to == nil {
			to = a.head()
		}
		branch := a.sessionBranch(p, sess)
		if err := st.confineRange(sess, branch, &from, &to, toGiven); err != nil {
			return err
		}
		if ended.Commits, ended.CommitRange, err = a.sessionRange(commits, from, to); err != nil {
			return err
		}
		if err := st.checkReady(ended, branch); err != nil {
			return err
		}
		if err := p.AddSessionWithID(ended); err != nil {
			return err
		}
		open.Remove(sess.SessionID)
		st.touch(progress.FileName)
		st.touch(progress.OpenFileName)
		st.summary = fmt.Sprintf("ended session %d (%s, %s)", sess.SessionID, sess.AgentType, outcome)
		st.record = ended
		st.taskID = progress.Nullable(strings.Join(ended.FeaturesTouched, ","))
		feature := progress.Nullable(strings.Join(ended.FeaturesTouched, ","))
		return st.afterSession(p, ended, feature, branch, sess.AgentType, o.NextPhase)
	})
	if err != nil {
		return err
	}
	return a.emit(ended, func(w io.Writer) {
		printf(w, "SUCCESS: Ended session %d", ended.SessionID)
		printJSON(w, ended)
	})
}

// sessionBranch is the branch a session worked on: the one it was started
// with, else the branch checked out where it ends (an agent that made its
// branch itself), else the status's.
func (a *App) sessionBranch(p *progress.File, sess progress.OpenSession) *string {
	if sess.Branch != nil {
		return sess.Branch
	}
	if r := a.repo(); r != nil {
		if b, err := r.CurrentBranch(); err == nil && b != "" {
			if main, err := gitops.MainBranch(r, ""); err == nil && b != main {
				return &b
			}
		}
	}
	cur, _ := p.Status()
	return cur.CurrentBranch
}

// sessionToEnd picks the session `session end` closes: --session, else
// the bound one, else the one open session. Only that session (or a
// person) may end it.
func (a *App) sessionToEnd(st *state, open *progress.OpenSessions, flag int) (progress.OpenSession, error) {
	who, err := st.resolveActor()
	if err != nil {
		return progress.OpenSession{}, err
	}
	id := flag
	if id == 0 && who != nil && who.Session != nil {
		id = *who.Session
	}
	if id == 0 {
		switch len(open.Open) {
		case 0:
			return progress.OpenSession{}, errs.New(errs.NotFound, "no session is open (start one with 'baton session start --agent ROLE')")
		case 1:
			id = open.Open[0].SessionID
		default:
			return progress.OpenSession{}, errs.New(errs.Usage, "%d sessions are open: say which with BATON_SESSION or --session", len(open.Open))
		}
	}
	s, err := open.Get(id)
	if err != nil {
		return s, err
	}
	if who != nil && who.Role != "HUMAN" && who.Session != nil && *who.Session != id {
		return s, st.refuse(errs.New(errs.Policy, "session %d (%s) may not end session %d (%s); only that session or a person (--as HUMAN --reason) may", *who.Session, who.Role, id, s.AgentType))
	}
	if who == nil || who.Session == nil {
		st.who = &actor{Role: s.AgentType, Session: &s.SessionID, Source: "session end"}
		if who != nil && who.Role == "HUMAN" {
			st.who = who
		}
		st.whoResolved = true
	}
	return s, nil
}

// ---- session current

func (a *App) newSessionCurrentCmd() *cobra.Command {
	return &cobra.Command{
		Use: "current", Short: "Show the bound session, or every open session", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			open, err := readFile(c.Context(), a, progress.OpenFileName, "baton session start --agent ROLE", progress.ParseOpen)
			if errs.Is(err, errs.NotFound) {
				open, err = &progress.OpenSessions{}, nil
			}
			if err != nil {
				return err
			}
			list := open.Open
			if v := a.env.Getenv("BATON_SESSION"); v != "" {
				id, _ := strconv.Atoi(v)
				s, err := open.Get(id)
				if err != nil {
					return errs.New(errs.NotFound, "BATON_SESSION=%s names no open session", v)
				}
				list = []progress.OpenSession{s}
			}
			if list == nil {
				list = []progress.OpenSession{}
			}
			return a.emit(map[string]any{"sessions": list}, func(w io.Writer) {
				if len(list) == 0 {
					printf(w, "NO_SESSION: no session is open")
				}
				for _, s := range list {
					printf(w, "SESSION: %d %s started %s features %s branch %s", s.SessionID, s.AgentType, s.StartedAt, orDash(strings.Join(s.Features, ",")), orDash(deref(s.Branch)))
				}
			})
		},
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
