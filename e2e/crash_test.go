package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/workflow"
)

// TestCrashSafety kills writers with SIGKILL at random moments of their
// transaction, hundreds of times, and after each kill runs a read-only
// command (which must finish a left-over journal first) and checks that the
// state is exactly the one before the writer or the one after it, never a
// mix: every file parses, no journal is left, feature_list.json and
// progress.json (written in one transaction by `features pass`/`fail`) agree,
// reviews.json and progress.json (one transaction for a PASS review) agree,
// a fix is the old fixes plus one, the sessions are the old list or the
// old list plus the new session with the next id, the audit log gained
// exactly one event if and only if the files changed and its last event
// records the files as they are, and a writer that exited by itself left
// its change.
//
// Half the kill delays are drawn from 0 to 1.25 times the measured duration
// of the same command, so kills land everywhere from process start-up to
// exit; the other half aim at the commit point (see killer). The
// state is made large (thousands of sessions, hundreds of long features) so
// that writing and syncing the files takes a while.
//
// BATON_CRASH_ITERATIONS sets the number of kills (default 300, 60 with
// -short); the loop stops early, and says so, when it has run for
// crashBudget. BATON_CRASH_SEED replays a run's choice of writers (the kill
// moments also follow the machine's timing).
func TestCrashSafety(t *testing.T) {
	iterations := envInt(t, "BATON_CRASH_ITERATIONS", 300)
	if testing.Short() && os.Getenv("BATON_CRASH_ITERATIONS") == "" {
		iterations = 60
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("BATON_CRASH_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("BATON_CRASH_SEED=%q: %v", v, err)
		}
	}
	t.Logf("BATON_CRASH_SEED=%d BATON_CRASH_ITERATIONS=%d", seed, iterations)
	rng := rand.New(rand.NewPCG(seed, 0x6261746f6e))

	const (
		nFeatures = 300
		toggleMax = 40 // pass/fail toggles F001..F040
		nSessions = 2000
	)
	dir := newProject(t)
	appendFeatures(t, dir, nFeatures, 400)
	inflateSessions(t, dir, nSessions)
	// The features toggled have a passing review (baton verify wants one
	// behind every passing feature); this also rewrites progress.json
	// through baton, so the audit log records its inflated content.
	var toggled []string
	for n := 1; n <= toggleMax; n++ {
		toggled = append(toggled, featureID(n))
	}
	mustBaton(t, dir, "reviews", "add-review", "-a", "REVIEW", "--feature-id", strings.Join(toggled, ","), "-b", "feature/batch",
		"-v", "PASS", "-s", "initial review")

	prev := loadCrash(t, dir, nil)
	nextDone := 0 // PASS reviews go to F001, F002, ... in turn
	// newOp draws the next writer from the current state.
	newOp := func(i int, cur *crashState) crashOp {
		if rng.IntN(5) == 0 {
			if op, ok := fixOp(cur); ok {
				return op
			}
		}
		switch k := rng.IntN(4); {
		case k < 2:
			id := featureID(1 + rng.IntN(toggleMax))
			if cur.passes(id) {
				return crashOp{kind: "fail", feature: id, args: []string{"features", "fail", id, "--reason", fmt.Sprintf("crash %d", i)}}
			}
			return crashOp{kind: "pass", feature: id, args: []string{"features", "pass", id}}
		case k == 2:
			sum := fmt.Sprintf("crash session %d", i)
			return crashOp{kind: "session", summary: sum, args: []string{"progress", "add-session", "-a", "IMPLEMENT", "-s", sum,
				"-o", "READY_FOR_REVIEW", "--features", featureID(1 + i%nFeatures), "--commits", fmt.Sprintf("c%06x:crash commit %d", i, i)}}
		default:
			sum := fmt.Sprintf("crash review %d", i)
			op := crashOp{kind: "review", summary: sum}
			if i%2 == 0 { // a PASS review changes features_completed: reviews.json and progress.json in one transaction
				op.feature = featureID(1 + nextDone%nFeatures)
				nextDone++
				op.args = []string{"reviews", "add-review", "-a", "REVIEW", "--feature-id", op.feature, "-b", "feature/" + strings.ToLower(op.feature), "-v", "PASS", "-s", sum}
			} else {
				// a feature at its fix-cycle limit is not asked for changes:
				// baton decides such a review REJECT, which also rewrites
				// feature_list.json (the merge and reject loop covers it)
				op.feature = belowFixLimit(cur, i, nFeatures)
				op.args = []string{"reviews", "add-review", "-a", "REVIEW", "--feature-id", op.feature, "-b", "feature/" + strings.ToLower(op.feature), "-v", "REQUEST_CHANGES", "-s", sum,
					"--issues", `{"major":[{"description":"m"}],"minor":[{"description":"n"}]}`}
			}
			return op
		}
	}

	seen := map[string]bool{} // every version of the files the test saw, by hash
	see := func(c *crashState) {
		for _, b := range [][]byte{c.prog, c.rev, c.feat} {
			seen[hashOf(b)] = true
		}
	}
	see(prev)
	// Calibrate: how long each kind of writer takes when left alone.
	kill := newKiller(rng)
	for i := 0; !kill.calibrated() || i < 12; i++ {
		if i > 200 {
			t.Fatalf("calibration never drew every kind of writer")
		}
		op := newOp(1_000_000+i, prev)
		start := time.Now()
		mustBaton(t, dir, op.args...)
		kill.sample(kindClass(op.kind), time.Since(start))
		prev = loadCrash(t, dir, prev)
		see(prev)
	}
	t.Logf("uninterrupted durations: %v (progress.json %d KB, feature_list.json %d KB)", kill.took, len(prev.prog)/1024, len(prev.feat)/1024)

	var st struct{ killed, exited, journals, temps, newState, oldState, backups int }
	prevEvents, _ := auditLog(t, dir)
	kinds := map[string]int{}
	deadline := time.Now().Add(crashBudget)
	for i := 0; i < iterations; i++ {
		if time.Now().After(deadline) {
			t.Logf("stopping after %d of %d iterations: the time budget of %v is spent (a slow or busy machine)", i, iterations, crashBudget)
			break
		}
		op := newOp(i, prev)
		kinds[op.kind]++
		delay := kill.delay(kindClass(op.kind))
		started := time.Now()
		p := startBaton(t, dir, op.args...)
		timer := time.AfterFunc(delay, func() { _ = p.cmd.Process.Kill() }) // harmless once it exited
		res := p.wait(t)
		elapsed := time.Since(started)
		timer.Stop()
		completed := res.signal != syscall.SIGKILL
		if completed {
			st.exited++
			if res.code != 0 {
				t.Fatalf("iteration %d: a writer that was not killed failed: %v", i, res)
			}
		} else {
			st.killed++
		}
		hadJournal := journalExists(t, dir)
		if hadJournal {
			st.journals++
		}
		if len(leftovers(t, dir)) > 0 {
			st.temps++
		}

		// A read-only command finishes what the killed writer committed.
		rd := readerFor(i, op)
		rres := baton(t, dir, rd...)
		if rres.code != 0 {
			t.Fatalf("iteration %d (after %s killed=%v): the reader failed: %v", i, op, !completed, rres)
		}
		if journalExists(t, dir) {
			t.Fatalf("iteration %d: .baton/journal is still there after `baton %v` ran", i, rd)
		}
		if left := leftovers(t, dir); hadJournal && len(left) > 0 {
			t.Fatalf("iteration %d: recovering the journal left %v behind", i, left)
		}

		cur := loadCrash(t, dir, prev)
		when := fmt.Sprintf("iteration %d (%s, killed after %v, completed=%v, journal found=%v)", i, op, delay, completed, hadJournal)
		changed := checkTransition(t, when, op, prev, cur, completed)
		events, last := auditLog(t, dir)
		if want := prevEvents + map[bool]int{true: 1, false: 0}[changed]; events != want {
			t.Fatalf("%s: the audit log has %d events, want %d", when, events, want)
		}
		checkAudit(t, when, last, map[string][]byte{featuresName: cur.feat, reviewsName: cur.rev, progressName: cur.prog})
		prevEvents = events
		if !completed {
			if changed {
				st.newState++
			} else {
				st.oldState++
			}
		}
		checkReader(t, when, rres, cur)
		see(cur)
		st.backups += checkBackups(t, when, dir, seen)
		kill.learn(kindClass(op.kind), delay, elapsed, completed, changed)
		prev = cur
	}

	// An uninterrupted writer clears every staged file of killed writers.
	mustBaton(t, dir, "progress", "add-session", "-a", "IMPLEMENT", "-s", "after the crashes", "-o", "SUCCESS")
	if left := leftovers(t, dir); len(left) > 0 {
		t.Fatalf("after an uninterrupted writer: transaction files left behind: %v", left)
	}
	final := loadCrash(t, dir, prev)
	checkSessionIDs(t, "final state", final.p.Sessions)
	checkCounters(t, "final state", final.p, final.f, final.r)
	if n := len(final.p.Sessions); n != len(prev.p.Sessions)+1 || final.p.Sessions[n-1].Summary != "after the crashes" {
		t.Fatalf("final state: the last session is not the one just added")
	}
	mustBaton(t, dir, "verify") // the whole audit chain, across every recovery
	if st.backups == 0 {
		t.Fatal("no backup was checked: the loop proves nothing about them")
	}
	t.Logf("%d writers killed, %d finished before the kill; %d kills left a committed journal, %d left staged files; killed writers left the new state %d times, the old state %d times; %d backups checked against a version seen; %d sessions; writers %v; durations %v, commit points %v",
		st.killed, st.exited, st.journals, st.temps, st.newState, st.oldState, st.backups, len(final.p.Sessions), kinds, kill.took, kill.commit)
}

// checkBackups requires each backup to hold a version of its file the
// loop saw: a backup is a hard link to the version a commit replaced,
// which is never written again, so a kill leaves the old one or the new
// one. It returns how many it checked.
func checkBackups(t *testing.T, when, dir string, seen map[string]bool) int {
	t.Helper()
	n := 0
	for _, name := range []string{progressName, reviewsName, featuresName} {
		b, err := os.ReadFile(filepath.Join(dir, ".baton", "backup", name))
		if err != nil {
			continue // none kept yet
		}
		if !seen[hashOf(b)] {
			t.Fatalf("%s: the backup of %s (%d bytes) is no version of it the test saw", when, name, len(b))
		}
		n++
	}
	return n
}

func hashOf(b []byte) string { return contentHash(b) }

// crashBudget bounds the kill loop, so that a slow or busy machine runs
// fewer iterations instead of timing out.
const crashBudget = 45 * time.Second

// killer draws kill delays per kind of writer. Half the kills are spread
// over the whole command, from before it starts up to a quarter past its
// uninterrupted duration; the other half aim at its commit point, learnt as
// the delay at which a kill leaves the new state as often as the old one
// (a stochastic approximation that follows the machine's speed), so that
// kills also land in the short window between the journal and its removal.
type killer struct {
	rng    *rand.Rand
	took   map[string]time.Duration // uninterrupted duration: calibrated, then followed
	runs   map[string][]time.Duration
	commit map[string]time.Duration
}

func newKiller(rng *rand.Rand) *killer {
	return &killer{rng: rng, took: map[string]time.Duration{}, runs: map[string][]time.Duration{}, commit: map[string]time.Duration{}}
}

func (k *killer) sample(kind string, d time.Duration) {
	k.runs[kind] = append(k.runs[kind], d)
	r := slices.Clone(k.runs[kind])
	slices.Sort(r)
	k.took[kind] = r[len(r)/2]
	k.commit[kind] = k.took[kind] * 4 / 5
}

func (k *killer) calibrated() bool {
	for _, kind := range []string{"pass", "session", "review"} {
		if len(k.runs[kind]) < 3 {
			return false
		}
	}
	return true
}

func (k *killer) delay(kind string) time.Duration {
	d := k.took[kind]
	if k.rng.IntN(2) == 0 {
		return time.Duration(k.rng.Int64N(int64(d*5/4) + 1))
	}
	w := d / 8
	return max(0, k.commit[kind]-w+time.Duration(k.rng.Int64N(int64(2*w)+1)))
}

// learn follows the machine's speed. A writer that exited by itself took
// elapsed; one killed with nothing changed was still running after delay.
// The commit point estimate moves down after a kill before it that left the
// new state, and up after a kill past it that left the old state.
func (k *killer) learn(kind string, delay, elapsed time.Duration, completed, changed bool) {
	switch {
	case completed:
		k.took[kind] = (4*k.took[kind] + elapsed) / 5
	case !changed:
		k.took[kind] = max(k.took[kind], delay)
	}
	step := k.took[kind] / 15
	switch {
	case changed && delay < k.commit[kind]:
		k.commit[kind] = max(0, k.commit[kind]-step)
	case !changed && delay > k.commit[kind]:
		k.commit[kind] = min(3*k.took[kind], k.commit[kind]+step)
	}
}

// crashOp is one writer of the crash test.
type crashOp struct {
	kind    string // pass, fail, session, review, fix
	feature string
	review  int // the review a fix answers
	summary string
	args    []string
}

func (o crashOp) String() string { return "baton " + strings.Join(o.args, " ") }

func kindClass(kind string) string {
	switch kind {
	case "fail":
		return "pass"
	case "fix":
		return "review"
	}
	return kind
}

func sameFix(a, b fixRec) bool {
	deref := func(p *string) string {
		if p == nil {
			return "\x00"
		}
		return *p
	}
	return a.FixID == b.FixID && a.ReviewID == b.ReviewID && deref(a.FeatureID) == deref(b.FeatureID)
}

// belowFixLimit is a feature of the n, from the i-th on, with fewer fixes
// than the fix-cycle limit (the i-th when the reviews do not parse).
func belowFixLimit(cur *crashState, i, nFeatures int) string {
	full, err := reviews.Parse(cur.rev)
	for k := 0; k < nFeatures; k++ {
		id := featureID(1 + (i+k)%nFeatures)
		if err != nil || full.FixCount(id) < workflow.DefaultLimits.MaxFixCycles {
			return id
		}
	}
	return featureID(1 + i%nFeatures)
}

// fixOp answers the last review asking for changes whose feature is below
// its fix-cycle limit (false when there is none).
func fixOp(cur *crashState) (crashOp, bool) {
	full, err := reviews.Parse(cur.rev)
	if err != nil {
		return crashOp{}, false
	}
	for i := len(cur.r.Reviews) - 1; i >= 0 && i >= len(cur.r.Reviews)-20; i-- {
		r := cur.r.Reviews[i]
		if r.Verdict != "REQUEST_CHANGES" || r.FeatureID == nil || full.FixCount(*r.FeatureID) >= workflow.DefaultLimits.MaxFixCycles {
			continue
		}
		if v, err := full.Review(r.ReviewID); err != nil || v.Get("decision.reject").Bool() {
			continue
		}
		return crashOp{kind: "fix", feature: *r.FeatureID, review: r.ReviewID,
			args: []string{"reviews", "add-fix", "-r", strconv.Itoa(r.ReviewID)}}, true
	}
	return crashOp{}, false
}

// readerFor picks the read-only command run after iteration i: each must
// finish a left-over journal before reading.
func readerFor(i int, op crashOp) []string {
	switch i % 5 {
	case 0:
		if op.feature == "" {
			return []string{"--json", "features", "get", featureID(1)}
		}
		return []string{"--json", "features", "get", op.feature}
	case 1:
		return []string{"--json", "progress", "get-status"}
	case 2:
		return []string{"--json", "reviews", "get-last"}
	case 3:
		return []string{"--json", "progress", "get-session", "-1"}
	default:
		return []string{"--json", "verify"}
	}
}

// checkReader requires the reader's answer to match the files it recovered.
func checkReader(t *testing.T, when string, r result, cur *crashState) {
	t.Helper()
	var v struct {
		ID              string `json:"id"`
		Passes          *bool  `json:"passes"`
		FeaturesPassing *int   `json:"features_passing"`
		ReviewID        *int   `json:"review_id"`
		SessionID       *int   `json:"session_id"`
		OK              *bool  `json:"ok"`
	}
	mustUnmarshal(t, r, &v)
	switch r.args[1] {
	case "features":
		if v.Passes == nil || *v.Passes != cur.passes(v.ID) {
			t.Fatalf("%s: `baton %v` printed %s, but feature_list.json says passes=%v", when, r.args, r.stdout, cur.passes(v.ID))
		}
	case "progress":
		if r.args[2] == "get-status" && (v.FeaturesPassing == nil || *v.FeaturesPassing != len(cur.f.passing())) {
			t.Fatalf("%s: `baton %v` printed %s, but feature_list.json has %d passing", when, r.args, r.stdout, len(cur.f.passing()))
		}
		if r.args[2] == "get-session" && (v.SessionID == nil || *v.SessionID != len(cur.p.Sessions)) {
			t.Fatalf("%s: `baton %v` printed %s, but progress.json has %d sessions", when, r.args, r.stdout, len(cur.p.Sessions))
		}
	case "reviews":
		if v.ReviewID == nil || *v.ReviewID != len(cur.r.Reviews) {
			t.Fatalf("%s: `baton %v` printed %s, but reviews.json has %d reviews", when, r.args, r.stdout, len(cur.r.Reviews))
		}
	case "verify":
		if v.OK == nil || !*v.OK {
			t.Fatalf("%s: %v", when, r)
		}
	default:
		t.Fatalf("%s: unexpected reader %v", when, r.args)
	}
}

// crashState is the three files as bytes and decoded.
type crashState struct {
	feat, rev, prog []byte
	f               featureFile
	r               reviewsFile
	p               progressFile
}

func (s *crashState) passes(id string) bool {
	for _, it := range s.f.Features {
		if it.ID == id {
			return it.Passes
		}
	}
	return false
}

// loadCrash reads the files, decoding only those that changed since prev.
func loadCrash(t *testing.T, dir string, prev *crashState) *crashState {
	t.Helper()
	s := &crashState{
		feat: readState(t, dir, featuresName),
		rev:  readState(t, dir, reviewsName),
		prog: readState(t, dir, progressName),
	}
	if prev != nil && bytes.Equal(s.feat, prev.feat) {
		s.f = prev.f
	} else {
		s.f = parseFeatures(t, s.feat)
	}
	if prev != nil && bytes.Equal(s.rev, prev.rev) {
		s.r = prev.r
	} else {
		s.r = decode[reviewsFile](t, reviewsName, s.rev)
	}
	if prev != nil && bytes.Equal(s.prog, prev.prog) {
		s.p = prev.p
	} else {
		s.p = parseProgress(t, s.prog)
	}
	return s
}

// checkTransition requires cur to be prev, or prev with op applied, and
// reports which. A writer that finished must have left the new state.
func checkTransition(t *testing.T, when string, op crashOp, prev, cur *crashState, completed bool) bool {
	t.Helper()
	fChanged := !bytes.Equal(prev.feat, cur.feat)
	rChanged := !bytes.Equal(prev.rev, cur.rev)
	pChanged := !bytes.Equal(prev.prog, cur.prog)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s: %s\nfiles changed: feature_list.json %v, reviews.json %v, progress.json %v",
			when, fmt.Sprintf(format, args...), fChanged, rChanged, pChanged)
	}
	checkCounters(t, when, cur.p, cur.f, cur.r)
	if pChanged {
		checkSessionIDs(t, when, cur.p.Sessions)
	}
	if rChanged {
		for i, r := range cur.r.Reviews {
			if r.ReviewID != i+1 {
				fail("reviews[%d] has review_id %d, want %d", i, r.ReviewID, i+1)
			}
		}
	}
	var changed bool
	switch op.kind {
	case "pass", "fail":
		if rChanged {
			fail("reviews.json changed")
		}
		if fChanged != pChanged {
			fail("a torn transaction: `features %s` rewrites feature_list.json and progress.json together", op.kind)
		}
		changed = fChanged
		if changed {
			if len(cur.f.Features) != len(prev.f.Features) {
				fail("the feature count changed")
			}
			for i, it := range cur.f.Features {
				want := prev.f.Features[i]
				if it.ID == op.feature {
					want.Passes = op.kind == "pass"
				}
				if it != want {
					fail("feature %d is %+v, want %+v", i, it, want)
				}
			}
			if !slices.Equal(cur.p.Sessions, prev.p.Sessions) {
				fail("the sessions changed")
			}
		}
	case "session":
		if fChanged || rChanged {
			fail("`progress add-session` changed another file")
		}
		changed = pChanged
		if changed {
			n := len(prev.p.Sessions)
			if len(cur.p.Sessions) != n+1 || !slices.Equal(cur.p.Sessions[:n], prev.p.Sessions) {
				fail("the sessions are not the old %d plus one (now %d)", n, len(cur.p.Sessions))
			}
			if got := cur.p.Sessions[n]; got.SessionID != n+1 || got.Summary != op.summary {
				fail("the new session is %+v, want id %d %q", got, n+1, op.summary)
			}
		}
	case "review", "fix":
		changed = reviewsTransition(op, prev, cur, fChanged, rChanged, pChanged, fail)
	}
	if completed && !changed {
		fail("`baton %v` exited 0 but its change is not in the files", op.args)
	}
	return changed
}

// reviewsTransition checks a review's or a fix's transaction: reviews.json
// (and progress.json with it, never alone) gained the one record.
func reviewsTransition(op crashOp, prev, cur *crashState, fChanged, rChanged, pChanged bool, fail func(string, ...any)) bool {
	if fChanged {
		fail("`baton %v` changed feature_list.json", op.args)
	}
	if pChanged && !rChanged {
		fail("a torn transaction: progress.json changed without reviews.json")
	}
	if !rChanged {
		return false
	}
	if pChanged && !slices.Equal(cur.p.Sessions, prev.p.Sessions) {
		fail("the sessions changed")
	}
	nr, nf := len(prev.r.Reviews), len(prev.r.Fixes)
	if op.kind == "review" {
		if len(cur.r.Reviews) != nr+1 || cur.r.Reviews[nr].Summary != op.summary {
			fail("the reviews are not the old %d plus %q", nr, op.summary)
		}
		if len(cur.r.Fixes) != nf {
			fail("the fixes changed")
		}
		return true
	}
	if len(cur.r.Fixes) != nf+1 || !slices.EqualFunc(cur.r.Fixes[:nf], prev.r.Fixes, sameFix) || cur.r.Fixes[nf].ReviewID != op.review || cur.r.Fixes[nf].FixID != nf+1 {
		fail("the fixes are not the old %d plus one answering R%d", nf, op.review)
	}
	if len(cur.r.Reviews) != nr {
		fail("the reviews changed")
	}
	return true
}

// inflateSessions appends n sessions to progress.json, written directly in
// the format baton writes, so that every rewrite of the file is slow.
func inflateSessions(t *testing.T, dir string, n int) {
	t.Helper()
	path := filepath.Join(dir, progressName)
	var doc struct {
		Project  json.RawMessage   `json:"project"`
		Status   json.RawMessage   `json:"status"`
		Sessions []json.RawMessage `json:"sessions"`
	}
	if err := json.Unmarshal(readState(t, dir, progressName), &doc); err != nil {
		t.Fatal(err)
	}
	type commit struct {
		Hash    string `json:"hash"`
		Message string `json:"message"`
	}
	type session struct {
		SessionID       int                `json:"session_id"`
		AgentType       string             `json:"agent_type"`
		StartedAt       string             `json:"started_at"`
		CompletedAt     string             `json:"completed_at"`
		Summary         string             `json:"summary"`
		FeaturesTouched []string           `json:"features_touched"`
		Outcome         string             `json:"outcome"`
		Commits         []commit           `json:"commits"`
		CommitRange     map[string]*string `json:"commit_range"`
	}
	for i := len(doc.Sessions) + 1; len(doc.Sessions) < n; i++ {
		s := session{SessionID: i, AgentType: "IMPLEMENT", StartedAt: "2025-01-29T10:00:00Z", CompletedAt: "2025-01-29T11:00:00Z",
			Summary:         fmt.Sprintf("generated session %d: implemented a feature and its tests", i),
			FeaturesTouched: []string{featureID(1 + i%20)}, Outcome: "READY_FOR_REVIEW",
			Commits:     []commit{{Hash: fmt.Sprintf("%07x", i), Message: fmt.Sprintf("feat: work of session %d", i)}},
			CommitRange: map[string]*string{"from": nil, "to": nil}}
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		doc.Sessions = append(doc.Sessions, raw)
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	// written outside baton: a person accepts it, so that writers go on
	mustBaton(t, dir, "--as", "HUMAN", "--reason", "generated history", "reconcile")
}

// TestJournalRecovery builds by hand the states a killed writer leaves
// behind, in the exact on-disk format of package store, and checks what the
// next command does with them: a committed journal (the commit point was
// reached) is finished by any command, reader or writer, even when some of
// its renames were already done; staged temp files without a journal (the
// writer died before the commit point) are ignored and later removed, and
// the old state stands.
func TestJournalRecovery(t *testing.T) {
	// setup returns a project with F001 failing and the new versions of
	// feature_list.json and progress.json a `features pass F001` would write.
	setup := func(t *testing.T) (dir string, oldF, oldP, newF, newP []byte) {
		dir = newProject(t)
		appendFeatures(t, dir, 5, 20)
		oldF, oldP = readState(t, dir, featuresName), readState(t, dir, progressName)
		newF = bytes.Replace(oldF, []byte(`"passes": false`), []byte(`"passes": true`), 1)
		newP = bytes.Replace(oldP, []byte(`"features_passing": 0`), []byte(`"features_passing": 1`), 1)
		if bytes.Equal(newF, oldF) || bytes.Equal(newP, oldP) {
			t.Fatalf("unexpected file format:\n%s\n%s", oldF, oldP)
		}
		return
	}
	// stage writes a temp file beside dst as store.writeTemp names it.
	stage := func(t *testing.T, dir, name string, data []byte) journalEntry {
		f, err := os.CreateTemp(dir, "."+name+".*.baton-tx")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write(data); err != nil {
			t.Fatal(err)
		}
		return journalEntry{Tmp: f.Name(), Dst: filepath.Join(dir, name)}
	}
	writeJournal := func(t *testing.T, dir string, entries ...journalEntry) {
		data, err := json.Marshal(journalDoc{Files: entries})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".baton", "journal"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	passing := func(t *testing.T, dir string) int {
		var st statusRec
		r := baton(t, dir, "--json", "progress", "get-status")
		if r.code != 0 {
			t.Fatalf("%v", r)
		}
		mustUnmarshal(t, r, &st)
		return st.FeaturesPassing
	}
	requireFiles := func(t *testing.T, dir string, f, p []byte) {
		t.Helper()
		if got := readState(t, dir, featuresName); !bytes.Equal(got, f) {
			t.Fatalf("feature_list.json is\n%s\nwant\n%s", got, f)
		}
		if got := readState(t, dir, progressName); !bytes.Equal(got, p) {
			t.Fatalf("progress.json is\n%s\nwant\n%s", got, p)
		}
	}

	// handMade: the journal, made by hand, carries no audit entry (a real
	// journal carries its entry): a reader finishes it, and then refuses to
	// answer from files the log does not record, as a writer does, until a
	// person accepts them.
	handMade := func(t *testing.T, dir string, args ...string) {
		t.Helper()
		if r := baton(t, dir, args...); r.code != 6 || r.stdout != "" || !strings.Contains(r.stderr, "it was not read") {
			t.Fatalf("a reader after a journal without its audit entry: %v, want exit 6", r)
		}
		mustBaton(t, dir, "--as", "HUMAN", "--reason", "journal made by hand", "reconcile")
	}

	t.Run("reader finishes a committed journal", func(t *testing.T) {
		dir, _, _, newF, newP := setup(t)
		writeJournal(t, dir, stage(t, dir, featuresName, newF), stage(t, dir, progressName, newP))
		handMade(t, dir, "--json", "progress", "get-status")
		if got := passing(t, dir); got != 1 {
			t.Fatalf("progress get-status: features_passing %d, want 1 (the committed journal was not applied first)", got)
		}
		requireFiles(t, dir, newF, newP)
		if left := leftovers(t, dir); len(left) > 0 {
			t.Fatalf("left behind: %v", left)
		}
	})

	t.Run("reader finishes a half-applied journal", func(t *testing.T) {
		dir, _, _, newF, newP := setup(t)
		ef, ep := stage(t, dir, featuresName, newF), stage(t, dir, progressName, newP)
		writeJournal(t, dir, ef, ep)
		if err := os.Rename(ef.Tmp, ef.Dst); err != nil { // killed after the first rename
			t.Fatal(err)
		}
		handMade(t, dir, "--json", "features", "get", featureID(1))
		r := baton(t, dir, "--json", "features", "get", featureID(1))
		var f featureRec
		mustUnmarshal(t, r, &f)
		if r.code != 0 || !f.Passes {
			t.Fatalf("features get F001 after a half-applied journal: %v", r)
		}
		requireFiles(t, dir, newF, newP)
		if left := leftovers(t, dir); len(left) > 0 {
			t.Fatalf("left behind: %v", left)
		}
	})

	t.Run("writer finishes a committed journal before its own change", func(t *testing.T) {
		dir, _, _, newF, newP := setup(t)
		writeJournal(t, dir, stage(t, dir, featuresName, newF), stage(t, dir, progressName, newP))
		// the journal, made by hand, carries no audit entry: a writer finishes
		// it, and then finds the files changed outside baton until a person
		// accepts them (a real journal carries its entry)
		if r := baton(t, dir, "progress", "add-session", "-a", "IMPLEMENT", "-s", "refused", "-o", "SUCCESS"); r.code != 6 {
			t.Fatalf("a writer after a journal without its audit entry: %v, want exit 6", r)
		}
		requireFiles(t, dir, newF, newP) // finished before the drift check refused
		mustBaton(t, dir, "--as", "HUMAN", "--reason", "journal made by hand", "reconcile")
		mustBaton(t, dir, "progress", "add-session", "-a", "IMPLEMENT", "-s", "after recovery", "-o", "SUCCESS")
		if got := readState(t, dir, featuresName); !bytes.Equal(got, newF) {
			t.Fatalf("feature_list.json is\n%s\nwant\n%s", got, newF)
		}
		p := decode[progressFile](t, progressName, readState(t, dir, progressName))
		if p.Status.FeaturesPassing != 1 || len(p.Sessions) != 1 || p.Sessions[0].Summary != "after recovery" {
			t.Fatalf("progress.json after recovery and add-session: %+v", p)
		}
		if left := leftovers(t, dir); len(left) > 0 {
			t.Fatalf("left behind: %v", left)
		}
	})

	t.Run("staged files without a journal are discarded", func(t *testing.T) {
		dir, oldF, oldP, newF, newP := setup(t)
		stage(t, dir, featuresName, newF)
		stage(t, dir, progressName, newP)
		// killed while writing the journal: its temp file is half written
		data, _ := json.Marshal(journalDoc{Files: []journalEntry{{Tmp: "x", Dst: "y"}}})
		if err := os.WriteFile(filepath.Join(dir, ".baton", ".journal.12345.tmp"), data[:len(data)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		if got := passing(t, dir); got != 0 {
			t.Fatalf("progress get-status: features_passing %d, want 0 (uncommitted staged files were applied)", got)
		}
		requireFiles(t, dir, oldF, oldP)
		mustBaton(t, dir, "progress", "add-session", "-a", "IMPLEMENT", "-s", "after the crash", "-o", "SUCCESS")
		if got := readState(t, dir, featuresName); !bytes.Equal(got, oldF) {
			t.Fatalf("feature_list.json changed:\n%s", got)
		}
		p := decode[progressFile](t, progressName, readState(t, dir, progressName))
		if p.Status.FeaturesPassing != 0 || len(p.Sessions) != 1 {
			t.Fatalf("progress.json: %+v", p)
		}
		if left := leftovers(t, dir); len(left) > 0 {
			t.Fatalf("the next writer left stale staged files: %v", left)
		}
	})

	t.Run("an unreadable journal stops every command", func(t *testing.T) {
		dir, oldF, oldP, newF, _ := setup(t)
		e := stage(t, dir, featuresName, newF)
		if err := os.WriteFile(filepath.Join(dir, ".baton", "journal"), []byte(`{"files":[{"tmp":`), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"progress", "get-status"}, {"features", "pass", featureID(2)}} {
			if r := baton(t, dir, args...); r.code != 6 {
				t.Fatalf("with a corrupt journal: want exit 6, got %v", r)
			}
		}
		requireFiles(t, dir, oldF, oldP)
		if _, err := os.Stat(e.Tmp); err != nil {
			t.Fatalf("the staged file of the unreadable journal was removed: %v", err)
		}
	})
}

// journalDoc is .baton/journal as package store writes it.
type journalDoc struct {
	Files  []journalEntry `json:"files"`
	Append *appendDoc     `json:"append,omitempty"`
}

type journalEntry struct {
	Tmp string `json:"tmp"`
	Dst string `json:"dst"`
}

// appendDoc is the journal's record of an audit-log append.
type appendDoc struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
	Data   []byte `json:"data"`
}
