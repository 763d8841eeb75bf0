package cmd

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/errs"
	"github.com/baton-cli/baton/features"
	"github.com/baton-cli/baton/gitops"
	"github.com/baton-cli/baton/jsondoc"
	"github.com/baton-cli/baton/reviews"
)

// story is one feature's (bug's, debt item's) whole life, from the files
// and the audit log.
type story struct {
	ID              string           `json:"id"`
	Name            string           `json:"name"`
	Kind            string           `json:"kind"`
	Passes          bool             `json:"passes"`
	Record          any              `json:"record"`
	Origin          storyOrigin      `json:"origin"`
	Sessions        []map[string]any `json:"sessions"`
	Reviews         []map[string]any `json:"reviews"`
	Fixes           []map[string]any `json:"fixes"`
	Issues          []storyIssue     `json:"issues"`
	Commits         []storyCommit    `json:"commits"`
	Merges          []storyMerge     `json:"merges"`
	Refused         []logLine        `json:"refused"`
	Events          []logLine        `json:"events"`
	StartedAt       *string          `json:"started_at"`
	FinishedAt      *string          `json:"finished_at"`
	DurationSeconds *int64           `json:"duration_seconds"`
	Warnings        []string         `json:"warnings"`
}

// storyOrigin is where an item came from: a spec, or a review whose
// left-over issues became debt, and the event that added it.
type storyOrigin struct {
	Source       string   `json:"source"`
	SourceReview *int     `json:"source_review"`
	Review       any      `json:"review"`
	Event        *logLine `json:"event"`
}

type storyIssue struct {
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

type storyMerge struct {
	ReviewID    int    `json:"review_id"`
	Verdict     string `json:"verdict"`
	Branch      string `json:"branch"`
	MergeCommit string `json:"merge_commit"`
	MergedOnto  string `json:"merged_onto,omitempty"`
	MergedAt    string `json:"merged_at"`
}

func (a *App) newShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "Tell one feature's, bug's or debt item's whole story: sessions, reviews, issues and fixes, commits, merge, refusals",
		Long: `Tell the whole story of a feature, bug or debt item: every session of every role that worked
on it, reviewed it or fixed it (with summaries, outcomes, commits, ranges and durations), its
reviews with their verdicts and the decision each led to, each issue and the fixes (and commits)
that answered it, the merge, the refused attempts, where a debt item came from, and the timeline.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			var st story
			if err := a.snapshot(c.Context(), func(sn *snapshot) error {
				lines, err := readLog(sn.s)
				if err != nil {
					return err
				}
				st, err = sn.story(strings.TrimSpace(args[0]), lines)
				return err
			}); err != nil {
				return err
			}
			return a.emit(st, func(w io.Writer) { writeStory(w, st) })
		},
	}
}

// story gathers id's story.
func (sn *snapshot) story(id string, lines []logLine) (story, error) {
	if sn.feat == nil {
		return story{}, firstProblemOr(sn, missing(sn.s, features.FileName, featuresHint))
	}
	it, err := sn.feat.Get(id)
	if err != nil {
		return story{}, errs.New(errs.NotFound, "%s is not in %s (see 'baton features list')", id, features.FileName)
	}
	raw, _ := sn.feat.Raw(id)
	st := story{ID: it.ID, Name: it.Name, Kind: it.Kind(), Passes: it.Passes, Record: gjson.ParseBytes(raw).Value(),
		Sessions: []map[string]any{}, Reviews: []map[string]any{}, Fixes: []map[string]any{}, Issues: []storyIssue{},
		Commits: []storyCommit{}, Merges: []storyMerge{}, Refused: []logLine{}, Events: []logLine{}, Warnings: []string{}}
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
	st.Origin = sn.origin(gjson.ParseBytes(raw), id, lines)
	if e := st.Origin.Event; e != nil && (len(st.Events) == 0 || st.Events[0].Seq > e.Seq) {
		st.Events = append([]logLine{*e}, st.Events...)
	}
	st.times()
	return st, nil
}

func (st *story) addSessions(sn *snapshot, ids map[int]bool) {
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
				"features_touched": nonNil(s.Features), "branch": s.Branch, "open": true, "duration_seconds": nil})
		}
	}
}

// addCommit adds a commit once, with the session that first recorded it.
func (st *story) addCommit(c storyCommit) {
	for _, x := range st.Commits {
		if x.Hash == c.Hash {
			return
		}
	}
	st.Commits = append(st.Commits, c)
}

// addReviews adds the reviews naming the feature, their issues and the
// fixes answering them, and the merges.
func (st *story) addReviews(sn *snapshot, id string) {
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
			st.Issues = append(st.Issues, storyIssue{ID: is.ID, ReviewID: rid, Severity: is.Severity, Description: is.Description, Location: is.Location,
				FixedBy: []string{}, Commits: []string{}, DeferredBy: []string{}, Status: "open"})
		}
		if mc := r.Get("merge_commit").String(); mc != "" {
			st.Merges = append(st.Merges, storyMerge{rid, reviews.VerdictOf(r), r.Get("branch").String(), mc, r.Get("merged_onto").String(), r.Get("merged_at").String()})
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
func (st *story) answer(x gjson.Result) {
	label := reviews.FixLabel(int(x.Get("fix_id").Int()))
	find := func(v gjson.Result) *storyIssue {
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
func (sn *snapshot) origin(rec gjson.Result, id string, lines []logLine) storyOrigin {
	o := storyOrigin{Source: rec.Get("source_appspec").String()}
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
func (st *story) times() {
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

func durationText(s *int64) string {
	if s == nil {
		return "-"
	}
	return (time.Duration(*s) * time.Second).String()
}

func writeStory(w io.Writer, st story) {
	state := map[bool]string{true: "passing", false: "not passing"}[st.Passes]
	printf(w, "%s %s — %s, %s", st.ID, st.Name, kindName(st.Kind), state)
	writeOrigin(w, st.Origin)
	printf(w, "Time:      %s → %s (%s)", orDash(deref(st.StartedAt)), orDash(deref(st.FinishedAt)), durationText(st.DurationSeconds))
	printf(w, "Sessions:  %d", len(st.Sessions))
	for _, s := range st.Sessions {
		rng := ""
		if r, ok := s["commit_range"].(map[string]any); ok && (str(r["from"]) != "" || str(r["to"]) != "") {
			rng = fmt.Sprintf(" [%s..%s]", str(r["from"]), str(r["to"]))
		}
		printf(w, "  #%v %v %v %v → %v (%s) %q%s", s["session_id"], s["agent_type"], orDash(str(s["outcome"])), s["started_at"], orDash(str(s["completed_at"])), durationText(int64Of(s["duration_seconds"])), str(s["summary"]), rng)
	}
	printf(w, "Commits:   %d", len(st.Commits))
	for _, c := range st.Commits {
		printf(w, "  %s %s (%s#%d)", c.Hash, c.Message, c.Role, c.SessionID)
	}
	printf(w, "Reviews:   %d", len(st.Reviews))
	for _, r := range st.Reviews {
		g := gjson.Parse(string(jsondoc.Pretty(r)))
		printf(w, "  R%d %s on %s %s..%s %q → %s [%s]", g.Get("review_id").Int(), reviews.VerdictOf(g), g.Get("branch").String(), g.Get("commit_range.from").String(), g.Get("commit_range.to").String(), g.Get("summary").String(), orDash(g.Get("decision.phase").String()), orDash(g.Get("decision.rule").String()))
		for _, is := range st.Issues {
			if is.ReviewID == int(g.Get("review_id").Int()) {
				printf(w, "    %s %s %s — %s", is.ID, is.Severity, is.Description, issueStatus(is))
			}
		}
	}
	for _, m := range st.Merges {
		printf(w, "Merge:     R%d (%s) merged %s as %s onto %s at %s", m.ReviewID, m.Verdict, m.Branch, m.MergeCommit, orDash(m.MergedOnto), m.MergedAt)
	}
	printf(w, "Refused:   %d", len(st.Refused))
	for _, l := range st.Refused {
		printf(w, "  %s", logText(l))
	}
	printf(w, "Timeline:")
	for _, l := range st.Events {
		printf(w, "  %s", logText(l))
	}
}

// kindName names a work-item kind for people.
func kindName(kind string) string {
	switch kind {
	case "BUG":
		return "bug"
	case "DEBT":
		return "tech debt"
	}
	return "feature"
}

func writeOrigin(w io.Writer, o storyOrigin) {
	from := orDash(o.Source)
	if o.SourceReview != nil {
		from = fmt.Sprintf("review R%d", *o.SourceReview)
		if r, ok := o.Review.(map[string]any); ok {
			from += fmt.Sprintf(" (%v on %v: %q)", r["verdict"], orDash(str(r["feature_id"])), str(r["summary"]))
		}
		if o.Source != "" {
			from += "; " + o.Source
		}
	}
	if o.Event != nil {
		from += fmt.Sprintf(" — added by %s at %s (%s)", o.Event.Command, o.Event.Timestamp, o.Event.EventID)
	}
	printf(w, "Origin:    %s", from)
}

func issueStatus(is storyIssue) string {
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

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func int64Of(v any) *int64 {
	switch n := v.(type) {
	case *int64:
		return n
	case float64:
		i := int64(n)
		return &i
	}
	return nil
}
