package app

import (
	"encoding/json"
	"strings"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

// actor is who a call acts as: the session whose credential the call
// presents (BATON_SESSION), a launcher (baton run, in its own process), or
// a person holding their key (--as HUMAN --reason). BATON_ROLE grants
// nothing.
type actor struct {
	Role    string `json:"role"`              // as bound (aliases kept, e.g. BUGFIX)
	Session *int   `json:"session,omitempty"` // the bound session, if any
	Source  string `json:"source"`            // session, launcher or person
	Reason  string `json:"reason,omitempty"`  // a person's reason
	Person  string `json:"person,omitempty"`  // the person's key id
	Run     string `json:"run,omitempty"`     // the launcher's run
	// During lists the agent sessions open when a person or a launcher
	// acted: a person's action in the middle of an agent's session is
	// worth a second look.
	During []int `json:"during_sessions,omitempty"`
	// key is the person's key their override was checked with, which
	// signs the transaction's entry (not read a second time while the
	// lock is held).
	key *personKey
}

func (ac *actor) canonical() string {
	if ac == nil {
		return ""
	}
	c, _ := workflow.Canonical(ac.Role)
	return c
}

// openSessions loads .baton/sessions.json inside the transaction.
func (st *state) openSessions() (*progress.OpenSessions, error) {
	if st.open != nil {
		return st.open, nil
	}
	o, ok, err := load(st, progress.OpenFileName, progress.ParseOpen)
	if err != nil {
		return nil, err
	}
	if !ok {
		o = &progress.OpenSessions{}
	}
	st.open = o
	return o, nil
}

// resolveActor finds who the call acts as; nil when nothing binds it (a
// read may proceed, a mutation may not).
func (st *state) resolveActor() (*actor, error) {
	if st.who != nil || st.whoResolved {
		return st.who, nil
	}
	st.whoResolved = true
	open, err := st.openSessions()
	if err != nil {
		return nil, err
	}
	who, err := st.app.resolveIdentity(open)
	if err == nil && who != nil && who.Source == "person" {
		err = st.personWhileLaunching()
	}
	st.who = who
	if errs.Is(err, errs.Policy) && st.app.insideSession() {
		st.refused = err // a credential that binds nothing is worth recording
	}
	return who, err
}

// resolveIdentity binds a call: a session credential, the launcher of this
// process, or a person's --as HUMAN with their key.
func (a *App) resolveIdentity(open *progress.OpenSessions) (*actor, error) {
	if a.insideSession() {
		s, err := boundSession(open, a.caller.Session)
		if err != nil {
			return nil, err
		}
		if a.caller.As != "" {
			// the refusal is logged as the session's: the agent that tried
			return &actor{Role: s.AgentType, Session: &s.SessionID, Source: "session"}, workflow.ActsOnlyAsSession(s.SessionID, s.AgentType)
		}
		return &actor{Role: s.AgentType, Session: &s.SessionID, Source: "session"}, nil
	}
	if a.launch != nil {
		return &actor{Role: workflow.Human, Source: "launcher", Person: a.launch.keyID, Run: a.launch.runID, During: openIDs(open)}, nil
	}
	if a.caller.As == "" {
		return nil, nil
	}
	return a.personActor(open)
}

// personActor is a person acting with --as HUMAN --reason: their key must
// be present (exit 3 with a person-facing message otherwise).
func (a *App) personActor(open *progress.OpenSessions) (*actor, error) {
	if !strings.EqualFold(a.caller.As, workflow.Human) {
		return nil, errs.New(errs.Usage, "--as: only HUMAN may be given, got %q", a.caller.As)
	}
	if strings.TrimSpace(a.caller.Reason) == "" {
		return nil, errs.New(errs.Usage, "--as HUMAN needs --reason \"...\": a person's override is always recorded with why")
	}
	key, err := a.loadKey()
	if err != nil {
		return nil, err
	}
	if key == nil {
		path, _ := a.keyPath()
		return nil, errs.New(errs.Policy, "--as HUMAN is a person's override, made with the person's own key, and there is none at %s: nothing was written", path)
	}
	return &actor{Role: workflow.Human, Source: "person", Reason: a.caller.Reason, Person: key.ID, During: openIDs(open), key: key}, nil
}

// personWhileLaunching refuses a person's override while a launcher (baton
// run) drives the project (workflow.PersonWhileLaunching).
func (st *state) personWhileLaunching() error {
	return st.decide(workflow.PersonWhileLaunching(st.app.launcherRunning(st.tx.Store())))
}

// openIDs lists the open sessions' ids (nil when none is open).
func openIDs(open *progress.OpenSessions) []int {
	var ids []int
	if open != nil {
		for _, s := range open.Open {
			ids = append(ids, s.SessionID)
		}
	}
	return ids
}

// require checks that the caller may take action, recording a refusal to
// be logged. It returns the actor.
func (st *state) require(action workflow.Action) (*actor, error) {
	who, err := st.resolveActor()
	if err != nil {
		return nil, err
	}
	if err := workflow.MayAct(ruleActor(who), action); err != nil {
		return nil, st.decide(err)
	}
	return who, nil
}

// requireAs is require for a command that names the role it records
// (add-session -a, add-review -a): an agent records only its own role's
// work; a person may record anyone's.
func (st *state) requireAs(action workflow.Action, declared string) (*actor, error) {
	who, err := st.require(action)
	if err != nil {
		return nil, err
	}
	if err := workflow.RecordsOwnRole(ruleActor(who), declared); err != nil {
		return nil, st.decide(err)
	}
	return who, nil
}

// refuse marks err as a refusal, which update logs in a transaction of
// its own after this one is discarded.
func (st *state) refuse(err error) error {
	st.refused = err
	return err
}

// eventPayload is what an audit event says about a call.
type eventPayload struct {
	Command string   `json:"command"`
	Actor   *actor   `json:"actor"`
	Changed []string `json:"changed,omitempty"`
	Summary string   `json:"summary,omitempty"`
	Refused string   `json:"refused,omitempty"`
	// Record is what the call recorded (a session, review or fix in full,
	// a merge): the audit log tells the story without the files.
	Record json.RawMessage `json:"record,omitempty"`
	// Reconciled lists the changes made outside baton that a person
	// accepted: each file's hash before and after, and the difference.
	Reconciled []store.Drift `json:"reconciled,omitempty"`
	// Opened records a session's opening: what verify needs to recompute
	// its credential with the person's key (never the credential itself).
	Opened *openedRecord `json:"opened,omitempty"`
	// LogGap records, in a person's reconcile, the anchored head of a log
	// whose entries were lost: verify reports it from then on.
	LogGap *store.LogGap `json:"log_gap,omitempty"`
	// LogID, on a log's first entry only, is a random name for the log: it
	// makes that entry (whose hash names the log in the anchors outside
	// the project) unlike any other log's first entry, even one made the
	// same second from the same files.
	LogID string `json:"log_id,omitempty"`
}

// openedRecord is the audit record of a session's opening.
type openedRecord struct {
	Session int    `json:"session"`
	Role    string `json:"role"`
	// PublicKey is the session's public key (authorized_keys format): its
	// entries are signed with the private key its credential holds.
	PublicKey string `json:"public_key"`
	By        string `json:"by"` // launcher or person
}

func (p eventPayload) raw() json.RawMessage {
	b, _ := json.Marshal(p)
	return b
}
