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
	"github.com/baton-cli/baton/workflow"
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
		Short: "Open a session for a role (launchers and people only) and print its credential",
		Long: `Open a session for the role the workflow computed as next, and print its credential. Every
later call made with BATON_SESSION=<credential> in its environment acts as that session's role,
and nothing else binds a call: hand the credential to the agent that works in the session, and to
no one else. The credential dies when the session ends; baton keeps only its hash.

Only a launcher ('baton run') or a person holding their personal key ('baton key init') opens
sessions; a call bound to a session never does. A person opens a session for a role other than the
computed phase only on purpose: with --as HUMAN --reason "...", which is recorded.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.runSessionStart(c.Context(), c.CommandPath(), o) },
	}
	c.Flags().StringVar(&o.Agent, "agent", "", "role: "+strings.Join(progress.AgentTypes, ", ")+" (required)")
	c.Flags().StringVar(&o.Features, "feature", "", "feature id or batch the session works on")
	c.Flags().StringVar(&o.Branch, "branch", "", "branch the session works on")
	_ = c.MarkFlagRequired("agent")
	return c
}

// opener is who opens a session, with the key its credential comes from.
func (a *App) opener() (*personKey, string, error) {
	if a.launch != nil {
		return a.launch.key, "launcher", nil
	}
	if a.insideSession() {
		return nil, "", nil // refused inside the transaction, where it is logged
	}
	key, err := a.loadKey()
	if err != nil {
		return nil, "", err
	}
	if key == nil {
		path, _ := a.keyPath()
		return nil, "", errs.New(errs.Policy, "sessions are opened by a launcher or by a person holding the personal key, and there is no key at %s (see the README, 'Identity'); nothing was written", path)
	}
	return key, "person", nil
}

func (a *App) runSessionStart(ctx context.Context, cmdPath string, o sessionStartOpts) error {
	role, err := progress.Choose("--agent", o.Agent, progress.AgentTypes, nil)
	if err != nil {
		return err
	}
	key, openedBy, err := a.opener()
	if err != nil {
		return err
	}
	nonce, err := randomHex(16)
	if err != nil {
		return err
	}
	ids := features.SplitIDs(o.Features)
	var started progress.OpenSession
	var cred string
	err = a.update(ctx, cmdPath, progress.FileName, func(st *state) error {
		p, haveProg, err := st.progressOpt()
		if err != nil {
			return err
		}
		open, err := st.openSessions()
		if err != nil {
			return err
		}
		who, err := st.sessionOpener(open, role, openedBy)
		if err != nil {
			return err
		}
		if err := checkFeatureIDs(st, ids); err != nil {
			return err
		}
		var phase string
		id := open.MaxID() + 1
		if haveProg {
			if phase, err = st.checkPhase(p, role, who); err != nil {
				return err
			}
			p.ReserveAfter(open.MaxID())
			id = p.NextSessionID()
		}
		cred = sessionCredential(key.Secret, id, nonce)
		started = progress.OpenSession{
			SessionID: id, AgentType: role, StartedAt: st.stamp(), Features: ids,
			Branch: progress.Nullable(o.Branch), BaseCommit: a.head(), Phase: phase,
			CredentialHash: credentialHash(cred, id, role), Nonce: nonce, OpenedBy: openedBy,
		}
		if started.Features == nil {
			started.Features = []string{}
		}
		open.Open = append(open.Open, started)
		st.touch(progress.OpenFileName)
		st.opened = &openedRecord{Session: id, Role: role, Nonce: nonce, By: openedBy}
		// the event is the session's first, made by its opener
		opener := *who
		opener.Role, opener.Session = role, &id
		st.who = &opener
		st.summary = fmt.Sprintf("opened session %d as %s", id, role)
		st.taskID = progress.Nullable(strings.Join(ids, ","))
		return nil
	})
	if err != nil {
		return err
	}
	shown := started
	shown.CredentialHash, shown.Nonce = "", ""
	env := map[string]string{"BATON_SESSION": cred}
	return a.emit(sessionStarted{OpenSession: shown, Env: env}, func(w io.Writer) {
		printf(w, "SUCCESS: Started session %d as %s", started.SessionID, role)
		printf(w, "export BATON_SESSION=%s", cred)
	})
}

// checkPhase returns the computed phase and refuses a session for another
// role, unless a person opens it on purpose (--as HUMAN --reason).
func (st *state) checkPhase(p *progress.File, role string, who *actor) (string, error) {
	cur, err := p.Status()
	if err != nil {
		return "", err
	}
	decided := gjson.GetBytes(p.StatusRaw(), "decision.rule").Exists()
	onPurpose := who.Source == "person" && who.Reason != ""
	if decided && cur.CurrentPhase != "" && canonicalRole(cur.CurrentPhase) != canonicalRole(role) && !onPurpose {
		return "", st.refuse(errs.New(errs.Policy, "the workflow's next phase is %s, not %s: a %s session is not opened now (see 'baton next')", cur.CurrentPhase, role, role))
	}
	return cur.CurrentPhase, nil
}

// sessionOpener checks who opens a session: never a call bound to a
// session; a launcher; or a person with their key (on purpose, with --as
// HUMAN --reason, when the role is not the computed phase).
func (st *state) sessionOpener(open *progress.OpenSessions, role, openedBy string) (*actor, error) {
	a := st.app
	if a.insideSession() {
		who, err := st.resolveActor()
		if err != nil {
			return nil, err
		}
		return nil, st.refuse(errs.New(errs.Policy, "session %d (%s) may not open sessions: do your %s work in this session, then end it with the outcome that fits and say why in its summary", *who.Session, who.Role, who.Role))
	}
	var who *actor
	switch {
	case openedBy == "launcher":
		who = &actor{Role: workflow.Human, Source: "launcher", Person: a.launch.key.ID, Run: a.launch.runID, During: openIDs(open)}
	case a.g.As != "":
		w, err := a.personActor(open)
		if err != nil {
			return nil, err
		}
		if err := st.personWhileLaunching(); err != nil {
			return nil, err
		}
		who = w
	default:
		if launcherRunning(st.tx.Store().BatonDir()) {
			return nil, st.refuse(errs.New(errs.Policy, "a launcher (baton run) is driving this project and opens every session itself: an agent works only in the session its launcher gave it"))
		}
		key, _ := a.loadKey()
		who = &actor{Role: workflow.Human, Source: "person", Person: key.ID, During: openIDs(open)}
	}
	st.who, st.whoResolved = who, true
	return who, nil
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
		Long: `Finish the session this call is bound to (BATON_SESSION holds its credential): record it in
progress.json and compute the next phase. The credential stops binding anything.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 && !c.Flags().Changed("commits") {
				return errs.New(errs.Usage, "unexpected argument %q (commits go after --commits)", args[0])
			}
			o.Commits = append(o.Commits, args...)
			return a.runSessionEnd(c.Context(), c.CommandPath(), o)
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
			if err := st.withinSession(sess, ended.FeaturesTouched); err != nil {
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

// sessionToEnd picks the session `session end` closes: the bound one, or
// for a launcher or a person the one --session names. An agent's session
// ends only itself.
func (a *App) sessionToEnd(st *state, open *progress.OpenSessions, flag int) (progress.OpenSession, error) {
	who, err := st.resolveActor()
	if err != nil {
		return progress.OpenSession{}, err
	}
	if who == nil {
		return progress.OpenSession{}, st.refuse(errs.New(errs.Policy, "no session is bound to this call, so it may not end a session: %s", unboundHelp))
	}
	id := flag
	if who.Session != nil {
		if flag != 0 && flag != *who.Session {
			return progress.OpenSession{}, st.refuse(errs.New(errs.Policy, "session %d (%s) may not end session %d: a session ends only itself; end your own session when your work is done", *who.Session, who.Role, flag))
		}
		id = *who.Session
	}
	if id == 0 {
		return progress.OpenSession{}, errs.New(errs.Usage, "--session: say which session to end (open: %s)", orDash(joinInts(openIDs(open))))
	}
	return open.Get(id)
}

func joinInts(ids []int) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.Itoa(id)
	}
	return strings.Join(out, ",")
}

// ---- session current

func (a *App) newSessionCurrentCmd() *cobra.Command {
	return &cobra.Command{
		Use: "current", Short: "Show the bound session, or every open session", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			open, err := readFile(c.Context(), a, progress.OpenFileName, "baton init", progress.ParseOpen)
			if errs.Is(err, errs.NotFound) {
				open, err = &progress.OpenSessions{}, nil
			}
			if err != nil {
				return err
			}
			list := open.Open
			if a.insideSession() {
				s, err := boundSession(open, strings.TrimSpace(a.env.Getenv("BATON_SESSION")))
				if err != nil {
					return err
				}
				list = []progress.OpenSession{s}
			}
			shown := make([]progress.OpenSession, len(list))
			for i, s := range list {
				s.CredentialHash, s.Nonce = "", ""
				shown[i] = s
			}
			list = shown
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

// withinSession refuses an agent's session end naming features its
// session was not opened for: the work it hands to REVIEW is what it was
// given, and a PASS of it passes only that.
func (st *state) withinSession(sess progress.OpenSession, touched []string) error {
	if who, _ := st.resolveActor(); who == nil || who.Source != "session" || len(sess.Features) == 0 {
		return nil
	}
	for _, id := range touched {
		if !slices.Contains(sess.Features, id) {
			return st.refuse(errs.New(errs.Policy, "session %d works on %s, not %s: a session records and reports only the features it was given; name only %s",
				sess.SessionID, strings.Join(sess.Features, ","), id, strings.Join(sess.Features, ",")))
		}
	}
	return nil
}

// ownFeatures is withinSession for a call that names features without
// ending its session (add-session, update-status): a session's agent
// records and points at only the features it was given.
func (st *state) ownFeatures(ids []string) error {
	who, _ := st.resolveActor()
	if who == nil || who.Source != "session" || who.Session == nil || len(ids) == 0 {
		return nil
	}
	open, err := st.openSessions()
	if err != nil || open == nil {
		return err
	}
	for _, s := range open.Open {
		if s.SessionID == *who.Session {
			return st.withinSession(s, ids)
		}
	}
	return nil
}
