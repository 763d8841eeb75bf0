package workflow

import (
	"slices"
	"strings"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
)

// The rules of who acts: a call bound to no session, a session acting as
// its own role only, the opening and ending of sessions, and what a
// session's end must hand over.

// Actor is who a call acts as, as the rules see it.
type Actor struct {
	// Role is the role bound (aliases kept, such as BUGFIX), HUMAN for a
	// person or a launcher, "" for a call bound to nothing.
	Role string
	// Session is the bound session (0 for none); InSession says the call
	// presents that session's credential (an agent's call).
	Session   int
	InSession bool
}

// Person says whether the actor is a person (or a launcher acting with
// the person's key).
func (a Actor) Person() bool { return a.Role == Human }

// unboundHelp is what an unbound call may do instead.
const unboundHelp = "calls without a session credential may read but not write; an agent's writes are made " +
	"inside the session its launcher opened for it"

// MayAct refuses an action to a caller the responsibility matrix does not
// let take it, and to a call bound to no session.
func MayAct(a Actor, action Action) error {
	if a.Role == "" {
		return errs.New(errs.Policy, "no session is bound to this call, so it may not %s: %s", action, unboundHelp)
	}
	if err := Check(a.Role, action); err != nil {
		return errs.New(errs.Policy, "%s", err.Error())
	}
	return nil
}

// RecordsOwnRole refuses an agent's record of another role's work (the
// role a command names with -a): a person may record anyone's.
func RecordsOwnRole(a Actor, declared string) error {
	if a.Person() || canonicalOr(declared) == canonicalOf(a.Role) {
		return nil
	}
	return errs.New(errs.Policy, "%s may not record %s work (-a %s): an agent records only its own role's work; record it as %s", a.Role, declared, declared, a.Role)
}

// ActsOnlyAsSession refuses a person's override asked for by a call bound
// to a session: it acts only as that session.
func ActsOnlyAsSession(session int, role string) error {
	return errs.New(errs.Policy, "this call is bound to session %d (%s) and acts only as it: record your own role's work, "+
		"or end your session with the outcome that fits and say why in its summary", session, role)
}

// PersonWhileLaunching refuses a person's override while a launcher (baton
// run) drives the project: its agents run as the same user.
func PersonWhileLaunching(launching bool) error {
	if !launching {
		return nil
	}
	return errs.New(errs.Policy, "a launcher (baton run) is driving this project, and an agent works only in the session its launcher gave it")
}

// Opening is who opens a session, for which role, when the workflow
// computed which phase.
type Opening struct {
	// Session is the session the call is bound to (0 when none): a
	// session never opens another. SessionRole is its role.
	Session     int
	SessionRole string
	// Opener is LauncherOpens, OverrideOpens or KeyholderOpens.
	Opener string
	// LauncherRunning: a launcher drives the project from another
	// process.
	LauncherRunning bool
	Role            string // the role the session is opened for
}

// Who opens a session: the launcher of this process, a person overriding
// on purpose (--as HUMAN with a reason), or a person holding the key.
const (
	LauncherOpens  = "launcher"
	OverrideOpens  = "override"
	KeyholderOpens = "keyholder"
)

// MayOpen refuses a session's opening by a session, and by anyone but the
// launcher while a launcher drives the project from another process.
func MayOpen(o Opening) error {
	switch {
	case o.Session != 0:
		return errs.New(errs.Policy, "session %d (%s) may not open sessions: do your %s work in this session, then end it with the outcome that fits and say why in its summary", o.Session, o.SessionRole, o.SessionRole)
	case o.Opener == OverrideOpens:
		return PersonWhileLaunching(o.LauncherRunning)
	case o.Opener == KeyholderOpens && o.LauncherRunning:
		return errs.New(errs.Policy, "a launcher (baton run) is driving this project and opens every session itself: an agent works only in the session its launcher gave it")
	}
	return nil
}

// MayEnd picks the session a call ends: an agent's session ends only
// itself; a launcher or a person names the session (given). It returns the
// session to end, 0 when the call must name one.
func MayEnd(a Actor, given int) (int, error) {
	if a.Role == "" {
		return 0, errs.New(errs.Policy, "no session is bound to this call, so it may not end a session: %s", unboundHelp)
	}
	if a.Session == 0 {
		return given, nil
	}
	if given != 0 && given != a.Session {
		return 0, errs.New(errs.Policy, "session %d (%s) may not end session %d: a session ends only itself; end your own session when your work is done", a.Session, a.Role, given)
	}
	return a.Session, nil
}

// WithinSession refuses an agent's record naming features its session was
// not opened for: the work it hands to REVIEW is what it was given, and a
// PASS of it passes only that.
func WithinSession(a Actor, given, named []string) error {
	if !a.InSession || len(given) == 0 {
		return nil
	}
	for _, id := range named {
		if !slices.Contains(given, id) {
			return errs.New(errs.Policy, "session %d works on %s, not %s: a session records and reports only the features it was given; name only %s",
				a.Session, strings.Join(given, ","), id, strings.Join(given, ","))
		}
	}
	return nil
}

// WithinLane refuses an agent's act on work outside its lane: a session in
// a lane reviews, fixes, merges and passes only the item it was opened
// for, named by its ids (or, for an item of no feature, by its branch).
func WithinLane(a Actor, item string, laneBranch *string, ids []string, branch string) error {
	if !a.InSession {
		return nil
	}
	var own []string
	if ItemFeature(item, laneBranch) != nil {
		own = features.SplitIDs(item)
	}
	for _, id := range ids {
		if !slices.Contains(own, id) {
			return errs.New(errs.Policy, "session %d works on %s, not %s: a session records and reports only the item its lane holds; name only %s",
				a.Session, item, id, item)
		}
	}
	if own == nil && branch != "" && strings.HasPrefix(item, "refactor/") && branch != item {
		return errs.New(errs.Policy, "session %d works on %s, not %s: a session records and reports only the item its lane holds; name only %s",
			a.Session, item, branch, item)
	}
	return nil
}

// Handover is what a session's end with READY_FOR_REVIEW hands over.
type Handover struct {
	Person  bool
	Session int
	Role    string // as recorded
	Outcome string
	// Repo: the project is a git repository (outside one there are no
	// commits to ask for).
	Repo    bool
	Main    string // the branch work is merged into
	Branch  string // the session's branch ("" none)
	Commits int    // commits recorded on it since the session began
	// Review is the last review of Branch (0 for none), and Answered says
	// a fix answering it is recorded (asked of FIX).
	Review   int
	Answered bool
}

// ReadyForReview refuses READY_FOR_REVIEW from IMPLEMENT or FIX without
// new commits on a branch of the session's own, and from FIX without a
// recorded fix answering the review that asked for it. A person's record
// of work done elsewhere is not held to it.
func ReadyForReview(h Handover) error {
	role := canonicalOr(h.Role)
	if h.Outcome != "READY_FOR_REVIEW" || (role != Implement && role != Fix) || !h.Repo || h.Person {
		return nil
	}
	if h.Branch == "" || h.Branch == h.Main {
		return errs.New(errs.Policy, "session %d (%s) may end READY_FOR_REVIEW only with its work committed on a branch of its own, not on %s: REVIEW reviews a branch. Commit the work on the feature's branch ('baton branch create' makes one from %s), then end the session", h.Session, h.Role, orDash(h.Main), orDash(h.Main))
	}
	if h.Commits == 0 {
		return errs.New(errs.Policy, "session %d (%s) has no commits on %s since it began: READY_FOR_REVIEW hands REVIEW new work. Commit the work on %s, then end the session; if it cannot be done, end it with -o ERROR and say why", h.Session, h.Role, h.Branch, h.Branch)
	}
	if role != Fix || h.Review == 0 || h.Answered {
		return nil
	}
	return errs.New(errs.Policy, "session %d (FIX) recorded no fix answering review R%d of %s: record what was fixed, with the commits, with 'baton reviews add-fix -r %d', then end the session", h.Session, h.Review, h.Branch, h.Review)
}

// SessionRange is a session's recorded range against its own work.
type SessionRange struct {
	Session int
	// To is the range's end; ToGiven: the caller named it; OnWork: it is
	// on End, the head of the session's branch (Where says which, for the
	// message).
	To            string
	ToGiven       bool
	OnWork        bool
	End, Where    string
	From, Base    string // the range's start, and the session's base commit ("" unknown)
	FromAfterBase bool   // From is at or after Base
}

// ConfineRange keeps a session's range on its own branch, from its base
// commit: a --commit-to given must be on the branch, a --commit-from at or
// after the base. It returns the range's end: the branch's head when the
// end was not given and is not on it.
func ConfineRange(r SessionRange) (string, error) {
	if !r.OnWork && r.ToGiven {
		return "", errs.New(errs.Policy, "--commit-to %s is not on %s (at %s): session %d records only the commits of its own work. Leave --commit-to out, or name a commit of %s", short(r.To), r.Where, short(r.End), r.Session, r.Where)
	}
	to := r.To
	if !r.OnWork {
		to = r.End
	}
	if r.From != "" && r.Base != "" && r.From != r.Base && !r.FromAfterBase {
		return "", errs.New(errs.Policy, "--commit-from %s is not at or after session %d's base commit %s: a session records only the commits made since it began. Leave --commit-from out", short(r.From), r.Session, short(r.Base))
	}
	return to, nil
}

// NextPhaseClaim refuses a claimed next phase that contradicts the
// computed one (see JudgeClaim); why and reason say why.
func NextPhaseClaim(flag, given, computed, why, reason string) error {
	return errs.New(errs.Policy, "%s %s contradicts the computed next phase %s (%s; %s); the phase is computed from the files — leave %s out or correct it", flag, given, computed, why, reason, flag)
}

// Entry is an entry appended to the feature list, as the rules see it.
type Entry struct {
	ID, Type string
	Passes   bool // listed as passing
}

// MayAppend checks who may append these entries: INITIALIZER adds
// features, bugs and debt; REVIEW and ARCHITECTURE record tech debt (type
// tech_debt) and nothing else; no entry arrives passing unless a person
// lists it so (a feature passes through REVIEW's PASS and its merge).
func MayAppend(a Actor, entries []Entry, debtType string) error {
	action := AppendDebt
	for i, e := range entries {
		if e.Type == debtType {
			continue
		}
		action = AppendFeatures
		if err := MayAct(a, AppendFeatures); err != nil && MayAct(a, AppendDebt) == nil {
			return errs.New(errs.Policy, "%s may not add features to the feature list: only INITIALIZER may (--entries: entry %d, %s, has type %q); %s records tech debt only: append your review's leftover issues with \"type\": \"tech_debt\"",
				a.Role, i, orDash(e.ID), e.Type, a.Role)
		}
		break
	}
	if err := MayAct(a, action); err != nil {
		return err
	}
	if a.Person() {
		return nil
	}
	for i, e := range entries {
		if e.Passes {
			return errs.New(errs.Policy, "--entries: entry %d (%s) is listed as passing: a feature passes only through REVIEW's PASS and its merge. Append it with \"passes\": false, or leave passes out", i, e.ID)
		}
	}
	return nil
}

// Launches refuses baton run to a call bound to an agent's session: an
// agent does not drive the run.
func Launches(inSession bool) error {
	if !inSession {
		return nil
	}
	return errs.New(errs.Policy, "this call is bound to an agent session, and an agent does not drive the run: "+
		"do your role's work in your session, then end it with the outcome that fits")
}

// canonicalOr is the role whose rights name has, or name in upper case
// when it is no role.
func canonicalOr(name string) string {
	if c, ok := Canonical(name); ok {
		return c
	}
	return strings.ToUpper(name)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// AskedForFix is the review a FIX session's work on branch answers: the
// last review of the branch, or whose decision sent fixes to it (0 for
// none).
func AskedForFix(all []ReviewRef, branch string) int {
	id := 0
	for _, r := range all {
		if r.Branch == branch || r.DecisionBranch == branch {
			id = r.ID
		}
	}
	return id
}

// OwnStateFile refuses a session's write through --file naming another
// file than the project's own (same: the two name one file): baton would
// read that file as the state and act on it — merge, mark features
// passing — while the drift check, which compares the files the log
// records, never looks at it. A person, or a call bound to nothing (which
// writes nothing), is not held to it.
func OwnStateFile(a Actor, given, name, own string, same bool) error {
	if same || a.Role == "" || a.Person() {
		return nil
	}
	return errs.New(errs.Policy, "--file %s: this project's %s is %s, and a session writes only the project's own state files, never another copy. Leave --file out", given, name, own)
}
