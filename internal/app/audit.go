package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/migrate"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

// snapshot is every state file read once for the people's commands, with
// the problems found reading them.
type snapshot struct {
	s        *store.Store
	cfg      store.Config
	prog     *progress.File
	rev      *reviews.File
	feat     *features.File
	open     *progress.OpenSessions
	problems []Problem
	// adoption caches pendingAdoption (nil: not computed yet).
	adoption **migrate.Plan
	// edited are the state files read that are not the version the log
	// recorded (see replaced)
	edited []store.Drift
	// intent is the git change of a transaction not committed yet (nil:
	// none); flight is that change when it explains main's head (see
	// mergeInFlight).
	intent, flight *gitIntent
}

// Problem is one thing verify (or status) found wrong: the check, the file
// and what is wrong.
type Problem struct {
	Check   string `json:"check"`
	File    string `json:"file,omitempty"`
	Message string `json:"message"`
}

// snapshot reads every file and then runs fn (which only reads), without
// the lock, repeated until no writer committed meanwhile, so that the log
// and the files are seen at one moment (a writer committing between the two
// reads would look like an edit made outside baton). A reader never waits
// for a writer, and works for a user who may not write the state directory.
// A state file that does not parse, or that is not the version the log
// recorded, is not answered from: the command refuses (exit 6), as every
// write would.
func (a *App) snapshot(ctx context.Context, fn func(sn *snapshot) error) error {
	return a.readSnapshots(ctx, func(sn *snapshot) error {
		if err := sn.refusal(); err != nil {
			return err
		}
		return fn(sn)
	})
}

// reportingSnapshot is snapshot for the people's commands that show what
// is wrong rather than refuse: verify and status report a state file
// another command would refuse among their problems; log, show and report
// answer with a warning saying so.
func (a *App) reportingSnapshot(ctx context.Context, warn bool, fn func(sn *snapshot) error) error {
	return a.readSnapshots(ctx, func(sn *snapshot) error {
		if err := sn.refusal(); err != nil && warn {
			a.warn("%v", err)
		}
		return fn(sn)
	})
}

// readSnapshots is the reading both share.
func (a *App) readSnapshots(ctx context.Context, fn func(sn *snapshot) error) error {
	s, err := a.openStore("")
	if err != nil {
		return err
	}
	if err := s.MustExist(); err != nil {
		return err
	}
	return s.ReadConsistent(ctx, func() error {
		sn, err := a.readSnapshot(ctx, s)
		if err != nil {
			return err
		}
		return fn(sn)
	})
}

// refusal is why a command may not answer from the snapshot: the first
// state file that does not parse, or that is not the version the log
// recorded, or a log put back behind its anchors (nil when none).
func (sn *snapshot) refusal() error {
	if len(sn.problems) > 0 {
		return errs.New(errs.Invalid, "%s", sn.problems[0].Message)
	}
	if len(sn.edited) > 0 {
		return replacedError(sn.edited[0])
	}
	if sn.prog != nil || sn.rev != nil || sn.feat != nil {
		return logBehind(sn.s, "the state")
	}
	return nil
}

// compare notes a state file read (data; nil: missing) that is not the
// version the log recorded.
func (sn *snapshot) compare(name string, data []byte) {
	if d, err := sn.s.Replaced(name, data); err == nil && d != nil && !initializersList(name, d) {
		sn.edited = append(sn.edited, *d)
	}
}

func (a *App) readSnapshot(ctx context.Context, s *store.Store) (*snapshot, error) {
	cfg, err := a.loadConfig(s)
	if err != nil {
		return nil, err
	}
	sn := &snapshot{s: s, cfg: cfg}
	if b := s.PendingIntent(); b != nil {
		var in gitIntent
		if json.Unmarshal(b, &in) == nil {
			sn.intent = &in
		}
	}
	read := func(name string, parse func([]byte) error) {
		data, err := s.ReadFile(ctx, name)
		if err != nil {
			sn.problems = append(sn.problems, Problem{"files", name, err.Error()})
			return
		}
		if data == nil {
			sn.compare(name, nil)
			return
		}
		if err := parse(data); err != nil {
			sn.problems = append(sn.problems, Problem{"files", name, invalidFile(s, name, data, err).Error()})
		}
		sn.compare(name, data)
	}
	read(progress.FileName, func(b []byte) (err error) { sn.prog, err = progress.Parse(b); return })
	read(reviews.FileName, func(b []byte) (err error) { sn.rev, err = reviews.Parse(b); return })
	read(features.FileName, func(b []byte) (err error) { sn.feat, err = features.Parse(b); return })
	read(progress.OpenFileName, func(b []byte) (err error) { sn.open, err = progress.ParseOpen(b); return })
	if sn.open == nil {
		sn.open = &progress.OpenSessions{}
	}
	return sn, nil
}

// ---- verify

// VerifyResult is what verify found: OK when there are no problems.
type VerifyResult struct {
	OK       bool      `json:"ok"`
	Events   int       `json:"events"`
	Problems []Problem `json:"problems"`
	// Authenticated says whether every entry's signature was checked (with
	// trusted public keys); Notes are what a person should look at.
	Authenticated bool     `json:"authenticated"`
	Notes         []string `json:"notes"`
	// GitChecked says whether a git repository was checked.
	GitChecked bool `json:"-"`
	// FromGit: the repository alone was checked (verify --from-git), and
	// Landings is how many baton merges and attested landings on main.
	FromGit  bool `json:"from_git,omitempty"`
	Landings int  `json:"landings,omitempty"`
}

func (sn *snapshot) verify() VerifyResult {
	res := VerifyResult{Problems: append([]Problem{}, sn.problems...)}
	events, err := sn.s.ReadEvents()
	res.Events = len(events)
	if err != nil {
		res.Problems = append(res.Problems, Problem{"chain", store.EventsName, err.Error()})
	}
	for _, p := range store.CheckChain(events) {
		res.Problems = append(res.Problems, Problem{"chain", store.EventsName, fmt.Sprintf("line %d (seq %d): %s", p.Line, p.Seq, p.Problem)})
	}
	res.Problems = append(res.Problems, anchorProblems(sn.s, events)...)
	drifts, _, err := sn.s.CheckDrift()
	if err != nil {
		res.Problems = append(res.Problems, Problem{"files", "", err.Error()})
	}
	for _, d := range drifts {
		if note := sn.mergeInFlight(d); note != "" {
			res.Notes = append(res.Notes, note)
			continue
		}
		res.Problems = append(res.Problems, Problem{"edited", d.File, d.Message()})
	}
	res.Problems = append(res.Problems, sn.passingWithoutReview()...)
	res.Problems = append(res.Problems, sn.doneTooSoon()...)
	res.OK = len(res.Problems) == 0
	return res
}

// mergeInFlight says, for main's head moved from what the log recorded,
// whether baton's own merge in flight moved it (the intent a merge writes
// before it moves main, from exactly that commit to this one), and then
// what is happening ("" otherwise). The state lock's holder commits or
// undoes it; a killed one's is undone by the next command, before it reads.
func (sn *snapshot) mergeInFlight(d store.Drift) string {
	in := sn.intent
	if d.File != mainRef || in == nil || in.Op != "merge" || in.Commit != d.Now || in.Previous != d.Recorded {
		return ""
	}
	sn.flight = in
	return fmt.Sprintf("a merge is in flight: baton's own 'reviews merge' moved %s from %s to %s (merging %s) and has not committed it to the state files yet (its recorded intent says so); the command holding the state lock commits or undoes it. Run verify again once it has finished", in.Into, gitops.Short(in.Previous), gitops.Short(in.Commit), in.Branch)
}

// doneTooSoon reports a status of DONE while work is pending.
func (sn *snapshot) doneTooSoon() []Problem {
	if sn.prog == nil || sn.feat == nil {
		return nil
	}
	if st, err := sn.prog.Status(); err != nil || st.CurrentPhase != workflow.PhaseDone {
		return nil
	}
	var ids []string
	for _, f := range sn.feat.Pending("") {
		ids = append(ids, f.ID)
	}
	if len(ids) == 0 {
		return nil
	}
	return []Problem{{"workflow", progress.FileName, fmt.Sprintf("the status is DONE while %s are not passing", strings.Join(ids, ", "))}}
}

// unmergedAtDone lists, when the status is DONE, the passing features
// that no recorded merge brought to main.
func (sn *snapshot) unmergedAtDone() []string {
	if sn.prog == nil || sn.feat == nil || sn.rev == nil {
		return nil
	}
	if st, err := sn.prog.Status(); err != nil || st.CurrentPhase != workflow.PhaseDone {
		return nil
	}
	merged := map[string]bool{}
	for _, r := range sn.rev.Reviews() {
		if r.Get("merge_commit").String() != "" {
			for _, id := range features.SplitIDs(r.Get("feature_id").String()) {
				merged[id] = true
			}
		}
	}
	var out []string
	for _, id := range sn.feat.Passing() {
		if !merged[id] {
			out = append(out, id)
		}
	}
	return out
}

// passingWithoutReview lists passing features no passing review accounts
// for.
func (sn *snapshot) passingWithoutReview() []Problem {
	if sn.feat == nil {
		return nil
	}
	passed := map[string]bool{}
	if sn.rev != nil {
		passed = sn.rev.PassedFeatures()
	}
	var out []Problem
	for _, id := range sn.feat.Passing() {
		if !passed[id] {
			out = append(out, Problem{"review", features.FileName, fmt.Sprintf("%s is passing but no PASS review names it (only REVIEW marks features passing, after a passing review)", id)})
		}
	}
	return out
}

// ---- next

// NextResult is the role that runs next, on what, and the rule that decided it.
type NextResult struct {
	Phase    string   `json:"phase"`
	Feature  *string  `json:"-"`
	Features []string `json:"features"`
	Branch   *string  `json:"branch"`
	Rule     string   `json:"rule"`
	Reason   string   `json:"reason"`
	// The schedule (next --json): every step that can run now, the lanes
	// running, and what waits and why.
	Steps   []workflow.Step `json:"steps,omitzero"`
	Running []workflow.Step `json:"running,omitzero"`
	Waiting []workflow.Wait `json:"waiting,omitzero"`
}

func firstProblemOr(sn *snapshot, err error) error {
	if len(sn.problems) > 0 {
		return errs.New(errs.Invalid, "%s", sn.problems[0].Message)
	}
	return err
}

// next is the status's recorded decision, or, before any decision, the
// next work item computed from the backlog.
func (sn *snapshot) next() NextResult {
	st, _ := sn.prog.Status()
	raw := gjson.ParseBytes(sn.prog.StatusRaw())
	if rule := raw.Get("decision.rule").String(); rule != "" {
		return NextResult{Phase: st.CurrentPhase, Feature: st.CurrentFeature, Features: IDList(st.CurrentFeature), Branch: st.CurrentBranch, Rule: rule, Reason: raw.Get("decision.reason").String()}
	}
	if p := sn.pendingAdoption(); p != nil {
		d := p.Decision
		return NextResult{Phase: d.Phase, Feature: d.Feature, Features: IDList(d.Feature), Branch: d.Branch, Rule: ruleNotAdopted, Reason: d.Reason + notAdopted}
	}
	d := workflow.NextWork(workflow.Situation{Limits: sn.cfg.Limits(), Backlog: backlogOf(sn.feat)})
	if sn.prog.Len() == 0 && (sn.feat == nil || len(sn.feat.All()) == 0) {
		d = workflow.NotInitialized()
	}
	return NextResult{Phase: d.Phase, Feature: d.Feature, Features: IDList(d.Feature), Branch: d.Branch, Rule: d.Rule, Reason: d.Reason}
}

// ---- status

// StatusResult is the one-screen summary status prints.
type StatusResult struct {
	StateDir     string                 `json:"state_dir"`
	Project      string                 `json:"project"`
	Next         NextResult             `json:"next"`
	Passing      int                    `json:"features_passing"`
	Total        int                    `json:"total_features"`
	Completed    int                    `json:"features_completed"`
	LastSession  any                    `json:"last_session"`
	LastReview   any                    `json:"last_review"`
	FixCycles    *FixCountResult        `json:"fix_cycles"`
	OpenSessions []progress.OpenSession `json:"open_sessions"`
	Problems     []Problem              `json:"problems"`
	LanesView
	// Costs are the usage the sessions' agents reported, added up.
	Costs Costs `json:"costs"`
}

func (sn *snapshot) status() StatusResult {
	res := StatusResult{StateDir: sn.s.Dir, Next: sn.next(), OpenSessions: sn.open.Open, Problems: sn.verify().Problems}
	if err := sn.refusal(); err != nil { // the problems say which file and why
		res.Next = NextResult{Phase: "UNKNOWN", Features: []string{}, Rule: "state-not-recorded", Reason: "not computed: " + err.Error()}
	}
	if p, err := sn.prog.Project(); err == nil {
		res.Project = p.Name
		res.Total = p.TotalFeatures
	}
	st, _ := sn.prog.Status()
	res.Passing, res.Completed = st.FeaturesPassing, st.FeaturesCompleted
	res.Costs = costsOf(sn.prog, "")
	if sn.pendingAdoption() != nil { // the predecessor's counters were typed in
		c := countersOf(sn.prog, sn.feat, sn.rev)
		res.Passing, res.Completed, res.Total = c.FeaturesPassing, c.FeaturesCompleted, c.TotalFeatures
	}
	if raw, err := sn.prog.SessionRaw(-1); err == nil {
		res.LastSession = gjson.ParseBytes(raw).Value()
	}
	if sn.rev != nil {
		if last, err := sn.rev.Last(); err == nil {
			res.LastReview = last.Value()
		}
		if st.CurrentFeature != nil {
			fc := fixCountOf(sn.rev, *st.CurrentFeature, sn.cfg)
			res.FixCycles = &fc
		}
	}
	if res.OpenSessions == nil {
		res.OpenSessions = []progress.OpenSession{}
	}
	sn.lanes(&res)
	return res
}

// ---- verify: git

// recordedHash is a commit hash a state file records, and where.
type recordedHash struct {
	Where, Hash string
}

// recordedMerge is a merge the files record: the merge commit, and main's
// head before it when known (a fast-forward has no first parent to ask).
type recordedMerge struct {
	Where, Commit, Onto string
	Review              bool // a review's merge (not a fix's)
	// Passing are the features of the merged review that pass now: the
	// merge must stay on main for them to.
	Passing []string
}

// gitRecords is every hash the files record, read under the lock.
type gitRecords struct {
	hashes   []recordedHash
	sessions []string // the hashes of sessions' commits
	merges   []recordedMerge
	// unmerged are the passing features no recorded merge brought to
	// main, when the status says DONE.
	unmerged []string
	// log is what the audit log records of main's merges.
	log logRecords
	// flight is baton's own merge in flight (see mergeInFlight): main is
	// checked at the commit it moved from.
	flight *gitIntent
}

// passingOf lists the features of a review's feature_id that pass now.
func (sn *snapshot) passingOf(ids string) []string {
	if sn.feat == nil {
		return nil
	}
	passing := map[string]bool{}
	for _, id := range sn.feat.Passing() {
		passing[id] = true
	}
	var out []string
	for _, id := range features.SplitIDs(ids) {
		if passing[id] {
			out = append(out, id)
		}
	}
	return out
}

func (sn *snapshot) gitRecords() gitRecords {
	g := gitRecords{unmerged: sn.unmergedAtDone(), flight: sn.flight}
	add := func(where string, v gjson.Result) {
		if v.Type == gjson.String && strings.TrimSpace(v.Str) != "" {
			g.hashes = append(g.hashes, recordedHash{where, strings.TrimSpace(v.Str)})
		}
	}
	if sn.prog != nil {
		sn.prog.Sessions(func(raw []byte) {
			s := gjson.ParseBytes(raw)
			where := fmt.Sprintf("%s: session %d", progress.FileName, s.Get("session_id").Int())
			s.Get("commits").ForEach(func(_, c gjson.Result) bool {
				add(where+" commits", c.Get("hash"))
				if h := c.Get("hash").String(); h != "" {
					g.sessions = append(g.sessions, strings.TrimSpace(h))
				}
				return true
			})
			add(where+" commit_range.from", s.Get("commit_range.from"))
			add(where+" commit_range.to", s.Get("commit_range.to"))
		})
	}
	if sn.rev == nil {
		return g
	}
	for _, r := range sn.rev.Reviews() {
		where := fmt.Sprintf("%s: review R%d", reviews.FileName, r.Get("review_id").Int())
		add(where+" commit_range.from", r.Get("commit_range.from"))
		add(where+" commit_range.to", r.Get("commit_range.to"))
		add(where+" merge_commit", r.Get("merge_commit"))
		if m := r.Get("merge_commit").String(); m != "" {
			g.merges = append(g.merges, recordedMerge{where, m, r.Get("merged_onto").String(), true, sn.passingOf(r.Get("feature_id").String())})
		}
	}
	for _, x := range sn.rev.Fixes() {
		where := fmt.Sprintf("%s: fix %s", reviews.FileName, reviews.FixLabel(int(x.Get("fix_id").Int())))
		x.Get("issues_fixed").ForEach(func(_, is gjson.Result) bool {
			add(where+" issue "+is.Get("issue_id").String()+" commit", is.Get("commit"))
			return true
		})
		add(where+" merge_commit", x.Get("merge_commit"))
		if m := x.Get("merge_commit").String(); m != "" {
			g.merges = append(g.merges, recordedMerge{Where: where, Commit: m})
		}
	}
	return g
}

// gitProblems checks the records against the working directory's
// repository: every hash exists, and every commit on main since the
// baseline is accounted for. Outside a repository there is nothing to check.
func (a *App) gitProblems(g gitRecords, base *gitBaseline, cfg store.Config) []Problem {
	r := a.repo()
	if r == nil {
		return nil
	}
	resolved := map[string]string{}
	var out []Problem
	for _, h := range g.hashes {
		full, ok := resolved[h.Hash]
		if !ok {
			full, _ = gitops.ResolveCommit(r, h.Hash)
			resolved[h.Hash] = full
		}
		if full == "" {
			out = append(out, Problem{"git-hash", strings.SplitN(h.Where, ":", 2)[0], fmt.Sprintf("%s: %s does not exist in the repository at %s (history rewritten, or recorded outside baton)", h.Where, gitops.Short(h.Hash), r.Top())})
		}
	}
	if len(g.unmerged) > 0 {
		out = append(out, Problem{"git-merge", reviews.FileName, fmt.Sprintf("the status is DONE, but no recorded merge brought %s to main: DONE needs every feature merged through 'baton reviews merge'", strings.Join(g.unmerged, ", "))})
	}
	return append(out, mainProblems(r, g, base, cfg, resolved)...)
}

// mainProblems lists the commits on main since the baseline that no
// recorded merge or session accounts for.
func mainProblems(r gitops.Repo, g gitRecords, base *gitBaseline, cfg store.Config, resolved map[string]string) []Problem {
	if base == nil {
		return nil
	}
	name := base.MainBranch
	if name == "" {
		name = cfg.MainBranch
	}
	head, err := r.Branch(name)
	if f := g.flight; err == nil && f != nil && f.Into == name && f.Commit == head {
		head = f.Previous
	}
	if err != nil {
		if base.MainHead == nil {
			return nil // still no commit on main
		}
		return []Problem{{"git-main", "", fmt.Sprintf("the main branch %s recorded at 'baton init' does not exist in the repository at %s", name, r.Top())}}
	}
	from := ""
	if base.MainHead != nil {
		from = *base.MainHead
		if ok, err := r.IsAncestor(from, head); err != nil || !ok {
			return []Problem{{"git-main", "", fmt.Sprintf("%s was rewritten: its head at 'baton init', %s, is no longer in its history (now at %s)", name, gitops.Short(from), gitops.Short(head))}}
		}
	}
	out := rewound(r, g, name, head, resolved)
	onMain, err := r.Range(from, head)
	if err != nil {
		return []Problem{{"git-main", "", fmt.Sprintf("listing the commits on %s: %v", name, err)}}
	}
	ok := accounted(r, g, resolved)
	reconciledCommits(r, g.log, ok)
	for _, c := range onMain {
		if !ok[c.Hash] {
			out = append(out, Problem{"git-main", "", fmt.Sprintf("%s has commit %s %q that no recorded merge accounts for: it reached %s outside 'baton reviews merge' (see 'git log %s')", name, gitops.Short(c.Hash), c.Subject, name, gitops.Short(c.Hash))})
		}
	}
	return append(out, logMergeProblems(r, g, name, head, onMain, resolved)...)
}

// rewound lists the recorded merges of passing features that main no
// longer contains: main was moved back past them, undoing those reviews.
func rewound(r gitops.Repo, g gitRecords, name, head string, resolved map[string]string) []Problem {
	var out []Problem
	for _, m := range g.merges {
		mc := resolved[m.Commit]
		if len(m.Passing) == 0 || mc == "" {
			continue
		}
		if on, err := r.IsAncestor(mc, head); err == nil && !on {
			out = append(out, Problem{"git-rewind", reviews.FileName, fmt.Sprintf("%s: its merge commit %s is no longer on %s (now at %s): %s was moved back past it, undoing that review, while %s still pass", m.Where, gitops.Short(mc), name, gitops.Short(head), name, strings.Join(m.Passing, ", "))})
		}
	}
	return out
}

// accounted is the set of commits the records account for on main: every
// recorded merge commit and the commits each brought in (from main's head
// before it, else its first parent). A session's own commits never account
// for main: main changes only through 'baton reviews merge'.
func accounted(r gitops.Repo, g gitRecords, resolved map[string]string) map[string]bool {
	ok := map[string]bool{}
	for _, m := range g.merges {
		mc := resolved[m.Commit]
		if mc == "" {
			continue
		}
		ok[mc] = true
		from, err := gitops.ResolveCommit(r, m.Onto)
		if m.Onto == "" || err != nil {
			if from, err = gitops.ResolveCommit(r, mc+"^1"); err != nil {
				continue // a root commit
			}
		}
		in, err := r.Range(from, mc)
		if err != nil {
			continue
		}
		for _, c := range in {
			ok[c.Hash] = true
		}
	}
	return ok
}

// VerifyInput is what verify trusts: with TrustedKeys (an allowed-signers
// file), the keys it lists and no other; else the person's own keys and
// the project's allowed-signers file.
type VerifyInput struct {
	TrustedKeys string `json:"trusted_keys,omitempty"`
	// FromGit checks what the repository carries alone (a clone with no
	// state directory): baton's merges and their attestations.
	FromGit bool `json:"from_git,omitempty"`
}

// Verify checks the audit chain, that the files match the last event, the
// state's invariants and git. A problem found is in the result (OK false),
// not an error: the front end shows them and then fails.
func (a *App) Verify(ctx context.Context, c Caller, in VerifyInput) (VerifyResult, error) {
	if a.remote != nil {
		return forward[VerifyResult](ctx, a, c, "verify", in)
	}
	a = a.as(c)
	if in.FromGit {
		return a.verifyFromGit(ctx, in)
	}
	var res VerifyResult
	var auth authCheck
	var trust trust
	var recs gitRecords
	var base *gitBaseline
	var cfg store.Config
	if err := a.reportingSnapshot(ctx, false, func(sn *snapshot) error {
		events, _ := sn.s.ReadEvents()
		var err error
		if trust, err = a.trustedKeys(in, sn.s.Dir, events); err != nil {
			return err
		}
		res, recs, cfg = sn.verify(), sn.gitRecords(), sn.cfg
		if trust.problem != "" {
			res.Problems = append(res.Problems, Problem{"signers", SignersName, trust.problem})
		}
		recs.log = logRecordsOf(events)
		moved, copies := movedProblems(sn.s, events)
		res.Problems = append(res.Problems, moved...)
		auth = a.checkAudit(sn, events, trust.keys, trust.source)
		res.Problems = append(res.Problems, auth.problems...)
		notes := append(append(append(auth.notes, migrationNotes(events)...), rewrittenNotes(events)...), copies...)
		res.Notes, res.Authenticated = append(notes, res.Notes...), auth.authenticated
		if base, err = readBaseline(sn.s); err != nil {
			res.Problems = append(res.Problems, Problem{"git-main", gitBaselineName, err.Error()})
		}
		return nil
	}); err != nil {
		return res, err
	}
	// git is read after the state lock is released: a long history
	// must not hold up the writers.
	res.GitChecked = a.repo() != nil
	res.Problems = append(res.Problems, a.gitProblems(recs, base, cfg)...)
	if r := a.repo(); r != nil {
		res.Problems = append(res.Problems, gateProblems(r, recs.log, cfg.Gate.Command)...)
		if auth.authenticated {
			res.Problems = append(res.Problems, mergeSignatureProblems(r, recs.log, auth.sessionKeys, trust.keys)...)
			if main, _, err := mainOf(r, cfg); err == nil {
				problems, notes := attestationProblems(r, recs.log, main, trust.keys)
				res.Problems, res.Notes = append(res.Problems, problems...), append(res.Notes, notes...)
			}
		}
	}
	res.Problems, res.Notes = splitNotes(res.Problems, res.Notes)
	if note := a.staleHooksNote(cfg); note != "" {
		res.Notes = append(res.Notes, note)
	}
	res.OK = len(res.Problems) == 0
	return res, nil
}

// Next is the role that runs next, on what, and the rule that decided it.
func (a *App) Next(ctx context.Context, c Caller) (NextResult, error) {
	if a.remote != nil {
		return forward[NextResult](ctx, a, c, "next", nil)
	}
	a = a.as(c)
	var n NextResult
	err := a.snapshot(ctx, func(sn *snapshot) error {
		if sn.prog == nil {
			return firstProblemOr(sn, missing(sn.s, progress.FileName, progressHint))
		}
		n = sn.next().withSchedule(workflow.Runnable(sn.project()))
		return nil
	})
	return n, err
}

// Status is the one-screen summary: phase, feature, branch, counters,
// the last session and review, fix cycles left, problems.
func (a *App) Status(ctx context.Context, c Caller) (StatusResult, error) {
	if a.remote != nil {
		return forward[StatusResult](ctx, a, c, "status", nil)
	}
	a = a.as(c)
	var res StatusResult
	err := a.reportingSnapshot(ctx, false, func(sn *snapshot) error {
		if sn.prog == nil {
			return firstProblemOr(sn, missing(sn.s, progress.FileName, progressHint))
		}
		res = sn.status()
		a.laneView(ctx, sn, &res)
		return nil
	})
	return res, err
}
