package e2e

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// job is one baton process of a round and what the test expects of it.
type job struct {
	kind string // session, review, fix, pass, fail, read, limit-fix
	args []string
	// what the process writes, for matching it in the files afterwards
	summary string
	feature string
}

// TestConcurrentWriters starts many real baton processes at once, round
// after round, all mutating the same state: sessions, reviews, fixes,
// features passing and failing, with readers in between. Every write must
// succeed, be present afterwards exactly once, under a unique gap-free id
// (the id each process printed holds its own record), the counters
// progress.json computes must agree with the other files, the audit log must
// hold one event per write, and `baton verify` must pass. A last round races
// eight fixes for one feature: exactly max_fix_cycles (3) may get in.
// Without the state lock (or with a read outside it) writes get lost or ids
// collide, and this test fails.
func TestConcurrentWriters(t *testing.T) {
	const (
		nFeatures = 20
		rounds    = 6
		fixSpread = 16 // fixes of the mixed rounds go to F001..F016, at most 2 each
		limitFeat = 20 // F020 gets the fix-cycle limit race
	)
	dir := newProject(t)
	appendFeatures(t, dir, nFeatures, 200)
	// R1: the review every fix answers.
	mustBaton(t, dir, "reviews", "add-review", "-a", "REVIEW", "--feature-id", featureID(1), "-b", "feature/f001",
		"-v", "REQUEST_CHANGES", "-s", "initial review",
		"--issues", `{"major":[{"description":"a major issue"}],"minor":[{"description":"a minor issue"}]}`)
	// F017 and F018 pass now (after a passing review) and are failed
	// concurrently later.
	mustBaton(t, dir, "reviews", "add-review", "-a", "REVIEW", "--feature-id", featureID(17)+","+featureID(18), "-b", "feature/f017",
		"-v", "PASS", "-s", "setup review")
	mustBaton(t, dir, "features", "pass", featureID(17))
	mustBaton(t, dir, "features", "pass", featureID(18))
	events0, _ := auditLog(t, dir)

	var (
		wantSessions []string // summaries, in no particular order
		wantReviews  = []string{"initial review", "setup review"}
		wantPassing  = map[string]bool{}
		wantDone     = map[string]bool{featureID(17): true, featureID(18): true} // features with a PASS review
		fixes        = 0
		procs        = 0
		writes       = 0 // mutating commands that succeeded or were refused: one audit event each
	)
	for r := 0; r < rounds; r++ {
		var jobs []job
		for s := 0; s < 8; s++ {
			sum := fmt.Sprintf("conc r%d s%d", r, s)
			jobs = append(jobs, job{kind: "session", summary: sum, args: []string{"--json", "progress", "add-session",
				"-a", "IMPLEMENT", "-s", sum, "-o", "READY_FOR_REVIEW", "--features", featureID(1 + (r*8+s)%nFeatures)}})
			wantSessions = append(wantSessions, sum)
		}
		for v := 0; v < 3; v++ {
			sum := fmt.Sprintf("conc review r%d v%d", r, v)
			j := job{kind: "review", summary: sum}
			if v == 0 { // the passing review of the two features this round passes
				j.feature = featureID(2*r+1) + "," + featureID(2*r+2)
				j.args = []string{"--json", "reviews", "add-review", "-a", "REVIEW", "--feature-id", j.feature,
					"-b", fmt.Sprintf("feature/batch%d", r), "-v", "PASS", "-s", sum}
				wantDone[featureID(2*r+1)], wantDone[featureID(2*r+2)] = true, true
			} else {
				j.feature = featureID(7 + r)
				j.args = []string{"--json", "reviews", "add-review", "-a", "REVIEW", "--feature-id", j.feature,
					"-b", fmt.Sprintf("feature/changes-r%d-v%d", r, v), "-v", "REQUEST_CHANGES", "-s", sum,
					"--issues", `{"critical":[{"description":"c"}],"major":[{"description":"m1"},{"description":"m2"}],"minor":[],"suggestions":[{"description":"s"}]}`}
			}
			jobs = append(jobs, j)
			wantReviews = append(wantReviews, sum)
		}
		for x := 0; x < 3; x++ {
			f := featureID(1 + fixes%fixSpread)
			fixes++
			jobs = append(jobs, job{kind: "fix", feature: f, args: []string{"--json", "reviews", "add-fix", "-r", "1",
				"--feature-id", f, "--issues-fixed", `["R1-M1"]`, "--tests-added", "test_" + f}})
		}
		for _, n := range []int{2*r + 1, 2*r + 2, 2*r + 1} { // the last one races with the first
			jobs = append(jobs, job{kind: "pass", feature: featureID(n), args: []string{"features", "pass", featureID(n)}})
			wantPassing[featureID(n)] = true
		}
		if r < 2 {
			f := featureID(17 + r)
			jobs = append(jobs, job{kind: "fail", feature: f, args: []string{"features", "fail", f, "--reason", "regression"}})
		}
		jobs = append(jobs,
			job{kind: "read", args: []string{"--json", "progress", "get-status"}},
			job{kind: "read", args: []string{"--json", "features", "list"}},
			job{kind: "read", args: []string{"--json", "reviews", "get-last"}},
		)
		procs += len(jobs)
		results := runAll(t, dir, jobs)
		for i, res := range results {
			j := jobs[i]
			if j.kind != "read" {
				writes++
			}
			if res.code != 0 {
				t.Fatalf("round %d: %v", r, res)
			}
			switch j.kind {
			case "session":
				var s sessionRec
				mustUnmarshal(t, res, &s)
				if s.Summary != j.summary {
					t.Fatalf("round %d: add-session printed summary %q, want %q", r, s.Summary, j.summary)
				}
			case "read":
				if !json.Valid([]byte(res.stdout)) {
					t.Fatalf("round %d: a reader printed invalid JSON: %v", r, res)
				}
			}
		}
		checkConcurrentState(t, fmt.Sprintf("after round %d", r), dir, results, jobs)
	}

	// The fix-cycle limit under contention: 8 fixes for one feature race with
	// 8 sessions; exactly max_fix_cycles (3) fixes get in, the rest are refused
	// with exit 3. A check made outside the lock would let more through.
	var jobs []job
	for x := 0; x < 8; x++ {
		f := featureID(limitFeat)
		jobs = append(jobs, job{kind: "limit-fix", feature: f, args: []string{"--json", "reviews", "add-fix", "-r", "1", "--feature-id", f}})
		sum := fmt.Sprintf("conc limit s%d", x)
		jobs = append(jobs, job{kind: "session", summary: sum, args: []string{"--json", "progress", "add-session", "-a", "FIX", "-s", sum, "-o", "READY_FOR_REVIEW"}})
		wantSessions = append(wantSessions, sum)
	}
	procs += len(jobs)
	writes += len(jobs)
	results := runAll(t, dir, jobs)
	accepted := 0
	for i, res := range results {
		switch {
		case res.code == 0:
			if jobs[i].kind == "limit-fix" {
				accepted++
			}
		case jobs[i].kind == "limit-fix" && res.code == 3 && strings.Contains(res.stderr, "fix-cycle limit reached"):
		default:
			t.Fatalf("limit round: %v", res)
		}
	}
	if accepted != 3 {
		t.Fatalf("limit round: %d concurrent fixes for %s were accepted, want exactly 3 (max_fix_cycles)", accepted, featureID(limitFeat))
	}
	checkConcurrentState(t, "after the limit round", dir, results, jobs)

	// The final state holds every write exactly once.
	f := decode[featureFile](t, featuresName, readState(t, dir, featuresName))
	rv := decode[reviewsFile](t, reviewsName, readState(t, dir, reviewsName))
	p := decode[progressFile](t, progressName, readState(t, dir, progressName))
	if got := summaries(p.Sessions); !equalSets(got, wantSessions) {
		t.Fatalf("sessions: got %d %v\nwant %d %v", len(got), got, len(wantSessions), wantSessions)
	}
	var gotReviews []string
	for _, r := range rv.Reviews {
		gotReviews = append(gotReviews, r.Summary)
	}
	if !equalSets(gotReviews, wantReviews) {
		t.Fatalf("reviews: got %v\nwant %v", gotReviews, wantReviews)
	}
	if got, want := len(rv.Fixes), fixes+3; got != want {
		t.Fatalf("fixes: got %d, want %d", got, want)
	}
	perFeature := map[string]int{}
	for _, fx := range rv.Fixes {
		perFeature[deref(fx.FeatureID)]++
	}
	for id, n := range perFeature {
		if n > 3 {
			t.Fatalf("%s has %d fixes, more than max_fix_cycles 3", id, n)
		}
	}
	if got := f.passing(); !equalBoolSets(got, wantPassing) {
		t.Fatalf("passing features: got %v, want %v", keys(got), keys(wantPassing))
	}
	if got := completedFeatures(rv, f); !equalBoolSets(got, wantDone) {
		t.Fatalf("features with a PASS review: got %v, want %v", keys(got), keys(wantDone))
	}
	if p.Status.FeaturesPassing != len(wantPassing) || p.Status.FeaturesCompleted != len(wantDone) || p.Project.TotalFeatures != nFeatures {
		t.Fatalf("counters: features_passing %d (want %d), features_completed %d (want %d), total_features %d (want %d)",
			p.Status.FeaturesPassing, len(wantPassing), p.Status.FeaturesCompleted, len(wantDone), p.Project.TotalFeatures, nFeatures)
	}
	if left := leftovers(t, dir); len(left) > 0 {
		t.Fatalf("transaction files left behind: %v", left)
	}
	// One audit event per write, refusals included, chained without a gap.
	if n, _ := auditLog(t, dir); n != events0+writes {
		t.Fatalf("the audit log has %d events, want %d (%d before the rounds + %d writes)", n, events0+writes, events0, writes)
	}
	mustBaton(t, dir, "verify")
	t.Logf("%d processes in %d concurrent rounds; %d sessions, %d reviews, %d fixes, %d passing",
		procs, rounds+1, len(p.Sessions), len(rv.Reviews), len(rv.Fixes), p.Status.FeaturesPassing)
}

// runAll starts every job before waiting for any, so that they contend.
func runAll(t *testing.T, dir string, jobs []job) []result {
	t.Helper()
	ps := make([]*proc, len(jobs))
	for i, j := range jobs {
		ps[i] = startBaton(t, dir, j.args...)
	}
	out := make([]result, len(jobs))
	for i, p := range ps {
		out[i] = p.wait(t)
	}
	return out
}

// checkConcurrentState checks the files after a round: valid JSON, ids
// unique and gap-free, the ids the processes printed hold their own records,
// counters agreeing with the files, no transaction left over.
func checkConcurrentState(t *testing.T, when, dir string, results []result, jobs []job) {
	t.Helper()
	fb, rb, pb := readState(t, dir, featuresName), readState(t, dir, reviewsName), readState(t, dir, progressName)
	f := decode[featureFile](t, featuresName, fb)
	rv := decode[reviewsFile](t, reviewsName, rb)
	p := decode[progressFile](t, progressName, pb)
	checkSessionIDs(t, when, p.Sessions)
	for i, r := range rv.Reviews {
		if r.ReviewID != i+1 {
			t.Fatalf("%s: reviews[%d] has review_id %d, want %d", when, i, r.ReviewID, i+1)
		}
		prefix := fmt.Sprintf("R%d-", r.ReviewID)
		for _, group := range [][]issueRec{r.Issues.Critical, r.Issues.Major, r.Issues.Minor, r.Issues.Suggestions} {
			for _, is := range group {
				if !strings.HasPrefix(is.ID, prefix) {
					t.Fatalf("%s: review R%d holds issue %s (issue ids are assigned under the lock from the review id)", when, r.ReviewID, is.ID)
				}
			}
		}
	}
	for i, x := range rv.Fixes {
		if x.FixID != i+1 {
			t.Fatalf("%s: fixes[%d] has fix_id %d, want %d", when, i, x.FixID, i+1)
		}
	}
	for i, res := range results {
		if res.code != 0 {
			continue
		}
		j := jobs[i]
		switch j.kind {
		case "session":
			var s sessionRec
			mustUnmarshal(t, res, &s)
			if s.SessionID < 1 || s.SessionID > len(p.Sessions) || p.Sessions[s.SessionID-1].Summary != j.summary {
				t.Fatalf("%s: add-session %q was told id %d, but the file does not hold it there", when, j.summary, s.SessionID)
			}
		case "review":
			var r reviewRec
			mustUnmarshal(t, res, &r)
			if r.ReviewID < 1 || r.ReviewID > len(rv.Reviews) || rv.Reviews[r.ReviewID-1].Summary != j.summary {
				t.Fatalf("%s: add-review %q was told id %d, but the file does not hold it there", when, j.summary, r.ReviewID)
			}
		case "fix", "limit-fix":
			var x fixRec
			mustUnmarshal(t, res, &x)
			if x.FixID < 1 || x.FixID > len(rv.Fixes) || deref(rv.Fixes[x.FixID-1].FeatureID) != j.feature {
				t.Fatalf("%s: add-fix for %s was told id %d, but the file does not hold it there", when, j.feature, x.FixID)
			}
		case "pass", "fail":
			want := j.kind == "pass"
			for _, it := range f.Features {
				if it.ID == j.feature && it.Passes != want {
					t.Fatalf("%s: features %s %s exited 0 but %s has passes=%v", when, j.kind, j.feature, j.feature, it.Passes)
				}
			}
		}
	}
	checkCounters(t, when, p, f, rv)
	if left := leftovers(t, dir); len(left) > 0 {
		t.Fatalf("%s: transaction files left behind: %v", when, left)
	}
	_, last := auditLog(t, dir)
	checkAudit(t, when, last, map[string][]byte{featuresName: fb, reviewsName: rb, progressName: pb})
}

func mustUnmarshal(t *testing.T, r result, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("%v\ndecoding stdout: %v", r, err)
	}
}

func summaries(ss []sessionRec) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Summary
	}
	return out
}

// equalSets compares two lists as multisets.
func equalSets(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(a)
	sort.Strings(b)
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalBoolSets(a, b map[string]bool) bool { return equalSets(keys(a), keys(b)) }

func keys(m map[string]bool) []string {
	var out []string
	for k, v := range m {
		if v {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestVerifyDuringWrites runs `baton verify` while writers commit. verify
// compares the files with the hashes the last audit event recorded, so it
// must see the files and the log of one and the same transaction; a
// snapshot taken without the state lock can read the log before a commit
// and the files after it, and then reports files "changed outside baton"
// (exit 6) that nobody touched. verify, status and next therefore take
// their snapshot under the lock.
func TestVerifyDuringWrites(t *testing.T) {
	const writers, toggles, verifiers, verifies = 2, 40, 3, 50
	dir := newProject(t)
	appendFeatures(t, dir, writers+1, 20) // one more, never passed: the project is not DONE
	var ids []string
	for w := 1; w <= writers; w++ {
		ids = append(ids, featureID(w))
	}
	mustBaton(t, dir, "reviews", "add-review", "-a", "REVIEW", "--feature-id", strings.Join(ids, ","), "-b", "feature/x", "-v", "PASS", "-s", "pass")
	errc := make(chan error, writers+verifiers)
	for w := 1; w <= writers; w++ {
		go func(id string) { // each goroutine drives a sequence of real processes
			for i := 0; i < toggles; i++ {
				for _, args := range [][]string{{"features", "pass", id}, {"features", "fail", id, "--reason", "toggle"}} {
					if out, err := batonCmd(dir, args...).CombinedOutput(); err != nil {
						errc <- fmt.Errorf("baton %v: %v\n%s", args, err, out)
						return
					}
				}
			}
			errc <- nil
		}(featureID(w))
	}
	for v := 0; v < verifiers; v++ {
		go func() {
			for i := 0; i < verifies; i++ {
				if out, err := batonCmd(dir, "verify").CombinedOutput(); err != nil {
					errc <- fmt.Errorf("baton verify during writes (no file was touched outside baton): %v\n%s", err, out)
					return
				}
			}
			errc <- nil
		}()
	}
	for i := 0; i < writers+verifiers; i++ {
		if err := <-errc; err != nil {
			t.Error(err)
		}
	}
}

// TestWriterThroughput runs eight writers, each a sequence of baton
// processes adding sessions, against one state, and reports the
// transactions a second they got through together. Every write must arrive
// exactly once, under its own id. Nothing about time is asserted (the
// machine may be busy); make bench measures throughput for 1 to 16 writers.
func TestWriterThroughput(t *testing.T) {
	const writers, each = 8, 6
	dir := newProject(t)
	errc := make(chan error, writers)
	start := time.Now()
	for w := 0; w < writers; w++ {
		go func(w int) {
			for i := 0; i < each; i++ {
				sum := fmt.Sprintf("throughput w%d i%d", w, i)
				out, err := batonCmd(dir, "progress", "add-session", "-a", "IMPLEMENT", "-s", sum, "-o", "READY_FOR_REVIEW").CombinedOutput()
				if err != nil {
					errc <- fmt.Errorf("writer %d, write %d: %v\n%s", w, i, err, out)
					return
				}
			}
			errc <- nil
		}(w)
	}
	for w := 0; w < writers; w++ {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	p := decode[progressFile](t, progressName, readState(t, dir, progressName))
	seen, ids := map[string]int{}, map[int]bool{}
	for _, s := range p.Sessions {
		seen[s.Summary]++
		if ids[s.SessionID] {
			t.Errorf("session id %d used twice", s.SessionID)
		}
		ids[s.SessionID] = true
	}
	lost := 0
	for w := 0; w < writers; w++ {
		for i := 0; i < each; i++ {
			switch n := seen[fmt.Sprintf("throughput w%d i%d", w, i)]; {
			case n == 0:
				lost++
			case n > 1:
				t.Errorf("writer %d's write %d recorded %d times", w, i, n)
			}
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d writes lost", lost, writers*each)
	}
	t.Logf("throughput: %d writers, %d transactions in %s: %.0f transactions/s, 0 lost",
		writers, writers*each, elapsed.Round(time.Millisecond), float64(writers*each)/elapsed.Seconds())
}
