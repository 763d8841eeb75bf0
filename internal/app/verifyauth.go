package app

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

// authCheck is what verify finds authenticating the audit log: problems
// (forgeries), notes (what a person should look at, and what could not be
// checked) and whether the entries' signatures were checked at all.
type authCheck struct {
	problems      []Problem
	notes         []string
	authenticated bool
	// lastAgent is the latest entry of an agent's session seen so far:
	// its session and time.
	lastAgent   int
	lastAgentAt time.Time
	// trusted are the public keys a person's or a launcher's entry may be
	// signed with, by id; sessionKeys the keys the sessions' openings
	// record.
	trusted     map[string]ed25519.PublicKey
	sessionKeys map[int]ed25519.PublicKey
}

// afterAgents is how long after an agent's session a person's action is
// worth a note: what an unconfined agent left in the person's home or
// caches (an agent CLI's hook, a build cache entry) runs with the person's
// tools.
const afterAgents = 10 * time.Minute

// leftBehind is what the notes on a person's action near agents' sessions
// ask the person to check.
const leftBehind = "unless those agents ran under --sandbox, check that nothing they left in your home or caches (an agent CLI's hook, a build cache entry) ran as you"

// openedSession is what the log says about a session's opening.
type openedSession struct {
	role string
	key  ed25519.PublicKey // nil when the opening records none
}

// entryPayload is the part of an entry's payload verify reads.
type entryPayload struct {
	Actor  *actor        `json:"actor"`
	Opened *openedRecord `json:"opened"`
	LogGap *store.LogGap `json:"log_gap"`
}

// checkAudit checks the log against its anchors and the state, and, with
// the trusted public keys, every entry's signature: who wrote it, in which
// session, as which role.
func (a *App) checkAudit(sn *snapshot, events []store.Event, trusted map[string]ed25519.PublicKey, source string) authCheck {
	c := authCheck{notes: []string{}, trusted: trusted}
	c.problems = append(c.problems, presenceProblems(sn, events)...)
	if len(trusted) == 0 {
		c.notes = append(c.notes, fmt.Sprintf("authenticity not checked: %s, so only the log's structure, chain and anchors were checked", source))
		return c
	}
	c.authenticated = true
	sessions := map[int]openedSession{}
	missingKeys := map[string][]int{}
	var older []int
	for i, e := range events {
		var p entryPayload
		_ = json.Unmarshal(e.Payload, &p)
		if e.MAC != "" && e.Sig == "" {
			older = append(older, e.Seq)
		} else {
			c.checkEntry(e, p, sessions, missingKeys)
		}
		if i > 0 {
			c.checkWrites(e, events[i-1], sessions)
		}
	}
	c.sessionKeys = map[int]ed25519.PublicKey{}
	for id, s := range sessions {
		c.sessionKeys[id] = s.key
	}
	if len(older) > 0 {
		c.problems = append(c.problems, Problem{"unauthenticated", store.EventsName, fmt.Sprintf("%d entries (seq %d to %d) were written by an older baton, which keyed its log with a shared secret instead of signing it: they cannot be checked with public keys. Check them with the baton that wrote them; to start a signed record, move the state aside and run 'baton init'",
			len(older), older[0], older[len(older)-1])})
	}
	ids := make([]string, 0, len(missingKeys))
	for id := range missingKeys {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		seqs := missingKeys[id]
		c.problems = append(c.problems, Problem{"unauthenticated", store.EventsName, fmt.Sprintf("%d entries (seq %d to %d) are signed with key %s, which is not among the trusted keys (%s): they cannot be authenticated, and whoever wrote them held a key that is not yours (a lost one of yours, one never published, or someone else's). Read them with 'baton log' before trusting the record",
			len(seqs), seqs[0], seqs[len(seqs)-1], id, source)})
	}
	return c
}

// checkEntry authenticates one entry and records a session it opens.
func (c *authCheck) checkEntry(e store.Event, p entryPayload, sessions map[int]openedSession, missing map[string][]int) {
	bad := func(format string, args ...any) {
		c.problems = append(c.problems, Problem{"forged", store.EventsName, fmt.Sprintf("seq %d: ", e.Seq) + fmt.Sprintf(format, args...)})
	}
	kind, name, _ := strings.Cut(e.Auth, ":")
	switch {
	case e.Sig == "" || e.Auth == "":
		// only the refusal of a call bound to nothing has no key to use
		if e.Type != "error" || p.Actor != nil {
			bad("the entry has no signature: it was written outside baton")
		}
	case kind == "person":
		if pub, ok := c.trusted[name]; !ok {
			missing[name] = append(missing[name], e.Seq)
		} else if !store.EventSigned(pub, e.Hash, e.Sig) {
			bad("its signature does not check with key %s: the entry was forged, edited or re-chained", name)
			return
		}
		if p.Opened != nil {
			key, _ := parsePublicKey([]byte(p.Opened.PublicKey))
			sessions[p.Opened.Session] = openedSession{role: p.Opened.Role, key: key}
		}
		if g := p.LogGap; g != nil {
			c.notes = append(c.notes, fmt.Sprintf("seq %d: a person recorded that the log had lost entries (it ended at entry %d, but %s anchored entry %d)%s", e.Seq, g.Seq, g.Path, g.Anchor.Seq, reasonOf(p.Actor)))
		}
	case kind == "session":
		c.checkSessionEntry(e, p, name, sessions, bad)
	default:
		bad("unknown auth %q", e.Auth)
	}
	if p.Opened != nil && kind != "person" {
		bad("session %d was opened outside a launcher or a person", p.Opened.Session)
	}
	c.notePerson(e, p, kind)
}

// notePerson notes a person's action taken while agent sessions were
// open, or within afterAgents of an agent session's last entry, and keeps
// track of the agents' entries.
func (c *authCheck) notePerson(e store.Event, p entryPayload, kind string) {
	at, err := time.Parse(time.RFC3339, e.Timestamp)
	if kind == "session" {
		if err == nil {
			c.lastAgent, _ = strconv.Atoi(strings.TrimPrefix(e.Auth, "session:"))
			c.lastAgentAt = at
		}
		return
	}
	if p.Actor == nil || p.Actor.Source != "person" {
		return
	}
	switch {
	case len(p.Actor.During) > 0:
		c.notes = append(c.notes, fmt.Sprintf("seq %d: a person acted (%s%s) while agent session(s) %s were open; %s", e.Seq, commandOf(e), reasonOf(p.Actor), joinInts(p.Actor.During), leftBehind))
	case c.lastAgent > 0 && err == nil && at.Sub(c.lastAgentAt) <= afterAgents:
		c.notes = append(c.notes, fmt.Sprintf("seq %d: a person acted (%s%s) %s after agent session %d's last entry; %s", e.Seq, commandOf(e), reasonOf(p.Actor), at.Sub(c.lastAgentAt).Round(time.Second), c.lastAgent, leftBehind))
	}
}

// checkSessionEntry authenticates an entry written in session name: its
// key is the one the session's opening recorded, and its role must be the
// session's.
func (c *authCheck) checkSessionEntry(e store.Event, p entryPayload, name string, sessions map[int]openedSession, bad func(string, ...any)) {
	id, _ := strconv.Atoi(name)
	s, ok := sessions[id]
	if !ok {
		bad("written in session %d, whose opening by a launcher or a person is not in the log", id)
		return
	}
	if s.key == nil {
		bad("written in session %d, whose opening records no public key", id)
		return
	}
	if !store.EventSigned(s.key, e.Hash, e.Sig) {
		bad("its signature does not check with session %d's key: the entry was forged, edited or re-chained", id)
		return
	}
	if p.Actor != nil && (p.Actor.Source != "session" || p.Actor.Session == nil || *p.Actor.Session != id) {
		bad("signed with session %d's key but written as %s: a session signs only its own entries", id, describeActor(p.Actor))
		return
	}
	if p.Actor != nil && canonicalRole(p.Actor.Role) != canonicalRole(s.role) {
		bad("session %d was opened as %s but this entry acts as %s: a role changed within a session", id, s.role, p.Actor.Role)
	}
}

// describeActor names who an entry says wrote it.
func describeActor(ac *actor) string {
	if ac.Session != nil {
		return fmt.Sprintf("%s of session %d", ac.Source, *ac.Session)
	}
	return ac.Source
}

// writers are, for each state file some roles never write, the roles
// whose sessions may change it.
var writers = []struct {
	file  string
	roles []string
}{
	{reviews.FileName, []string{workflow.Initializer, workflow.Review, workflow.Architecture, workflow.Fix}},
	{features.FileName, []string{workflow.Initializer, workflow.Implement, workflow.Review, workflow.Architecture}},
}

// checkWrites reports an entry of an agent's session that changed a state
// file its role never writes: its signature may check out (an agent
// can sign entries of its own session), but no command of that role records it.
func (c *authCheck) checkWrites(e, prev store.Event, sessions map[int]openedSession) {
	kind, name, _ := strings.Cut(e.Auth, ":")
	id, _ := strconv.Atoi(name)
	s, ok := sessions[id]
	if kind != "session" || !ok {
		return
	}
	role := canonicalRole(s.role)
	for _, w := range writers {
		now, ok := e.Metadata.Files[w.file]
		if ok && now != prev.Metadata.Files[w.file] && !slices.Contains(w.roles, role) {
			c.problems = append(c.problems, Problem{"forged", store.EventsName, fmt.Sprintf("seq %d: session %d (%s) changed %s, which %s never writes: the entry was not written by a baton command of that role", e.Seq, id, s.role, w.file, role)})
		}
	}
}

func commandOf(e store.Event) string {
	var p struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(e.Payload, &p)
	return p.Command
}

func reasonOf(ac *actor) string {
	if ac.Reason == "" {
		return ""
	}
	return ": " + ac.Reason
}

// presenceProblems reports a log missing or empty while state exists.
func presenceProblems(sn *snapshot, events []store.Event) []Problem {
	if len(events) > 0 || (sn.prog == nil && sn.rev == nil && sn.feat == nil) {
		return nil
	}
	if sn.unlogged() && sn.pendingAdoption() != nil {
		return []Problem{{"log", store.EventsName, fmt.Sprintf("there is no audit log %s yet: these state files were written by another tool (the predecessor's scripts); 'baton init' adopts them and starts the log", sn.s.EventsPath())}}
	}
	return []Problem{{"log", store.EventsName, fmt.Sprintf("the audit log %s is missing or empty while state files exist: it was deleted or emptied", sn.s.EventsPath())}}
}

// rewrittenNotes are the anchors the log's entries record they rewrote
// though they did not hold the log's head.
func rewrittenNotes(events []store.Event) []string {
	var out []string
	for _, e := range events {
		for _, n := range e.Metadata.Rewritten {
			out = append(out, fmt.Sprintf("entry %d rewrote the anchor %s: %s", e.Seq, n.Path, n.Problem))
		}
	}
	return out
}

// anchorProblems compares the log with the heads anchored in .baton and
// outside the project.
func anchorProblems(s *store.Store, events []store.Event) []Problem {
	anchors, broken := s.Anchors()
	var out []Problem
	for _, b := range broken {
		out = append(out, Problem{"anchor", b.Path, fmt.Sprintf("%s is %s: it does not record the log's head, so a truncation of the log's end would not show. The next baton write rewrites it from the log and records that in its entry; before that, check with 'baton log' that the log ends with the last change you know of", b.Path, b.Problem)})
	}
	for _, an := range anchors {
		p := an.Path
		switch {
		case an.Seq > len(events):
			out = append(out, Problem{"truncated", store.EventsName, fmt.Sprintf("the log ends at seq %d, but %s anchors its head at seq %d: entries were removed from its end (or the log deleted)", len(events), p, an.Seq)})
		case an.Seq > 0 && events[an.Seq-1].Hash != an.Hash:
			out = append(out, Problem{"truncated", store.EventsName, fmt.Sprintf("entry seq %d is not the one %s anchors: the log was rewritten", an.Seq, p)})
		}
	}
	return out
}
