package cmd

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/baton-cli/baton/errs"
	"github.com/baton-cli/baton/progress"
	"github.com/baton-cli/baton/store"
	"github.com/baton-cli/baton/workflow"
)

// actor is who a call acts as: a role bound through a session, BATON_ROLE,
// the one open session, or a person with --as HUMAN --reason.
type actor struct {
	Role    string `json:"role"`              // as bound (aliases kept, e.g. BUGFIX)
	Session *int   `json:"session,omitempty"` // the bound session, if any
	Source  string `json:"source"`            // how the role was bound
	Reason  string `json:"reason,omitempty"`  // a person's reason
}

func (ac *actor) canonical() string {
	if ac == nil {
		return ""
	}
	c, _ := workflow.Canonical(ac.Role)
	return c
}

const bindHelp = `bind one: start a session ('baton session start --agent ROLE', then export BATON_SESSION=<id>), ` +
	`set BATON_ROLE=<ROLE> in the agent's environment, or act as a person with --as HUMAN --reason "..."`

// openSessions loads .baton/sessions.json inside the transaction.
func (st *state) openSessions() (*progress.OpenSessions, error) {
	if st.open != nil {
		return st.open, nil
	}
	o, ok, err := load(st, progress.OpenFileName, progress.ParseOpen, nil)
	if err != nil {
		return nil, err
	}
	if !ok {
		o = &progress.OpenSessions{}
	}
	st.open = o
	return o, nil
}

// resolveActor finds who the call acts as; nil when no role is bound (a
// read may proceed, a mutation may not).
func (st *state) resolveActor() (*actor, error) {
	if st.who != nil || st.whoResolved {
		return st.who, nil
	}
	a := st.app
	st.whoResolved = true
	if a.g.As != "" {
		if !strings.EqualFold(a.g.As, workflow.Human) {
			return nil, errs.New(errs.Usage, "--as: only HUMAN may be given (agents bind a role with a session or BATON_ROLE), got %q", a.g.As)
		}
		if strings.TrimSpace(a.g.Reason) == "" {
			return nil, errs.New(errs.Usage, "--as HUMAN needs --reason \"...\": a person's override is always recorded with why")
		}
		st.who = &actor{Role: workflow.Human, Source: "--as", Reason: a.g.Reason}
		return st.who, nil
	}
	open, err := st.openSessions()
	if err != nil {
		return nil, err
	}
	if v := strings.TrimSpace(a.env.Getenv("BATON_SESSION")); v != "" {
		id, err := strconv.Atoi(v)
		if err != nil {
			return nil, errs.New(errs.Usage, "BATON_SESSION: %q is not a session id", v)
		}
		s, err := open.Get(id)
		if err != nil {
			return nil, errs.New(errs.Policy, "BATON_SESSION=%d names no open session (it ended, or never started); start one with 'baton session start --agent ROLE'", id)
		}
		st.who = &actor{Role: s.AgentType, Session: &s.SessionID, Source: "BATON_SESSION"}
		return st.who, nil
	}
	if v := strings.TrimSpace(a.env.Getenv("BATON_ROLE")); v != "" {
		role, err := progress.Choose("BATON_ROLE", v, workflow.Roles, nil)
		if err != nil {
			return nil, err
		}
		st.who = &actor{Role: role, Source: "BATON_ROLE"}
		return st.who, nil
	}
	if len(open.Open) == 1 {
		s := open.Open[0]
		st.who = &actor{Role: s.AgentType, Session: &s.SessionID, Source: "the one open session"}
		return st.who, nil
	}
	return nil, nil
}

// require checks that the caller may take action, recording a refusal to
// be logged. It returns the actor.
func (st *state) require(action workflow.Action) (*actor, error) {
	who, err := st.resolveActor()
	if err != nil {
		return nil, err
	}
	if who == nil {
		msg := "no role is bound to this call, so it may read but not " + string(action)
		if n := st.openCount(); n > 1 {
			msg += fmt.Sprintf(" (%d sessions are open: say which with BATON_SESSION)", n)
		}
		return nil, st.refuse(errs.New(errs.Policy, "%s; %s", msg, bindHelp))
	}
	if err := workflow.Check(who.Role, action); err != nil {
		return nil, st.refuse(errs.New(errs.Policy, "%s", err.Error()))
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
	if who.Role != workflow.Human && canonicalRole(declared) != who.canonical() {
		return nil, st.refuse(errs.New(errs.Policy, "%s may not record %s work (-a %s): an agent records only its own role's work; a person can with --as HUMAN --reason \"...\"", who.Role, declared, declared))
	}
	return who, nil
}

func (st *state) openCount() int {
	if st.open == nil {
		return 0
	}
	return len(st.open.Open)
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
}

func (p eventPayload) raw() json.RawMessage {
	b, _ := json.Marshal(p)
	return b
}
