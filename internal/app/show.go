package app

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/reviews"
)

// Story is one feature's (bug's, debt item's) whole life, from the files
// and the audit log.
type Story struct {
	ID              string           `json:"id"`
	Name            string           `json:"name"`
	Kind            string           `json:"kind"`
	Passes          bool             `json:"passes"`
	Record          any              `json:"record"`
	Origin          StoryOrigin      `json:"origin"`
	Sessions        []map[string]any `json:"sessions"`
	Reviews         []map[string]any `json:"reviews"`
	Fixes           []map[string]any `json:"fixes"`
	Issues          []StoryIssue     `json:"issues"`
	Commits         []storyCommit    `json:"commits"`
	Merges          []StoryMerge     `json:"merges"`
	Gates           []StoryGate      `json:"gates"`
	Refused         []LogLine        `json:"refused"`
	Events          []LogLine        `json:"events"`
	StartedAt       *string          `json:"started_at"`
	FinishedAt      *string          `json:"finished_at"`
	DurationSeconds *int64           `json:"duration_seconds"`
	Warnings        []string         `json:"warnings"`
}

// StoryOrigin is where an item came from: a spec, or a review whose
// left-over issues became debt, and the event that added it.
type StoryOrigin struct {
	Source       string   `json:"source"`
	SourceReview *int     `json:"source_review"`
	Review       any      `json:"review"`
	Event        *LogLine `json:"event"`
}

// StoryIssue is one issue of a review in an item's story, with what answered it.
type StoryIssue struct {
	ID          string   `json:"id"`
	ReviewID    int      `json:"review_id"`
	Severity    string   `json:"severity"`
	Description string   `json:"description"`
	Location    string   `json:"location,omitempty"`
	FixedBy     []string `json:"fixed_by"`
	Commits     []string `json:"commits"`
	DeferredBy  []string `json:"deferred_by"`
	Status      string   `json:"status"` // fixed, deferred, open
}

type storyCommit struct {
	Hash      string `json:"hash"`
	Message   string `json:"message"`
	SessionID int    `json:"session_id"`
	Role      string `json:"role"`
}

// StoryMerge is a merge in an item's story.
type StoryMerge struct {
	ReviewID    int    `json:"review_id"`
	Verdict     string `json:"verdict"`
	Branch      string `json:"branch"`
	MergeCommit string `json:"merge_commit"`
	MergedOnto  string `json:"merged_onto,omitempty"`
	MergedAt    string `json:"merged_at"`
}

// StoryGate is a run of the landing queue's gate on an item's merged
// tree, as the audit log records it.
type StoryGate struct {
	Seq int `json:"seq"`
	GateRun
}

// addGates lists the gate runs the item's events record, each once (a
// batch's failing run is logged when it ends and again with the item it
// sends back).
func (st *Story) addGates() {
	seen := map[string]bool{}
	for _, l := range st.Events {
		var rec struct {
			Gate *GateRun `json:"gate"`
		}
		if json.Unmarshal(l.Record, &rec) != nil || rec.Gate == nil {
			continue
		}
		key := fmt.Sprintf("%s %s %s %d", rec.Gate.Tree, rec.Gate.Onto, rec.Gate.Digest, rec.Gate.DurationMS)
		if !seen[key] {
			seen[key] = true
			st.Gates = append(st.Gates, StoryGate{Seq: l.Seq, GateRun: *rec.Gate})
		}
	}
}

// story gathers id's story.
func (sn *snapshot) story(id string, lines []LogLine) (Story, error) {
	if sn.feat == nil {
		return Story{}, firstProblemOr(sn, missing(sn.s, features.FileName, featuresHint))
	}
	it, err := sn.feat.Get(id)
	if err != nil {
		return Story{}, errs.New(errs.NotFound, "%s is not in %s (see 'baton features list')", id, features.FileName)
	}
	raw, _ := sn.feat.Raw(id)
	st := Story{ID: it.ID, Name: it.Name, Kind: it.Kind(), Passes: it.Passes, Record: gjson.ParseBytes(raw).Value(),
		Sessions: []map[string]any{}, Reviews: []map[string]any{}, Fixes: []map[string]any{}, Issues: []StoryIssue{},
		Commits: []storyCommit{}, Merges: []StoryMerge{}, Gates: []StoryGate{}, Refused: []LogLine{}, Events: []LogLine{}, Warnings: []string{}}
	sessions := sessionsOf(id, lines, sn.prog)
	for _, l := range lines {
		if concerns(l, id, sessions) {
			st.Events = append(st.Events, l)
			if l.Refused != "" {
				st.Refused = append(st.Refused, l)
			}
		}
	}
	st.addSessions(sn, sessions)
	st.addReviews(sn, id)
	st.addGates()
	st.Origin = sn.origin(gjson.ParseBytes(raw), id, lines)
	if e := st.Origin.Event; e != nil && (len(st.Events) == 0 || st.Events[0].Seq > e.Seq) {
		st.Events = append([]LogLine{*e}, st.Events...)
	}
	st.times()
	return st, nil
}

func (st *Story) addSessions(sn *snapshot, ids map[int]bool) {
	if sn.prog != nil {
		sn.prog.Sessions(func(raw []byte) {
			r := gjson.ParseBytes(raw)
			id := int(r.Get("session_id").Int())
			if !ids[id] {
				return
			}
			m, _ := r.Value().(map[string]any)
			m["open"] = false
			m["duration_seconds"] = secondsBetween(r.Get("started_at").String(), r.Get("completed_at").String())
			st.Sessions = append(st.Sessions, m)
			r.Get("commits").ForEach(func(_, c gjson.Result) bool {
				st.addCommit(storyCommit{c.Get("hash").String(), c.Get("message").String(), id, r.Get("agent_type").String()})
				return true
			})
		})
	}
	for _, s := range sn.open.Open {
		if ids[s.SessionID] {
			st.Sessions = append(st.Sessions, map[string]any{"session_id": s.SessionID, "agent_type": s.AgentType, "started_at": s.StartedAt,
				"features_touched": NonNil(s.Features), "branch": s.Branch, "open": true, "duration_seconds": nil})
		}
	}
}

// addCommit adds a commit once, with the session that first recorded it.
func (st *Story) addCommit(c storyCommit) {
	for _, x := range st.Commits {
		if x.Hash == c.Hash {
			return
		}
	}
	st.Commits = append(st.Commits, c)
}

// addReviews adds the reviews naming the feature, their issues and the
// fixes answering them, and the merges.
func (st *Story) addReviews(sn *snapshot, id string) {
	if sn.rev == nil {
		return
	}
	mine := map[int]bool{}
	for _, r := range sn.rev.Reviews() {
		if !contains(features.SplitIDs(r.Get("feature_id").String()), id) {
			continue
		}
		rid := int(r.Get("review_id").Int())
		mine[rid] = true
		m, _ := r.Value().(map[string]any)
		st.Reviews = append(st.Reviews, m)
		for _, is := range reviews.ReadIssues(r.Get("issues")) {
			st.Issues = append(st.Issues, StoryIssue{ID: is.ID, ReviewID: rid, Severity: is.Severity, Description: is.Description, Location: is.Location,
				FixedBy: []string{}, Commits: []string{}, DeferredBy: []string{}, Status: "open"})
		}
		if mc := r.Get("merge_commit").String(); mc != "" {
			st.Merges = append(st.Merges, StoryMerge{rid, reviews.VerdictOf(r), r.Get("branch").String(), mc, r.Get("merged_onto").String(), r.Get("merged_at").String()})
		}
	}
	for _, x := range sn.rev.Fixes() {
		if !mine[int(x.Get("review_id").Int())] && !contains(features.SplitIDs(x.Get("feature_id").String()), id) {
			continue
		}
		m, _ := x.Value().(map[string]any)
		st.Fixes = append(st.Fixes, m)
		st.answer(x)
	}
}

// answer marks the issues a fix fixed or deferred.
func (st *Story) answer(x gjson.Result) {
	label := reviews.FixLabel(int(x.Get("fix_id").Int()))
	find := func(v gjson.Result) *StoryIssue {
		iid := v.Get("issue_id").String()
		if v.Type == gjson.String {
			iid = v.Str
		}
		for i := range st.Issues {
			if st.Issues[i].ID == iid {
				return &st.Issues[i]
			}
		}
		return nil
	}
	x.Get("issues_fixed").ForEach(func(_, v gjson.Result) bool {
		if is := find(v); is != nil {
			is.FixedBy, is.Status = append(is.FixedBy, label), "fixed"
			if c := v.Get("commit").String(); c != "" {
				is.Commits = append(is.Commits, c)
			}
		}
		return true
	})
	x.Get("issues_deferred").ForEach(func(_, v gjson.Result) bool {
		if is := find(v); is != nil {
			is.DeferredBy = append(is.DeferredBy, label)
			if is.Status == "open" {
				is.Status = "deferred"
			}
		}
		return true
	})
}

var reviewNumber = regexp.MustCompile(`^R?(\d+)`)

// origin says where an item came from: its spec or review, and the event
// that added it.
func (sn *snapshot) origin(rec gjson.Result, id string, lines []LogLine) StoryOrigin {
	o := StoryOrigin{Source: rec.Get("source_appspec").String()}
	if sr := rec.Get("source_review"); sr.Exists() {
		if m := reviewNumber.FindStringSubmatch(strings.TrimSpace(sr.String())); m != nil {
			n, _ := strconv.Atoi(m[1])
			o.SourceReview = &n
			if sn.rev != nil {
				if r, err := sn.rev.Review(n); err == nil {
					o.Review = map[string]any{"review_id": n, "verdict": reviews.VerdictOf(r), "feature_id": r.Get("feature_id").Value(),
						"summary": r.Get("summary").String(), "timestamp": r.Get("timestamp").String(), "decision": r.Get("decision").Value()}
				}
			}
		}
	}
	word := regexp.MustCompile(`\b` + regexp.QuoteMeta(id) + `\b`)
	for i, l := range lines {
		if contains(l.Changed, features.FileName) && (word.MatchString(l.Summary) || (o.SourceReview != nil && reviewOf(l) == *o.SourceReview)) {
			o.Event = &lines[i]
			break
		}
	}
	return o
}

// times sets when the story began and ended (a passing item's last event)
// and how long it took.
func (st *Story) times() {
	if len(st.Events) == 0 {
		return
	}
	first := st.Events[0].Timestamp
	st.StartedAt = &first
	if !st.Passes {
		return
	}
	last := st.Events[len(st.Events)-1].Timestamp
	if len(st.Merges) > 0 && st.Merges[len(st.Merges)-1].MergedAt != "" {
		last = st.Merges[len(st.Merges)-1].MergedAt
	}
	st.FinishedAt = &last
	st.DurationSeconds = secondsBetween(first, last)
}

func secondsBetween(from, to string) *int64 {
	a, err1 := jsondoc.ParseTime(from)
	b, err2 := jsondoc.ParseTime(to)
	if err1 != nil || err2 != nil {
		return nil
	}
	d := int64(b.Sub(a) / time.Second)
	return &d
}

// Str is v as text ("" for nil).
func Str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// IssueStatus says how an issue stands: open, fixed (by which fixes, in
// which commits) or deferred.
func IssueStatus(is StoryIssue) string {
	switch is.Status {
	case "fixed":
		s := "fixed by " + strings.Join(is.FixedBy, ", ")
		if len(is.Commits) > 0 {
			short := make([]string, len(is.Commits))
			for i, c := range is.Commits {
				short[i] = gitops.Short(c)
			}
			s += " in " + strings.Join(short, ", ")
		}
		return s
	case "deferred":
		return "deferred by " + strings.Join(is.DeferredBy, ", ")
	}
	return "open"
}
