// Package workflow holds baton's rules, pure and in one place: the
// responsibility matrix (which role may do what), the transition table
// (what an item's session or review leads to) and the scheduler (which
// steps can run now). It imports neither cobra nor os; the CLI, `baton run`
// and the tests all ask it the same questions.
package workflow

import (
	"fmt"
	"sort"
	"strings"
)

// Roles. HUMAN is a person overriding with --as HUMAN --reason.
const (
	Initializer  = "INITIALIZER"
	Implement    = "IMPLEMENT"
	Review       = "REVIEW"
	Fix          = "FIX"
	Architecture = "ARCHITECTURE"
	Human        = "HUMAN"
)

// roleAliases maps the predecessor's extra roles to the role whose rights
// they have.
var roleAliases = map[string]string{
	"BUGFIX":                 Implement,
	"GLOBAL_FIX":             Fix,
	"BROWNFIELD_INITIALIZER": Initializer,
}

// Roles lists every role name baton accepts, aliases included.
var Roles = []string{Initializer, "BROWNFIELD_INITIALIZER", Implement, "BUGFIX", Review, Fix, "GLOBAL_FIX", Architecture}

// Canonical returns the role whose rights name has, and whether name is a
// role at all.
func Canonical(name string) (string, bool) {
	n := strings.ToUpper(strings.TrimSpace(name))
	if r, ok := roleAliases[n]; ok {
		return r, true
	}
	switch n {
	case Initializer, Implement, Review, Fix, Architecture, Human:
		return n, true
	}
	return "", false
}

// Action is something a role may or may not do.
type Action string

// The actions of the responsibility matrix.
const (
	CreateFeatureBranch  Action = "create a feature branch"
	CreateRefactorBranch Action = "create a refactor branch"
	MarkFailing          Action = "mark a feature failing"
	MarkPassing          Action = "mark a feature passing"
	Merge                Action = "merge to main"
	DeleteBranch         Action = "delete a feature branch"
	AddReview            Action = "add a review"
	AddFix               Action = "add a fix"
	MarkMerged           Action = "mark a fix merged"
	InitFiles            Action = "create the state files"
	AppendFeatures       Action = "add features to the feature list"
	AppendDebt           Action = "add tech-debt items to the feature list"
	RecordSession        Action = "record a session"
	SetStatus            Action = "set the current feature or branch"
)

// matrix is DESIGN.md's responsibility matrix: for each action, the roles
// allowed to take it. HUMAN is allowed everything and is not listed.
var matrix = map[Action][]string{
	CreateFeatureBranch:  {Implement},
	CreateRefactorBranch: {Implement, Fix},
	MarkFailing:          {Implement},
	MarkPassing:          {Review},
	Merge:                {Review},
	DeleteBranch:         {Review},
	AddReview:            {Review, Architecture},
	AddFix:               {Fix},
	MarkMerged:           {Review},
	InitFiles:            {Initializer},
	AppendFeatures:       {Initializer},
	AppendDebt:           {Initializer, Review, Architecture}, // the seed's reviewer records debt
	RecordSession:        {Initializer, Implement, Review, Fix, Architecture},
	SetStatus:            {Initializer, Implement},
	Land:                 {},
}

// Actions lists every action of the matrix, sorted.
func Actions() []Action {
	out := make([]Action, 0, len(matrix))
	for a := range matrix {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Allowed returns the roles that may take action.
func Allowed(action Action) []string { return append([]string(nil), matrix[action]...) }

// Refusal explains why a role may not take an action.
type Refusal struct {
	Role    string
	Action  Action
	Allowed []string
}

func (r *Refusal) Error() string {
	who := strings.Join(r.Allowed, " or ")
	if who == "" {
		return fmt.Sprintf("%s may not %s: no agent role may, the launcher does it; do your own role's work and end your session with the outcome that fits, saying why in its summary", r.Role, r.Action)
	}
	return fmt.Sprintf("%s may not %s: only %s may; leave it to them, do your own role's work and end your session with the outcome that fits, saying why in its summary", r.Role, r.Action, who)
}

// Check reports whether role (any accepted name) may take action: nil, or
// a *Refusal naming the roles that may.
func Check(role string, action Action) error {
	canon, ok := Canonical(role)
	if !ok {
		return &Refusal{Role: role, Action: action, Allowed: matrix[action]}
	}
	if canon == Human {
		return nil
	}
	for _, r := range matrix[action] {
		if r == canon {
			return nil
		}
	}
	return &Refusal{Role: strings.ToUpper(role), Action: action, Allowed: matrix[action]}
}

// CallableBy is who may call an operation that takes action: every role
// for a read, the matrix's roles for a write, and always HUMAN; a write
// that takes no action of the matrix (opening a session, creating the
// project's files over records) is HUMAN's alone.
func CallableBy(action Action, readOnly bool) []string {
	if readOnly {
		return append(append([]string{}, Roles...), Human)
	}
	if action == "" {
		return []string{Human}
	}
	return append(Allowed(action), Human)
}

// AgentMayCall says whether an agent's session may call an operation
// callable by roles at all (the responsibility matrix then decides for
// its own role, inside the call).
func AgentMayCall(roles []string) bool {
	for _, r := range roles {
		if r != Human {
			return true
		}
	}
	return false
}

// StatusAction is the matrix's action of an update of the status: setting
// the feature or branch of the work (setsWork) is IMPLEMENT's (and the
// INITIALIZER's); a phase alone is checked against the computed one, and
// any session may name it.
func StatusAction(setsWork bool) Action {
	if setsWork {
		return SetStatus
	}
	return RecordSession
}
