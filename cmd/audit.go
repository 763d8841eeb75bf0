package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"baton/errs"
	"baton/features"
	"baton/jsondoc"
	"baton/progress"
	"baton/reviews"
	"baton/store"
	"baton/workflow"
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
	problems []problem
}

type problem struct {
	Check   string `json:"check"`
	File    string `json:"file,omitempty"`
	Message string `json:"message"`
}

// snapshot reads every file and then runs fn, under the state lock so that
// the log and the files are seen at one moment (a writer committing between
// the two reads would look like an edit made outside baton). It commits
// nothing.
func (a *App) snapshot(ctx context.Context, fn func(sn *snapshot) error) error {
	s, err := a.openStore("")
	if err != nil {
		return err
	}
	return s.Update(ctx, func(*store.Tx) error {
		sn, err := a.readSnapshot(ctx, s)
		if err != nil {
			return err
		}
		return fn(sn)
	})
}

func (a *App) readSnapshot(ctx context.Context, s *store.Store) (*snapshot, error) {
	cfg, err := s.LoadConfig()
	if err != nil {
		return nil, err
	}
	sn := &snapshot{s: s, cfg: cfg}
	read := func(name string, parse func([]byte) error) {
		data, err := s.ReadFile(ctx, name)
		if err != nil {
			sn.problems = append(sn.problems, problem{"files", name, err.Error()})
			return
		}
		if data == nil {
			return
		}
		if err := parse(data); err != nil {
			sn.problems = append(sn.problems, problem{"files", name, invalidFile(s, name, data, err).Error()})
		}
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

type verifyResult struct {
	OK       bool      `json:"ok"`
	Events   int       `json:"events"`
	Problems []problem `json:"problems"`
}

func (a *App) newVerifyCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "verify",
		Short: "Check the audit chain, that the files match the last event, and the state's invariants (exit 6 on any problem)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var res verifyResult
			if err := a.snapshot(c.Context(), func(sn *snapshot) error { res = sn.verify(); return nil }); err != nil {
				return err
			}
			if err := a.emit(res, func(w io.Writer) {
				for _, p := range res.Problems {
					printf(w, "PROBLEM: [%s] %s", p.Check, p.Message)
				}
				if res.OK {
					printf(w, "OK: %d events, chain intact, files match the last event, every passing feature has a passing review", res.Events)
				}
			}); err != nil {
				return err
			}
			if !res.OK {
				return errs.New(errs.Invalid, "verify found %d problem(s)", len(res.Problems))
			}
			return nil
		},
	}
}

func (sn *snapshot) verify() verifyResult {
	res := verifyResult{Problems: append([]problem{}, sn.problems...)}
	events, err := sn.s.ReadEvents()
	res.Events = len(events)
	if err != nil {
		res.Problems = append(res.Problems, problem{"chain", store.EventsName, err.Error()})
	}
	for _, p := range store.CheckChain(events) {
		res.Problems = append(res.Problems, problem{"chain", store.EventsName, fmt.Sprintf("line %d (seq %d): %s", p.Line, p.Seq, p.Problem)})
	}
	if len(events) > 0 {
		last := events[len(events)-1]
		now, names, err := sn.s.FileHashes()
		if err != nil {
			res.Problems = append(res.Problems, problem{"files", "", err.Error()})
		}
		for _, n := range names {
			if want, ok := last.Metadata.Files[n]; ok && want != now[n] {
				res.Problems = append(res.Problems, problem{"edited", n, fmt.Sprintf("%s was changed outside baton after event %s (%s): its content does not match the hash baton recorded", n, last.EventID, last.Timestamp)})
			}
		}
	}
	res.Problems = append(res.Problems, sn.passingWithoutReview()...)
	res.OK = len(res.Problems) == 0
	return res
}

// passingWithoutReview lists passing features no passing review accounts
// for.
func (sn *snapshot) passingWithoutReview() []problem {
	if sn.feat == nil {
		return nil
	}
	passed := map[string]bool{}
	if sn.rev != nil {
		passed = sn.rev.PassedFeatures()
	}
	var out []problem
	for _, id := range sn.feat.Passing() {
		if !passed[id] {
			out = append(out, problem{"review", features.FileName, fmt.Sprintf("%s is passing but no PASS review names it (only REVIEW marks features passing, after a passing review)", id)})
		}
	}
	return out
}

// ---- next

type nextResult struct {
	Phase   string  `json:"phase"`
	Feature *string `json:"feature"`
	Branch  *string `json:"branch"`
	Rule    string  `json:"rule"`
	Reason  string  `json:"reason"`
}

func (a *App) newWhatNextCmd() *cobra.Command {
	return &cobra.Command{
		Use: "next", Short: "Say which role runs next, on what, and the rule that decided it", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var n nextResult
			if err := a.snapshot(c.Context(), func(sn *snapshot) error {
				if sn.prog == nil {
					return firstProblemOr(sn, missing(sn.s, progress.FileName, progressHint))
				}
				n = sn.next()
				return nil
			}); err != nil {
				return err
			}
			return a.emit(n, func(w io.Writer) {
				printf(w, "NEXT: %s", n.Phase)
				printf(w, "FEATURE: %s", deref(n.Feature))
				printf(w, "BRANCH: %s", deref(n.Branch))
				printf(w, "RULE: %s", n.Rule)
				printf(w, "WHY: %s", n.Reason)
			})
		},
	}
}

func firstProblemOr(sn *snapshot, err error) error {
	if len(sn.problems) > 0 {
		return errs.New(errs.Invalid, "%s", sn.problems[0].Message)
	}
	return err
}

// next is the status's recorded decision, or, before any decision, the
// next work item computed from the backlog.
func (sn *snapshot) next() nextResult {
	st, _ := sn.prog.Status()
	raw := gjson.ParseBytes(sn.prog.StatusRaw())
	if rule := raw.Get("decision.rule").String(); rule != "" {
		return nextResult{Phase: st.CurrentPhase, Feature: st.CurrentFeature, Branch: st.CurrentBranch, Rule: rule, Reason: raw.Get("decision.reason").String()}
	}
	sit := workflow.Situation{Limits: workflow.Limits{MaxFixCycles: sn.cfg.MaxFixCycles, ArchitectureInterval: sn.cfg.ArchitectureInterval, TechDebtThreshold: sn.cfg.TechDebtThreshold, MaxErrorRetries: sn.cfg.MaxErrorRetries}}
	if sn.feat != nil {
		for _, f := range sn.feat.Pending("") {
			switch f.Kind() {
			case "BUG":
				sit.Backlog.Bugs = append(sit.Backlog.Bugs, f.ID)
			case "DEBT":
				sit.Backlog.Debt = append(sit.Backlog.Debt, f.ID)
			default:
				sit.Backlog.Features = append(sit.Backlog.Features, f.ID)
			}
		}
	}
	d := workflow.NextWork(sit)
	if sn.prog.Len() == 0 && (sn.feat == nil || len(sn.feat.All()) == 0) {
		d = workflow.Decision{Phase: workflow.PhaseInitializer, Rule: "not-initialized", Reason: "no features yet: INITIALIZER writes the feature list"}
	}
	return nextResult{Phase: d.Phase, Feature: d.Feature, Branch: d.Branch, Rule: d.Rule, Reason: d.Reason}
}

// ---- status

type statusResult struct {
	StateDir     string                 `json:"state_dir"`
	Project      string                 `json:"project"`
	Next         nextResult             `json:"next"`
	Passing      int                    `json:"features_passing"`
	Total        int                    `json:"total_features"`
	Completed    int                    `json:"features_completed"`
	LastSession  any                    `json:"last_session"`
	LastReview   any                    `json:"last_review"`
	FixCycles    *fixCountResult        `json:"fix_cycles"`
	OpenSessions []progress.OpenSession `json:"open_sessions"`
	Problems     []problem              `json:"problems"`
}

func (a *App) newStatusCmd() *cobra.Command {
	return &cobra.Command{
		Use: "status", Short: "One screen: phase, feature, branch, counters, last session and review, fix cycles left, problems", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var res statusResult
			if err := a.snapshot(c.Context(), func(sn *snapshot) error {
				if sn.prog == nil {
					return firstProblemOr(sn, missing(sn.s, progress.FileName, progressHint))
				}
				res = sn.status()
				return nil
			}); err != nil {
				return err
			}
			return a.emit(res, func(w io.Writer) { writeStatus(w, res) })
		},
	}
}

func (sn *snapshot) status() statusResult {
	res := statusResult{StateDir: sn.s.Dir, Next: sn.next(), OpenSessions: sn.open.Open, Problems: sn.verify().Problems}
	if p, err := sn.prog.Project(); err == nil {
		res.Project = p.Name
		res.Total = p.TotalFeatures
	}
	st, _ := sn.prog.Status()
	res.Passing, res.Completed = st.FeaturesPassing, st.FeaturesCompleted
	if raw, err := sn.prog.SessionRaw(-1); err == nil {
		res.LastSession = gjson.ParseBytes(raw).Value()
	}
	if sn.rev != nil {
		if last, err := sn.rev.Last(); err == nil {
			res.LastReview = map[string]any{"review_id": last.Get("review_id").Int(), "feature_id": last.Get("feature_id").Value(), "verdict": last.Get("verdict").String(), "issues": reviews.IssueCount(last)}
		}
		if st.CurrentFeature != nil {
			fc := fixCountOf(sn.rev, *st.CurrentFeature, sn.cfg)
			res.FixCycles = &fc
		}
	}
	if res.OpenSessions == nil {
		res.OpenSessions = []progress.OpenSession{}
	}
	return res
}

func writeStatus(w io.Writer, r statusResult) {
	printf(w, "Project:   %s (state in %s)", r.Project, r.StateDir)
	printf(w, "Next:      %s  feature %s  branch %s", r.Next.Phase, orDash(deref(r.Next.Feature)), orDash(deref(r.Next.Branch)))
	printf(w, "Why:       %s [%s]", r.Next.Reason, r.Next.Rule)
	printf(w, "Features:  %d/%d passing, %d completed (passed review)", r.Passing, r.Total, r.Completed)
	if s, ok := r.LastSession.(map[string]any); ok {
		printf(w, "Session:   #%v %v %v at %v — %v", s["session_id"], s["agent_type"], s["outcome"], s["completed_at"], s["summary"])
	} else {
		printf(w, "Session:   none yet")
	}
	if rv, ok := r.LastReview.(map[string]any); ok {
		printf(w, "Review:    R%v %v on %v (%v issues)", rv["review_id"], rv["verdict"], orDash(fmt.Sprint(rv["feature_id"])), rv["issues"])
	} else {
		printf(w, "Review:    none yet")
	}
	if r.FixCycles != nil {
		printf(w, "Fixes:     %s: %d of %d fix cycles used, %d left", r.FixCycles.FeatureID, r.FixCycles.FixCount, r.FixCycles.MaxFixCycles, r.FixCycles.Remaining)
	}
	if len(r.OpenSessions) == 0 {
		printf(w, "Open:      no session open")
	}
	for _, s := range r.OpenSessions {
		printf(w, "Open:      session %d %s since %s", s.SessionID, s.AgentType, s.StartedAt)
	}
	if len(r.Problems) == 0 {
		printf(w, "Verify:    ok")
	}
	for _, p := range r.Problems {
		printf(w, "Verify:    PROBLEM [%s] %s", p.Check, p.Message)
	}
}

// ---- log

type logOpts struct {
	Feature, Role, Since, Until string
	Session                     int
}

type logLine struct {
	Seq       int      `json:"seq"`
	EventID   string   `json:"event_id"`
	Timestamp string   `json:"timestamp"`
	Type      string   `json:"type"`
	TaskID    *string  `json:"task_id"`
	Command   string   `json:"command"`
	Actor     *actor   `json:"actor"`
	Changed   []string `json:"changed,omitempty"`
	Summary   string   `json:"summary,omitempty"`
	Refused   string   `json:"refused,omitempty"`
}

func (a *App) newLogCmd() *cobra.Command {
	var o logOpts
	c := &cobra.Command{
		Use: "log", Short: "Show the audit timeline (filter by feature, role, session, time)", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.runLog(o) },
	}
	c.Flags().StringVar(&o.Feature, "feature", "", "only events concerning this feature")
	c.Flags().StringVar(&o.Role, "role", "", "only events by this role")
	c.Flags().IntVar(&o.Session, "session", 0, "only events of this session")
	c.Flags().StringVar(&o.Since, "since", "", "only events at or after this time (ISO 8601)")
	c.Flags().StringVar(&o.Until, "until", "", "only events at or before this time (ISO 8601)")
	return c
}

func (a *App) runLog(o logOpts) error {
	var since, until time.Time
	for _, t := range []struct {
		flag, v string
		dst     *time.Time
	}{{"--since", o.Since, &since}, {"--until", o.Until, &until}} {
		if t.v == "" {
			continue
		}
		v, err := jsondoc.ParseTime(t.v)
		if err != nil {
			return errs.New(errs.Usage, "%s: %v", t.flag, err)
		}
		*t.dst = v
	}
	s, err := a.openStore("")
	if err != nil {
		return err
	}
	events, err := s.ReadEvents()
	if err != nil {
		return errs.New(errs.Invalid, "%v", err)
	}
	lines := []logLine{}
	for _, e := range events {
		var p eventPayload
		_ = json.Unmarshal(e.Payload, &p)
		l := logLine{Seq: e.Seq, EventID: e.EventID, Timestamp: e.Timestamp, Type: e.Type, TaskID: e.TaskID, Command: p.Command, Actor: p.Actor, Changed: p.Changed, Summary: p.Summary, Refused: p.Refused}
		if !o.matches(l, since, until) {
			continue
		}
		lines = append(lines, l)
	}
	return a.emit(lines, func(w io.Writer) {
		for _, l := range lines {
			who := "-"
			if l.Actor != nil {
				who = l.Actor.Role
				if l.Actor.Session != nil {
					who += "#" + strconv.Itoa(*l.Actor.Session)
				}
			}
			what := l.Summary
			if l.Refused != "" {
				what = "REFUSED: " + l.Refused
			} else if what == "" {
				what = "changed " + strings.Join(l.Changed, ", ")
			}
			printf(w, "%s %s %-14s %-28s %s", l.EventID, l.Timestamp, who, l.Command, what)
		}
	})
}

func (o logOpts) matches(l logLine, since, until time.Time) bool {
	if o.Feature != "" && !containsID(deref(l.TaskID), o.Feature) {
		return false
	}
	if o.Role != "" && (l.Actor == nil || !strings.EqualFold(l.Actor.Role, o.Role)) {
		return false
	}
	if o.Session != 0 && (l.Actor == nil || l.Actor.Session == nil || *l.Actor.Session != o.Session) {
		return false
	}
	if !since.IsZero() || !until.IsZero() {
		t, err := jsondoc.ParseTime(l.Timestamp)
		if err != nil || (!since.IsZero() && t.Before(since)) || (!until.IsZero() && t.After(until)) {
			return false
		}
	}
	return true
}

func containsID(batch, id string) bool {
	for _, x := range features.SplitIDs(batch) {
		if x == id {
			return true
		}
	}
	return false
}
