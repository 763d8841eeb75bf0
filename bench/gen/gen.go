// Package gen makes realistic baton state of a chosen size — progress.json,
// reviews.json and feature_list.json — for the Go benchmarks and for the
// command timings in bench/cmdbench.
//
// Every record is made through the domain packages (progress, reviews,
// features), so the files are byte-for-byte what baton itself would have
// written after that history, and they follow the format if it changes. The
// content is varied and deterministic for a seed: sessions of every agent
// type with commits and ranges, reviews with grouped issues of realistic
// length, fixes answering those issues, and a feature list part passing
// with some bugs and tech debt at the end.
package gen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
)

// Size is how much history a generated state holds.
type Size struct {
	Sessions int // progress.json sessions
	Reviews  int // reviews.json reviews
	Fixes    int // reviews.json fixes (at most one per review with issues)
	Features int // feature_list.json entries, bugs and tech debt included
}

// Sizes used by the benchmarks: Small is a young project, Large the one the
// performance targets are stated for.
var (
	Small = Size{Sessions: 10, Reviews: 3, Fixes: 1, Features: 10}
	Large = Size{Sessions: 10000, Reviews: 2000, Fixes: 1000, Features: 1000}
)

func (s Size) String() string {
	return fmt.Sprintf("%d sessions, %d reviews, %d fixes, %d features", s.Sessions, s.Reviews, s.Fixes, s.Features)
}

// State is a generated state: the three files' bytes and what a caller
// needs to drive commands against them.
type State struct {
	Size     Size
	Progress []byte // progress.json
	Reviews  []byte // reviews.json
	Features []byte // feature_list.json
	// Pending are the ids of the features not passing, in file order: ids
	// a benchmark can mark passing one after another.
	Pending []string
	// FeatureIDs are the ordinary features' ids (no bugs or tech debt).
	FeatureIDs []string
}

// Epoch is when every generated history starts.
var Epoch = time.Date(2025, 1, 29, 10, 0, 0, 0, time.UTC)

// Generate makes a state of size sz; the same seed gives the same bytes.
// The files are parsed back with the domain packages before returning.
func Generate(sz Size, seed uint64) (*State, error) {
	g := &generator{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), now: Epoch}
	st := &State{Size: sz}
	feat, err := g.features(sz.Features, st)
	if err != nil {
		return nil, fmt.Errorf("generating %s: %w", features.FileName, err)
	}
	rev, err := g.reviews(sz.Reviews, sz.Fixes, st)
	if err != nil {
		return nil, fmt.Errorf("generating %s: %w", reviews.FileName, err)
	}
	prog, err := g.progress(sz.Sessions, st, counters(feat, rev))
	if err != nil {
		return nil, fmt.Errorf("generating %s: %w", progress.FileName, err)
	}
	st.Features, st.Reviews, st.Progress = feat.Bytes(), rev.Bytes(), prog.Bytes()
	if err := st.check(); err != nil {
		return nil, err
	}
	return st, nil
}

// check parses the files back as baton will.
func (st *State) check() error {
	if _, err := progress.Parse(st.Progress); err != nil {
		return fmt.Errorf("generated %s does not parse: %w", progress.FileName, err)
	}
	if _, err := reviews.Parse(st.Reviews); err != nil {
		return fmt.Errorf("generated %s does not parse: %w", reviews.FileName, err)
	}
	if _, err := features.Parse(st.Features); err != nil {
		return fmt.Errorf("generated %s does not parse: %w", features.FileName, err)
	}
	return nil
}

// WriteDir writes the three files into dir (created if needed). baton makes
// its .baton directory itself on the first write.
func (st *State) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range map[string][]byte{progress.FileName: st.Progress, reviews.FileName: st.Reviews, features.FileName: st.Features} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Write generates a state of size sz and writes it into dir.
func Write(dir string, sz Size, seed uint64) (*State, error) {
	st, err := Generate(sz, seed)
	if err != nil {
		return nil, err
	}
	return st, st.WriteDir(dir)
}

// counters are the status numbers baton computes from the other files.
func counters(f *features.File, r *reviews.File) progress.Counters {
	s := f.Stats()
	c := progress.Counters{TotalFeatures: s.All.Total, FeaturesPassing: s.All.Passing}
	for id := range r.PassedFeatures() {
		if f.Has(id) {
			c.FeaturesCompleted++
		}
	}
	return c
}

type generator struct {
	r       *rand.Rand
	now     time.Time
	passing []string // passing ordinary features
}

func (g *generator) stamp() string { return jsondoc.Timestamp(g.now) }

// tick moves the clock on by lo to hi minutes.
func (g *generator) tick(lo, hi int) {
	g.now = g.now.Add(time.Duration(lo+g.r.IntN(hi-lo+1)) * time.Minute)
}

func (g *generator) pick(list []string) string { return list[g.r.IntN(len(list))] }

func (g *generator) hash() string { return fmt.Sprintf("%07x", g.r.Uint32()&0xfffffff) }

// sentence is made of words until it is at least lo and at most about hi
// characters long.
func (g *generator) sentence(lo, hi int) string {
	n := lo + g.r.IntN(hi-lo+1)
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g.pick(words))
	}
	s := b.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

func slug(s string) string {
	f := strings.Fields(strings.ToLower(s))
	if len(f) > 4 {
		f = f[:4]
	}
	return strings.Join(f, "-")
}

// ---- feature_list.json

// featureEntry is a feature as the predecessor's initializer writes it.
type featureEntry struct {
	ID           string   `json:"id"`
	Type         string   `json:"type,omitempty"`
	Category     string   `json:"category"`
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Steps        []string `json:"steps"`
	SourceReview string   `json:"source_review,omitempty"`
	Passes       bool     `json:"passes"`
}

// features makes n entries: 94% features, then 3% bugs and 3% tech debt;
// the first 65% of the features pass, and half of the bugs and debt.
func (g *generator) features(n int, st *State) (*features.File, error) {
	f := features.New()
	bugs, debt := n*3/100, n*3/100
	feats := n - bugs - debt
	var entries [][]byte
	var pass []string
	add := func(e featureEntry, passes bool) error {
		raw, err := jsondoc.Indent(e, jsondoc.RecordDepth)
		if err != nil {
			return err
		}
		entries = append(entries, raw)
		if passes {
			pass = append(pass, e.ID)
		} else {
			st.Pending = append(st.Pending, e.ID)
		}
		return nil
	}
	for i := 1; i <= feats; i++ {
		e := g.featureEntry(fmt.Sprintf("F%03d", i), "")
		st.FeatureIDs = append(st.FeatureIDs, e.ID)
		passes := i <= feats*65/100
		if passes {
			g.passing = append(g.passing, e.ID)
		}
		if err := add(e, passes); err != nil {
			return nil, err
		}
	}
	for i := 1; i <= bugs; i++ {
		if err := add(g.featureEntry(fmt.Sprintf("BUG-%03d", i), features.TypeBug), i%2 == 0); err != nil {
			return nil, err
		}
	}
	for i := 1; i <= debt; i++ {
		e := g.featureEntry(fmt.Sprintf("DEBT-%03d", i), features.TypeTechDebt)
		e.SourceReview = fmt.Sprintf("R%d-m1", 1+g.r.IntN(50))
		if err := add(e, i%2 == 0); err != nil {
			return nil, err
		}
	}
	if _, err := f.Append(entries, "app_spec.md"); err != nil {
		return nil, err
	}
	if len(pass) > 0 {
		if _, err := f.SetPasses(pass, true, g.stamp(), ""); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (g *generator) featureEntry(id, typ string) featureEntry {
	name := g.pick(nouns) + " " + g.pick(verbs)
	e := featureEntry{ID: id, Type: typ, Category: g.pick(categories), Name: strings.ToUpper(name[:1]) + name[1:],
		Description: g.sentence(60, 180)}
	for k := 2 + g.r.IntN(4); k > 0; k-- {
		e.Steps = append(e.Steps, g.sentence(20, 60))
	}
	return e
}

// ---- reviews.json

type reviewed struct {
	id     int
	issues []string
}

func (g *generator) reviews(n, fixes int, st *State) (*reviews.File, error) {
	f := reviews.New()
	var withIssues []reviewed
	for i := 0; i < n; i++ {
		g.tick(20, 120)
		in, err := g.newReview(st)
		if err != nil {
			return nil, err
		}
		rv, err := f.AddReview(in)
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, is := range reviews.ReadIssues(gjson.ParseBytes(rv.Issues)) {
			ids = append(ids, is.ID)
		}
		if len(ids) > 0 && rv.Verdict != "REJECT" { // a rejected branch is re-implemented, not fixed
			withIssues = append(withIssues, reviewed{rv.ReviewID, ids})
		}
	}
	// fixes answer distinct reviews with issues, spread over the history
	if fixes > len(withIssues) {
		fixes = len(withIssues)
	}
	for i := 0; i < fixes; i++ {
		g.tick(10, 60)
		if _, err := f.AddFix(g.newFix(withIssues[i*len(withIssues)/max(fixes, 1)])); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (g *generator) newReview(st *State) (reviews.NewReview, error) {
	in := reviews.NewReview{AgentType: "REVIEW", Summary: g.sentence(80, 300), Timestamp: g.stamp()}
	from, to := g.hash(), g.hash()
	in.CommitRange = &progress.Range{From: &from, To: &to, Description: "Reviewing commits from main to feature branch HEAD"}
	if g.r.IntN(10) == 0 || len(st.FeatureIDs) == 0 {
		in.AgentType = "ARCHITECTURE"
		in.CommitRange.Description = "Architecture review of main"
	}
	grouped, sev := g.issues()
	switch {
	case sev["critical"] > 0 && g.r.IntN(3) == 0:
		in.Verdict = "REJECT"
	case sev["critical"]+sev["major"] > 0:
		in.Verdict = "REQUEST_CHANGES"
	case sev["minor"]+sev["suggestions"] > 0 && g.r.IntN(2) == 0:
		in.Verdict = "PASS_WITH_COMMENTS"
	default:
		in.Verdict = "PASS"
	}
	if in.AgentType == "REVIEW" {
		id := g.pick(st.FeatureIDs)
		if in.Verdict == "PASS" && len(g.passing) > 0 {
			id = g.pick(g.passing)
		}
		branch := "feature/" + id + "-" + slug(g.sentence(10, 30))
		in.FeatureID, in.Branch = &id, &branch
	}
	var err error
	in.Issues, err = reviews.ParseIssues("--issues", grouped)
	return in, err
}

// issues returns a review's findings grouped by severity as a reviewer
// passes them to add-review: a quarter of reviews find nothing, most find
// one to three, some up to eight.
func (g *generator) issues() ([]byte, map[string]int) {
	n := 0
	switch p := g.r.IntN(100); {
	case p < 25:
	case p < 70:
		n = 1 + g.r.IntN(3)
	default:
		n = 4 + g.r.IntN(5)
	}
	type issue struct {
		Description string `json:"description"`
		Location    string `json:"location"`
		Suggestion  string `json:"suggestion"`
	}
	groups := map[string][]issue{"critical": {}, "major": {}, "minor": {}, "suggestions": {}}
	count := map[string]int{}
	for ; n > 0; n-- {
		var sev string
		switch p := g.r.IntN(100); {
		case p < 5:
			sev = "critical"
		case p < 35:
			sev = "major"
		case p < 75:
			sev = "minor"
		default:
			sev = "suggestions"
		}
		loc := fmt.Sprintf("%s/%s/%s.go:%d", g.pick(dirs), g.pick(nouns), g.pick(nouns), 1+g.r.IntN(400))
		groups[sev] = append(groups[sev], issue{g.sentence(40, 160), loc, g.sentence(30, 120)})
		count[sev]++
	}
	b, _ := json.Marshal(groups) // plain strings always encode
	return b, count
}

func (g *generator) newFix(rv reviewed) reviews.NewFix {
	in := reviews.NewFix{ReviewID: rv.id, Timestamp: g.stamp()}
	for i, id := range rv.issues {
		if i > 0 && g.r.IntN(5) == 0 {
			raw, _ := json.Marshal(map[string]string{"issue_id": id, "reason": g.sentence(30, 90)})
			in.IssuesDeferred = append(in.IssuesDeferred, raw)
			continue
		}
		in.IssuesFixed = append(in.IssuesFixed, reviews.FixedIssue{IssueID: id, FixDescription: g.sentence(30, 120), Commit: g.hash()})
	}
	for k := g.r.IntN(3); k > 0; k-- {
		in.TestsAdded = append(in.TestsAdded, "test_"+strings.ReplaceAll(slug(g.sentence(10, 30)), "-", "_"))
	}
	return in
}

// ---- progress.json

func (g *generator) progress(n int, st *State, c progress.Counters) (*progress.File, error) {
	head := g.hash()
	p := progress.New("bench-project", c.TotalFeatures, jsondoc.Timestamp(Epoch), &head)
	g.now = Epoch
	for i := 0; i < n; i++ {
		s := g.session(i, st, head)
		if s.CommitRange != nil && s.CommitRange.To != nil {
			head = *s.CommitRange.To
		}
		if _, err := p.AddSession(s); err != nil {
			return nil, err
		}
	}
	feature := "F001"
	if len(st.Pending) > 0 {
		feature = g.pick(st.Pending)
	}
	branch := "feature/" + feature + "-" + slug(g.sentence(10, 30))
	for k, v := range map[string]any{"updated_at": g.stamp(), "current_phase": "REVIEW", "current_feature": feature, "current_branch": branch, "head_commit": head} {
		if err := p.SetStatus(k, v); err != nil {
			return nil, err
		}
	}
	return p, p.SetCounters(c)
}

var agentTypes = []string{"IMPLEMENT", "IMPLEMENT", "IMPLEMENT", "IMPLEMENT", "IMPLEMENT", "IMPLEMENT", "IMPLEMENT",
	"REVIEW", "REVIEW", "REVIEW", "REVIEW", "REVIEW", "REVIEW", "REVIEW", "FIX", "FIX", "FIX", "FIX", "ARCHITECTURE", "BUGFIX"}

func (g *generator) session(i int, st *State, head string) progress.Session {
	start := g.now
	g.tick(15, 90)
	s := progress.Session{StartedAt: jsondoc.Timestamp(start), CompletedAt: g.stamp()}
	if i == 0 {
		s.AgentType, s.Outcome = "INITIALIZER", "SUCCESS"
		s.Summary = fmt.Sprintf("Created %s with %d features, initialized git", features.FileName, st.Size.Features)
		s.Commits = []progress.Commit{{Hash: g.hash(), Message: "Initial project setup"}}
	} else {
		s.AgentType = g.pick(agentTypes)
		s.Summary = g.sentence(40, 200)
		if len(st.FeatureIDs) > 0 && s.AgentType != "ARCHITECTURE" {
			for k := 1 + g.r.IntN(3); k > 0; k-- {
				s.FeaturesTouched = append(s.FeaturesTouched, g.pick(st.FeatureIDs))
			}
		}
		commits := 0
		switch s.AgentType {
		case "IMPLEMENT", "FIX", "BUGFIX":
			s.Outcome, commits = "READY_FOR_REVIEW", 1+g.r.IntN(4)
			if g.r.IntN(20) == 0 {
				s.Outcome = "ERROR"
			}
		case "REVIEW":
			s.Outcome, commits = g.pick([]string{"SUCCESS", "SUCCESS", "NEEDS_FIX", "NEEDS_FIX", "REJECTED"}), g.r.IntN(2)
		default:
			s.Outcome = "SUCCESS"
		}
		for ; commits > 0; commits-- {
			s.Commits = append(s.Commits, progress.Commit{Hash: g.hash(), Message: g.sentence(20, 70)})
		}
	}
	to := head
	if len(s.Commits) > 0 {
		to = s.Commits[len(s.Commits)-1].Hash
	}
	from := head
	s.CommitRange = &progress.Range{From: &from, To: &to}
	return s
}

// ---- vocabulary

var (
	words = strings.Fields(`the a an to of for with in on and when from into after before every each
		handler endpoint request response session token cache index query schema migration table column
		retry timeout error validation input output user account login logout password email upload
		download file path config setting flag option service client server worker queue job event
		log metric trace test fixture mock assertion coverage branch commit merge review fix refactor
		returns handles checks validates stores loads parses renders sends receives updates deletes
		creates missing invalid empty large concurrent nil duplicate stale slow unbounded unchecked
		properly correctly safely quickly now instead again still only also`)
	nouns      = strings.Fields(`auth user session profile search cart order payment invoice report export import notification settings dashboard upload health admin audit billing webhook`)
	verbs      = strings.Fields(`endpoint page form handler validation flow view api screen job`)
	dirs       = strings.Fields(`backend/app frontend/src internal/api pkg/service cmd/server internal/store`)
	categories = strings.Fields(`functional api ui security performance data infrastructure`)
)
