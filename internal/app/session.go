package app

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/workflow"
)

// ---- session start

// SessionStartInput is what session start takes.
type SessionStartInput struct {
	Agent    string `json:"agent"`             // the role
	Features string `json:"feature,omitempty"` // the feature id or batch
	Branch   string `json:"branch,omitempty"`  // the branch of the work
	// Item names the step's item when it is no feature (a refactor
	// branch, ARCHITECTURE): a launcher opening a step gives its Item.
	Item string `json:"item,omitempty"`
}

// SessionStartResult is the opened session and the environment that binds
// a call to it (BATON_SESSION: the credential).
type SessionStartResult struct {
	progress.OpenSession
	Env map[string]string `json:"env"`
}

// opener is who opens a session, with the key its credential comes from.
func (a *App) opener() (*personKey, string, error) {
	if a.launch != nil {
		key, err := a.loadKey()
		return key, "launcher", err
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
		return nil, "", errs.New(errs.Policy, "sessions are opened by a launcher or by a person holding the personal key, and there is no key at %s (see docs/identity.md); nothing was written", path)
	}
	return key, "person", nil
}

// openStep picks the step a session of role opens for (workflow.OpensStep):
// a runnable step of the role, the item ids name or the first, that no
// other lane holds. It returns the status's phase too.
func (st *state) openStep(p *progress.File, role string, who *actor, item string) (workflow.Step, string, error) {
	cur, err := p.Status()
	if err != nil {
		return workflow.Step{}, "", err
	}
	pr, err := st.project(p)
	if err != nil {
		return workflow.Step{}, "", err
	}
	if len(pr.Lanes) != len(p.Lanes()) { // a lane whose session is gone holds nothing
		st.dropStaleLanes(p, pr.Lanes)
	}
	o := workflow.StepOpening{Role: role, Opener: openerOf(who), Item: item, Agents: pr.Agents, ViewPhase: cur.CurrentPhase}
	step, err := workflow.OpensStep(o, workflow.Runnable(pr), pr.Lanes)
	return step, cur.CurrentPhase, st.decide(err)
}

// openerOf says how who opens a session, for the rules.
func openerOf(who *actor) string {
	switch {
	case who.Source == "launcher":
		return workflow.LauncherOpens
	case who.Reason != "":
		return workflow.OverrideOpens
	}
	return workflow.KeyholderOpens
}

// sessionOpener checks who opens a session (workflow.MayOpen): never a
// call bound to a session; a launcher; or a person with their key.
func (st *state) sessionOpener(open *progress.OpenSessions, role, openedBy string) (*actor, error) {
	a := st.app
	if a.insideSession() {
		who, err := st.resolveActor()
		if err != nil {
			return nil, err
		}
		return nil, st.decide(workflow.MayOpen(workflow.Opening{Session: *who.Session, SessionRole: who.Role, Role: role}))
	}
	var who *actor
	switch {
	case openedBy == "launcher":
		who = &actor{Role: workflow.Human, Source: "launcher", Person: a.launch.keyID, Run: a.launch.runID, During: openIDs(open)}
	case a.caller.As != "":
		w, err := a.personActor(open)
		if err != nil {
			return nil, err
		}
		who = w
	default:
		key, _ := a.loadKey()
		who = &actor{Role: workflow.Human, Source: "person", Person: key.ID, During: openIDs(open)}
	}
	o := workflow.Opening{Role: role, Opener: openerOf(who)}
	if o.Opener != workflow.LauncherOpens {
		o.LauncherRunning = a.launcherRunning(st.tx.Store())
	}
	if err := workflow.MayOpen(o); err != nil {
		return nil, st.decide(err)
	}
	st.who, st.whoResolved = who, true
	return who, nil
}

// ---- session end

// SessionEndInput is what session end takes.
type SessionEndInput struct {
	Session    int      `json:"session,omitempty"` // launchers and people: the session to end
	Outcome    string   `json:"outcome"`
	Summary    string   `json:"summary"`
	Failure    string   `json:"failure,omitempty"`
	Severity   string   `json:"failure_severity,omitempty"`
	Commits    []string `json:"commits,omitempty"` // "hash:message"
	CommitFrom string   `json:"commit_from,omitempty"`
	CommitTo   string   `json:"commit_to,omitempty"`
	Features   string   `json:"features,omitempty"`
	NextPhase  string   `json:"next_phase,omitempty"`
}

// sessionBranch is the branch a session worked on: the one it was started
// with, else the branch checked out where it ends (an agent that made its
// branch itself), else its lane's, else the status's.
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
	if l, ok := p.LaneOf(sess.SessionID); ok { // the lane's, not another item's
		return l.Branch
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
	id, err := workflow.MayEnd(ruleActor(who), flag)
	if err != nil {
		return progress.OpenSession{}, st.decide(err)
	}
	if id == 0 {
		return progress.OpenSession{}, errs.New(errs.Usage, "--session: say which session to end (open: %s)", OrDash(joinInts(openIDs(open))))
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

// OrDash is s, or "-" for empty.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// withinSession refuses an agent's session end naming features its
// session was not opened for (workflow.WithinSession).
func (st *state) withinSession(sess progress.OpenSession, touched []string) error {
	return st.decide(workflow.WithinSession(st.actorOf(), sess.Features, touched))
}

// ownOpen is sess as the open sessions now record it (a batch widened).
func (st *state) ownOpen(sess progress.OpenSession) progress.OpenSession {
	if open, err := st.openSessions(); err == nil && open != nil {
		for _, o := range open.Open {
			if o.SessionID == sess.SessionID {
				return o
			}
		}
	}
	return sess
}

// ownFeatures is withinSession for a call that names features without
// ending its session (add-session, update-status): a session's agent
// records and points at only the features it was given.
func (st *state) ownFeatures(ids []string) error {
	if err := st.widenBatch(ids); err != nil {
		return err
	}
	who, _ := st.resolveActor()
	if who == nil || who.Session == nil || len(ids) == 0 {
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

// dropStaleLanes keeps only the lanes of open sessions (keep).
func (st *state) dropStaleLanes(p *progress.File, keep []progress.Lane) {
	for _, l := range p.Lanes() {
		if !slices.ContainsFunc(keep, func(k progress.Lane) bool { return k.Session == l.Session }) {
			p.RemoveLane(l.Session)
			st.touch(progress.FileName)
		}
	}
}

// takeStep gives an opening session its step: the step's features and
// branch where none were named, its role as the session's phase, and the
// step's item as the session's lane.
func (st *state) takeStep(p *progress.File, s *progress.OpenSession, step workflow.Step) {
	if len(s.Features) == 0 && step.Feature != nil {
		s.Features = features.SplitIDs(*step.Feature)
	}
	if s.Features == nil {
		s.Features = []string{}
	}
	if s.Branch == nil {
		s.Branch = step.Branch
	}
	if step.Item == "" {
		return
	}
	s.Phase = step.Role
	p.AddLane(progress.Lane{Item: step.Item, Role: step.Role, Session: s.SessionID, Branch: s.Branch, Since: s.StartedAt})
	st.touch(progress.FileName)
}

// SessionStart opens a session for a role and returns its credential
// (launchers and people only).
func (a *App) SessionStart(ctx context.Context, c Caller, in SessionStartInput) (SessionStartResult, error) {
	if a.remote != nil {
		return forward[SessionStartResult](ctx, a, c, "session.start", in)
	}
	var out SessionStartResult
	err := a.as(c).runSessionStart(ctx, "baton session start", in, &out)
	return out, err
}

func (a *App) runSessionStart(ctx context.Context, cmdPath string, o SessionStartInput, res *SessionStartResult) error {
	role, err := progress.Choose("--agent", o.Agent, progress.AgentTypes, nil)
	if err != nil {
		return err
	}
	_, openedBy, err := a.opener()
	if err != nil {
		return err
	}
	cred, pub, err := newCredential()
	if err != nil {
		return err
	}
	ids := features.SplitIDs(o.Features)
	var started progress.OpenSession
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
		var step workflow.Step
		id := open.MaxID() + 1
		if haveProg {
			item := o.Item
			if item == "" {
				item = strings.Join(ids, ",")
			}
			if step, phase, err = st.openStep(p, role, who, item); err != nil {
				return err
			}
			p.ReserveAfter(open.MaxID())
			id = p.NextSessionID()
		}
		started = progress.OpenSession{
			SessionID: id, AgentType: role, StartedAt: st.stamp(), Features: ids,
			Branch: progress.Nullable(o.Branch), BaseCommit: a.head(), Phase: phase,
			CredentialHash: credentialHash(cred, id, role), OpenedBy: openedBy,
		}
		st.takeStep(p, &started, step)
		if canonicalRole(role) == workflow.Review {
			started.SentBranch, started.SentHead = st.sentWork(p, Deref(started.Branch))
		}
		open.Open = append(open.Open, started)
		st.touch(progress.OpenFileName)
		st.opened = &openedRecord{Session: id, Role: role, PublicKey: authorizedKey(pub, ""), By: openedBy}
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
	*res = SessionStartResult{OpenSession: shown, Env: env}
	return nil
}

// SessionEnd finishes the caller's session (or, for a launcher or a
// person, in.Session): records it in progress.json and computes the next
// phase.
func (a *App) SessionEnd(ctx context.Context, c Caller, in SessionEndInput) (progress.Session, error) {
	if a.remote != nil {
		return forward[progress.Session](ctx, a, c, "session.end", in)
	}
	var out progress.Session
	err := a.as(c).runSessionEnd(ctx, "baton session end", in, &out)
	return out, err
}

// sessionEnding is a session end's input, checked before the lock.
type sessionEnding struct {
	outcome  string
	commits  []progress.Commit
	from, to *string
	failure  *progress.FailureSignature
}

// endingOf checks session end's input: the outcome, the commits and the
// failure signature (which describes an ERROR only).
func (a *App) endingOf(o SessionEndInput) (sessionEnding, error) {
	var e sessionEnding
	var err error
	if e.outcome, err = progress.NormalizeOutcome(o.Outcome); err != nil {
		return e, err
	}
	if e.commits, err = a.parseCommits(o.Commits); err != nil {
		return e, err
	}
	if e.from, err = a.commitRef("--commit-from", o.CommitFrom); err != nil {
		return e, err
	}
	if e.to, err = a.commitRef("--commit-to", o.CommitTo); err != nil {
		return e, err
	}
	if o.Failure != "" {
		code := strings.ToLower(strings.TrimSpace(o.Failure))
		if !slices.Contains(progress.FailureCodes, code) {
			return e, errs.New(errs.Usage, "--failure: %q is not one of %s", o.Failure, strings.Join(progress.FailureCodes, ", "))
		}
		if e.outcome != "ERROR" {
			return e, errs.New(errs.Usage, "--failure describes an ERROR outcome; give -o ERROR")
		}
		severity := o.Severity
		if severity == "" {
			severity = "error"
		}
		e.failure = &progress.FailureSignature{Code: code, Message: o.Summary, Severity: severity}
	}
	return e, nil
}

func (a *App) runSessionEnd(ctx context.Context, cmdPath string, o SessionEndInput, res *progress.Session) error {
	e, err := a.endingOf(o)
	if err != nil {
		return err
	}
	return a.update(ctx, cmdPath, progress.FileName, func(st *state) error {
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
		if sess.RecordedAs > 0 {
			*res, err = st.closeRecorded(p, open, sess)
			return err
		}
		ended := progress.Session{
			SessionID: sess.SessionID, AgentType: sess.AgentType, StartedAt: sess.StartedAt, CompletedAt: st.stamp(),
			Summary: o.Summary, FeaturesTouched: sess.Features, Outcome: e.outcome, Commits: e.commits, Failure: e.failure,
		}
		if e.failure != nil {
			e.failure.StageID = sess.AgentType
		}
		if o.Features != "" {
			ended.FeaturesTouched = features.SplitIDs(o.Features)
			if err := checkFeatureIDs(st, ended.FeaturesTouched); err != nil {
				return err
			}
			if err := st.widenBatch(ended.FeaturesTouched); err != nil {
				return err
			}
			if err := st.withinSession(st.ownOpen(sess), ended.FeaturesTouched); err != nil {
				return err
			}
		}
		branch := a.sessionBranch(p, sess)
		feature := progress.Nullable(strings.Join(ended.FeaturesTouched, ","))
		x := workflow.ItemOf(feature, branch, sess.AgentType)
		if l, ok := p.LaneOf(sess.SessionID); ok {
			x = l.Item
		}
		if err := st.recordEnd(p, open, sess, &ended, branch, e); err != nil {
			return err
		}
		*res = ended
		return st.afterSession(p, x, ended, feature, branch, sess.AgentType, o.NextPhase)
	})
}

// recordEnd records the ended session with its commits (from git, within
// the session's range) and closes it.
func (st *state) recordEnd(p *progress.File, open *progress.OpenSessions, sess progress.OpenSession, ended *progress.Session, branch *string, e sessionEnding) error {
	a := st.app
	from, to := sess.BaseCommit, e.to
	if e.from != nil {
		from = e.from
	}
	toGiven := to != nil
	if to == nil {
		to = a.head()
	}
	if err := st.confineRange(sess, branch, &from, &to, toGiven); err != nil {
		return err
	}
	var err error
	if ended.Commits, ended.CommitRange, err = a.sessionRange(e.commits, from, to); err != nil {
		return err
	}
	if err := st.checkReady(*ended, branch); err != nil {
		return err
	}
	if err := p.AddSessionWithID(*ended); err != nil {
		return err
	}
	open.Remove(sess.SessionID)
	p.RemoveLane(sess.SessionID)
	st.touch(progress.FileName)
	st.touch(progress.OpenFileName)
	st.summary = fmt.Sprintf("ended session %d (%s, %s)", sess.SessionID, sess.AgentType, e.outcome)
	st.record = *ended
	st.taskID = progress.Nullable(strings.Join(ended.FeaturesTouched, ","))
	return nil
}

// SessionCurrentResult lists sessions without their credential hashes.
type SessionCurrentResult struct {
	Sessions []progress.OpenSession `json:"sessions"`
}

// SessionCurrent is the caller's session, or for a call bound to none
// every open session.
func (a *App) SessionCurrent(ctx context.Context, c Caller) (SessionCurrentResult, error) {
	if a.remote != nil {
		return forward[SessionCurrentResult](ctx, a, c, "session.current", nil)
	}
	a = a.as(c)
	open, err := readFile(ctx, a, progress.OpenFileName, "baton init", progress.ParseOpen)
	if errs.Is(err, errs.NotFound) {
		open, err = &progress.OpenSessions{}, nil
	}
	if err != nil {
		return SessionCurrentResult{}, err
	}
	list := open.Open
	if a.insideSession() {
		s, err := boundSession(open, a.caller.Session)
		if err != nil {
			return SessionCurrentResult{}, err
		}
		list = []progress.OpenSession{s}
	}
	shown := make([]progress.OpenSession, len(list))
	for i, s := range list {
		s.CredentialHash, s.Nonce = "", ""
		shown[i] = s
	}
	return SessionCurrentResult{Sessions: shown}, nil
}
