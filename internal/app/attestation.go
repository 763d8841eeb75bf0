package app

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/attest"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

// Every item that lands on main gets an attestation: an in-toto Statement
// about the commit main moved to, with baton's landing predicate (what
// landed, the sessions whose commits it brings, the reviews, the gate run,
// the log's entry), in a DSSE envelope signed with the person's key, kept
// as that commit's git note under NotesRef, so that it travels with the
// repository. It is derived from the log and the files alone: written
// after the landing's commit point by whoever holds the person's key (the
// launcher, its broker, a person), and written again from the same record
// whenever it is missing — a crash between the two leaves nothing that
// cannot be made again.

// NotesRef is the notes ref the attestations are kept under.
const NotesRef = "refs/notes/baton"

// landingFacts is what an attestation is made from: the log, the files
// and the repository.
type landingFacts struct {
	r        gitops.Repo
	into     string
	events   []store.Event
	lines    []LogLine
	rev      *reviews.File
	prog     *progress.File
	feat     *features.File
	sessions map[int]ed25519.PublicKey
}

// landing is the predicate of merge m.
func (f landingFacts) landing(m logMerge) (attest.Landing, error) {
	rv, err := f.rev.Review(m.review)
	if err != nil {
		return attest.Landing{}, err
	}
	commit, err := gitops.ResolveCommit(f.r, m.commit)
	if err != nil {
		return attest.Landing{}, err
	}
	merge, err := f.merge(m, commit, rv)
	if err != nil {
		return attest.Landing{}, err
	}
	l := attest.Landing{Item: f.item(rv), Into: f.into, Merge: merge, Reviews: f.reviews(rv), Log: f.entry(m.seq)}
	if l.Sessions, err = f.landedSessions(l.Item.ID, merge.Head); err != nil {
		return attest.Landing{}, err
	}
	if g := m.gate; g != nil {
		l.Gate = &attest.Gate{Command: g.Command, Tree: g.Tree, ExitCode: g.ExitCode, Digest: g.Digest, Batch: g.Batch}
	}
	return l, nil
}

func (f landingFacts) item(rv gjson.Result) attest.Item {
	ids := features.SplitIDs(rv.Get("feature_id").String())
	it := attest.Item{ID: itemOfReview(rv), Kind: "refactor", Features: NonNil(ids), Branch: rv.Get("branch").String()}
	if len(ids) > 0 {
		it.Kind = "feature"
		if f.feat != nil {
			if x, err := f.feat.Get(ids[0]); err == nil {
				it.Kind = map[string]string{"BUG": "bug", "DEBT": "debt"}[x.Kind()]
				if it.Kind == "" {
					it.Kind = "feature"
				}
			}
		}
	}
	return it
}

// merge is how main moved to commit: from where, bringing which head,
// and who signed the commit when baton wrote it.
func (f landingFacts) merge(m logMerge, commit string, rv gjson.Result) (attest.Merge, error) {
	tree, err := f.r.TreeOf(commit)
	if err != nil {
		return attest.Merge{}, err
	}
	out := attest.Merge{Commit: commit, Tree: tree, Head: commit, Signed: m.written}
	if onto := rv.Get("merged_onto").String(); onto != "" {
		if out.Onto, err = gitops.ResolveCommit(f.r, onto); err != nil {
			return attest.Merge{}, err
		}
	}
	if parents, err := gitops.Parents(f.r, commit); err == nil && len(parents) >= 2 {
		out.Head = parents[1]
		if out.Onto == "" {
			out.Onto = parents[0]
		}
	}
	out.FastForward = out.Head == commit
	if out.Onto == "" {
		out.Onto = commit // a first landing with nothing recorded before it
	}
	if m.written {
		kind, name, _ := strings.Cut(m.auth, ":")
		out.SignedBy = m.auth
		if id, _ := strconv.Atoi(name); kind == "session" && f.sessions[id] != nil {
			out.SessionKey = authorizedKey(f.sessions[id], "")
		}
	}
	return out, nil
}

// reviews are the item's reviews up to rv, since its last rejection, each
// with the session that gave it.
func (f landingFacts) reviews(rv gjson.Result) []attest.Review {
	item, last := itemOfReview(rv), rv.Get("review_id").Int()
	var mine []gjson.Result
	for _, r := range f.rev.Reviews() {
		id := r.Get("review_id").Int()
		if id > last || itemOfReview(r) != item {
			continue
		}
		if reviews.VerdictOf(r) == "REJECT" || r.Get("decision.reject").Bool() {
			mine = nil // a new attempt starts after a rejection
			continue
		}
		mine = append(mine, r)
	}
	out := make([]attest.Review, 0, len(mine))
	for _, r := range mine {
		id := int(r.Get("review_id").Int())
		role, session := f.reviewer(id, r.Get("agent_type").String())
		out = append(out, attest.Review{ID: id, Verdict: reviews.VerdictOf(r), Role: role, Session: session,
			From: r.Get("commit_range.from").String(), To: r.Get("commit_range.to").String()})
	}
	return out
}

// reviewer is the role and session of the entry that added review id
// (agentType and no session when the log does not say).
func (f landingFacts) reviewer(id int, agentType string) (string, int) {
	added := fmt.Sprintf("added review R%d ", id)
	for _, l := range f.lines {
		if l.Actor == nil || !contains(l.Changed, reviews.FileName) {
			continue
		}
		// add-review's entry, or the landing queue's that sent work back
		if strings.HasPrefix(l.Summary, added) || gjson.GetBytes(l.Record, "review.review_id").Int() == int64(id) {
			return l.Actor.Role, l.session()
		}
	}
	if agentType == "" {
		agentType = workflow.Human
	}
	return agentType, 0
}

// landedSessions are the item's sessions that committed, whose last
// commit is in head's history: the attempts a rejection threw away are
// not.
func (f landingFacts) landedSessions(item, head string) ([]attest.Session, error) {
	ids := sessionsOf(item, f.lines, f.prog)
	out := []attest.Session{}
	if f.prog == nil {
		return out, nil
	}
	var err error
	f.prog.Sessions(func(raw []byte) {
		r := gjson.ParseBytes(raw)
		id := int(r.Get("session_id").Int())
		to := r.Get("commit_range.to").String()
		if err != nil || !ids[id] || to == "" || len(r.Get("commits").Array()) == 0 {
			return // a session that committed nothing (a REVIEW) is in the reviews
		}
		s := attest.Session{ID: id, Role: r.Get("agent_type").String(), Commits: []string{}}
		if s.To, err = gitops.ResolveCommit(f.r, to); err != nil {
			return
		}
		if on, aerr := f.r.IsAncestor(s.To, head); aerr != nil || !on {
			err = aerr
			return
		}
		if from := r.Get("commit_range.from").String(); from != "" {
			s.From, _ = gitops.ResolveCommit(f.r, from)
		}
		r.Get("commits").ForEach(func(_, c gjson.Result) bool {
			if h, herr := gitops.ResolveCommit(f.r, c.Get("hash").String()); herr == nil {
				s.Commits = append(s.Commits, h)
			}
			return true
		})
		out = append(out, s)
	})
	return out, err
}

func (f landingFacts) entry(seq int) attest.LogEntry {
	for _, e := range f.events {
		if e.Seq == seq {
			return attest.LogEntry{Seq: e.Seq, Hash: e.Hash, At: e.Timestamp}
		}
	}
	return attest.LogEntry{Seq: seq}
}

// envelope is the signed note of landing l.
func envelope(key *personKey, l attest.Landing) ([]byte, error) {
	body, err := json.Marshal(attest.NewStatement(l.Into, l.Merge.Commit, l))
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(attest.Sign(key.Secret, key.ID, attest.PayloadType, body))
	return append(b, '\n'), err
}

// attestLanded writes the attestation of every landing the log records on
// main that has none yet. Only a holder of the person's key writes them:
// in an agent's own process it does nothing (the launcher writes them at
// its next step). It runs inside a transaction, the state lock held.
func (st *state) attestLanded(r gitops.Repo) (int, error) {
	a := st.app
	if r == nil || (a.launch == nil && a.insideSession()) {
		return 0, nil
	}
	key, err := a.loadKey()
	if err != nil || key == nil {
		return 0, err
	}
	defer key.wipe()
	f, todo, err := st.landingFacts(r)
	if err != nil || len(todo) == 0 {
		return 0, err
	}
	who, _ := a.signature(r)
	for _, m := range todo {
		l, err := f.landing(m)
		if err != nil {
			return 0, fmt.Errorf("the attestation of review R%d's landing: %w", m.review, err)
		}
		note, err := envelope(key, l)
		if err != nil {
			return 0, err
		}
		if err := gitops.AddNote(r, NotesRef, l.Merge.Commit, note, who); err != nil {
			return 0, fmt.Errorf("writing the attestation of %s in %s: %w", gitops.Short(l.Merge.Commit), NotesRef, err)
		}
	}
	return len(todo), nil
}

// landingFacts gathers what the attestations are made from, and the
// landings on main that have none.
func (st *state) landingFacts(r gitops.Repo) (landingFacts, []logMerge, error) {
	s := st.tx.Store()
	events, err := s.ReadEvents()
	if err != nil {
		return landingFacts{}, nil, err
	}
	merges := logRecordsOf(events).merges
	if len(merges) == 0 {
		return landingFacts{}, nil, nil
	}
	into, head, err := mainOf(r, st.cfg)
	if err != nil {
		return landingFacts{}, nil, nil // no main: nothing landed on it
	}
	notes, err := gitops.Notes(r, NotesRef)
	if err != nil {
		return landingFacts{}, nil, err
	}
	var todo []logMerge
	for _, m := range merges {
		full, err := gitops.ResolveCommit(r, m.commit)
		if err != nil || notes[full] != nil || m.review == 0 {
			continue
		}
		if on, err := r.IsAncestor(full, head); err == nil && on {
			todo = append(todo, m)
		}
	}
	if len(todo) == 0 {
		return landingFacts{}, nil, nil
	}
	f := landingFacts{r: r, into: into, events: events, sessions: openedKeys(events)}
	if f.lines, err = readLog(s); err != nil {
		return landingFacts{}, nil, err
	}
	if f.rev, err = st.reviews(); err != nil {
		return landingFacts{}, nil, err
	}
	if f.prog, _, err = st.progressOpt(); err != nil {
		return landingFacts{}, nil, err
	}
	if f.feat, _, err = st.featuresOpt(); err != nil {
		return landingFacts{}, nil, err
	}
	return f, todo, nil
}

// openedKeys are the sessions' public keys, as their opening entries
// record them.
func openedKeys(events []store.Event) map[int]ed25519.PublicKey {
	out := map[int]ed25519.PublicKey{}
	for _, e := range events {
		var p entryPayload
		if json.Unmarshal(e.Payload, &p) != nil || p.Opened == nil || !strings.HasPrefix(e.Auth, "person:") {
			continue
		}
		if key, err := parsePublicKey([]byte(p.Opened.PublicKey)); err == nil {
			out[p.Opened.Session] = key
		}
	}
	return out
}

// attestAfterCommit writes the landing's attestation once the transaction
// has committed it; a failure is a warning that names no remedy (an agent
// may read it through the broker): the landing stands, and its
// attestation is written again at the launcher's next step or by a
// person's reconcile.
func (st *state) attestAfterCommit(r gitops.Repo) {
	st.tx.AfterCommit(func() error {
		if _, err := st.attestLanded(r); err != nil {
			st.app.warn("the landing is made, but its attestation could not be written yet: %v (it is written again from the same record before the next step)", err)
		}
		return nil
	})
}

// AttestResult is how many attestations were written.
type AttestResult struct {
	Written int `json:"written"`
}

// Attest writes the attestations missing from the landings on main: the
// launcher runs it before each step (an agent that merged in its own
// process has no key to sign them with), and a person's reconcile runs it.
func (a *App) Attest(ctx context.Context, c Caller) (AttestResult, error) {
	a = a.as(c)
	r := a.repo()
	var out AttestResult
	if r == nil {
		return out, nil
	}
	err := a.update(ctx, "baton attest", "", func(st *state) error {
		n, err := st.attestLanded(r)
		out.Written = n
		return err
	})
	return out, err
}
