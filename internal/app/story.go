package app

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

// recordJSON encodes what a transaction recorded for its audit event.
func recordJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// ---- the audit log, read for people

// LogLine is one audit event as log, show and report present it.
type LogLine struct {
	Seq       int             `json:"seq"`
	EventID   string          `json:"event_id"`
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Features  []string        `json:"features"`
	Command   string          `json:"command"`
	Actor     *actor          `json:"actor"`
	Changed   []string        `json:"changed,omitempty"`
	Summary   string          `json:"summary,omitempty"`
	Refused   string          `json:"refused,omitempty"`
	Record    json.RawMessage `json:"record,omitempty"`
}

func (l LogLine) session() int {
	if l.Actor == nil || l.Actor.Session == nil {
		return 0
	}
	return *l.Actor.Session
}

func (l LogLine) role() string {
	if l.Actor == nil {
		return ""
	}
	return l.Actor.Role
}

// readLog reads every audit event as a log line.
func readLog(s *store.Store) ([]LogLine, error) {
	events, err := s.ReadEvents()
	if err != nil {
		return nil, errs.New(errs.Invalid, "%v", err)
	}
	lines := make([]LogLine, 0, len(events))
	for _, e := range events {
		var p eventPayload
		_ = json.Unmarshal(e.Payload, &p)
		fs := []string{}
		if e.TaskID != nil {
			fs = append(fs, features.SplitIDs(*e.TaskID)...)
		}
		lines = append(lines, LogLine{Seq: e.Seq, EventID: e.EventID, Timestamp: e.Timestamp, Type: e.Type, Features: fs,
			Command: p.Command, Actor: p.Actor, Changed: p.Changed, Summary: p.Summary, Refused: p.Refused, Record: p.Record})
	}
	return lines, nil
}

// sessionsOf is the set of sessions that concern a feature: those that
// touched it, or that did anything naming it (a REVIEW session started
// without --feature that reviewed it, a FIX session that fixed it).
func sessionsOf(id string, lines []LogLine, prog *progress.File) map[int]bool {
	set := map[int]bool{}
	for _, l := range lines {
		if s := l.session(); s != 0 && contains(l.Features, id) {
			set[s] = true
		}
	}
	if prog != nil {
		prog.Sessions(func(raw []byte) {
			r := gjson.ParseBytes(raw)
			r.Get("features_touched").ForEach(func(_, v gjson.Result) bool {
				if v.String() == id {
					set[int(r.Get("session_id").Int())] = true
				}
				return true
			})
		})
	}
	return set
}

// concerns says whether an event belongs to a feature's story.
func concerns(l LogLine, id string, sessions map[int]bool) bool {
	return contains(l.Features, id) || sessions[l.session()]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ---- baton log

// LogInput filters the audit timeline.
type LogInput struct {
	Feature string `json:"feature,omitempty"` // only this item's story
	Role    string `json:"role,omitempty"`
	Since   string `json:"since,omitempty"` // ISO 8601, or 30m, 1h, 2d ago
	Until   string `json:"until,omitempty"`
	Verdict string `json:"verdict,omitempty"`
	Session int    `json:"session,omitempty"`
	Limit   int    `json:"limit,omitempty"` // only the last N events (after filtering)
	Refused bool   `json:"refused,omitempty"`
}

// LogResult is the audit timeline, oldest first.
type LogResult struct {
	Events []LogLine `json:"events"`
}

// Log is the audit timeline, filtered.
func (a *App) Log(ctx context.Context, c Caller, o LogInput) (LogResult, error) {
	if a.remote != nil {
		return forward[LogResult](ctx, a, c, "log", o)
	}
	a = a.as(c)
	var lines []LogLine
	var fl logFilter
	err := a.reportingSnapshot(ctx, true, func(sn *snapshot) error {
		var err error
		if lines, err = readLog(sn.s); err != nil {
			return err
		}
		fl, err = sn.logFilter(o, lines, a.env.Now())
		return err
	})
	if err != nil {
		return LogResult{}, err
	}
	out := []LogLine{}
	for _, l := range lines {
		if fl.matches(l) {
			out = append(out, l)
		}
	}
	if o.Limit < 0 {
		return LogResult{}, errs.New(errs.Usage, "--limit: must be at least 0, got %d", o.Limit)
	}
	if o.Limit > 0 && len(out) > o.Limit {
		out = out[len(out)-o.Limit:]
	}
	return LogResult{Events: out}, nil
}

// Show is the whole story of a feature, bug or debt item.
func (a *App) Show(ctx context.Context, c Caller, id string) (Story, error) {
	if a.remote != nil {
		return forward[Story](ctx, a, c, "show", IDInput{ID: id})
	}
	a = a.as(c)
	var st Story
	err := a.reportingSnapshot(ctx, true, func(sn *snapshot) error {
		lines, err := readLog(sn.s)
		if err != nil {
			return err
		}
		st, err = sn.story(strings.TrimSpace(id), lines)
		return err
	})
	return st, err
}

var relTime = regexp.MustCompile(`^(\d+)(s|m|h|d|w)$`)

// logTime reads a --since/--until value: a timestamp, or a duration ago.
func logTime(flag, v string, now time.Time) (time.Time, error) {
	if m := relTime.FindStringSubmatch(strings.TrimSpace(v)); m != nil {
		n, _ := strconv.Atoi(m[1])
		unit := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[m[2]]
		return now.Add(-time.Duration(n) * unit).UTC(), nil
	}
	t, err := jsondoc.ParseTime(strings.TrimSpace(v))
	if err != nil {
		return time.Time{}, errs.New(errs.Usage, "%s: %v, or a time ago such as 30m, 1h, 2d", flag, err)
	}
	return t, nil
}

// logFilter is a log's options checked against the state.
type logFilter struct {
	LogInput
	since, until time.Time
	sessions     map[int]bool // the feature's sessions
	reviewIDs    map[int]bool // the reviews with the verdict
}

// logFilter checks every filter value against the state: a value naming
// nothing is a mistake to report, not an empty answer.
func (sn *snapshot) logFilter(o LogInput, lines []LogLine, now time.Time) (logFilter, error) {
	fl := logFilter{LogInput: o}
	var err error
	if o.Since != "" {
		if fl.since, err = logTime("--since", o.Since, now); err != nil {
			return fl, err
		}
	}
	if o.Until != "" {
		if fl.until, err = logTime("--until", o.Until, now); err != nil {
			return fl, err
		}
	}
	if o.Feature != "" {
		fl.Feature = strings.TrimSpace(o.Feature)
		if sn.feat == nil || !sn.feat.Has(fl.Feature) {
			return fl, errs.New(errs.Usage, "--feature: %s is not in %s (see 'baton features list')", fl.Feature, features.FileName)
		}
		fl.sessions = sessionsOf(fl.Feature, lines, sn.prog)
	}
	if o.Role != "" {
		if _, ok := workflow.Canonical(o.Role); !ok && !strings.EqualFold(o.Role, workflow.Human) {
			return fl, errs.New(errs.Usage, "--role: %q is not a role (%s, %s)", o.Role, strings.Join(progress.AgentTypes, ", "), workflow.Human)
		}
	}
	if o.Session != 0 && !sn.hasSession(o.Session) {
		return fl, errs.New(errs.Usage, "--session: no session %d was started or recorded (see 'baton progress list')", o.Session)
	}
	if o.Verdict != "" {
		v, err := reviews.NormalizeVerdict(o.Verdict)
		if err != nil {
			return fl, err
		}
		fl.Verdict = v
		fl.reviewIDs = map[int]bool{}
		if sn.rev != nil {
			for _, r := range sn.rev.Reviews() {
				if reviews.VerdictOf(r) == v {
					fl.reviewIDs[int(r.Get("review_id").Int())] = true
				}
			}
		}
	}
	return fl, nil
}

func (sn *snapshot) hasSession(id int) bool {
	for _, s := range sn.open.Open {
		if s.SessionID == id {
			return true
		}
	}
	if sn.prog != nil {
		if _, err := sn.prog.SessionRaw(id); err == nil {
			return true
		}
	}
	return false
}

func (fl logFilter) matches(l LogLine) bool {
	switch {
	case fl.Feature != "" && !concerns(l, fl.Feature, fl.sessions):
		return false
	case fl.Role != "" && !sameRole(l.role(), fl.Role):
		return false
	case fl.Session != 0 && l.session() != fl.Session:
		return false
	case fl.Refused && l.Refused == "":
		return false
	case fl.Verdict != "" && !fl.reviewIDs[reviewOf(l)]:
		return false
	}
	if !fl.since.IsZero() || !fl.until.IsZero() {
		t, err := jsondoc.ParseTime(l.Timestamp)
		if err != nil || (!fl.since.IsZero() && t.Before(fl.since)) || (!fl.until.IsZero() && t.After(fl.until)) {
			return false
		}
	}
	return true
}

func sameRole(got, want string) bool {
	g, _ := workflow.Canonical(got)
	w, _ := workflow.Canonical(want)
	return strings.EqualFold(got, want) || (g != "" && g == w)
}

var reviewInSummary = regexp.MustCompile(`\bR(\d+)\b`)

// reviewOf is the review an event recorded, answered, merged or rejected
// (0: none).
func reviewOf(l LogLine) int {
	if id := gjson.GetBytes(l.Record, "review_id").Int(); id > 0 {
		return int(id)
	}
	if m := reviewInSummary.FindStringSubmatch(l.Summary); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

// RecordText says what a session record holds: its summary and commits.
func RecordText(rec json.RawMessage) string {
	r := gjson.ParseBytes(rec)
	if !r.Get("session_id").Exists() {
		return ""
	}
	s := fmt.Sprintf("%q", r.Get("summary").String())
	if n := len(r.Get("commits").Array()); n > 0 {
		var hs []string
		r.Get("commits").ForEach(func(_, c gjson.Result) bool {
			hs = append(hs, c.Get("hash").String())
			return true
		})
		s += fmt.Sprintf("; %d commit(s): %s", n, strings.Join(hs, " "))
	}
	return s
}

// IDList is a feature id or batch as the list of its ids (empty for none).
func IDList(batch *string) []string {
	if batch == nil {
		return []string{}
	}
	return NonNil(features.SplitIDs(*batch))
}

// LogWho is who made an event: ROLE#session, or -.
func LogWho(l LogLine) string {
	if l.Actor == nil {
		return "-"
	}
	if l.Actor.Session != nil {
		return fmt.Sprintf("%s#%d", l.Actor.Role, *l.Actor.Session)
	}
	return l.Actor.Role
}

// LogWhat is what an event did, as the log's text says it.
func LogWhat(l LogLine) string {
	what := l.Summary
	if l.Refused != "" {
		what = "REFUSED: " + l.Refused
	} else if what == "" {
		what = "changed " + strings.Join(l.Changed, ", ")
	}
	if d := RecordText(l.Record); d != "" {
		what += " — " + d
	}
	return what
}
