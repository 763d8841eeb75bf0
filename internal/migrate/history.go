package migrate

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/reviews"
)

// Entry is one record of the predecessor's history, as the audit log
// imports it.
type Entry struct {
	Kind     string          // session, review or fix
	ID       int             // its id in its file
	Time     string          // when it was recorded, as baton writes times ("" when unknown)
	Role     string          // the agent type that recorded it
	Session  int             // for a session: its id (0 otherwise)
	Features []string        // the features it names
	Summary  string          // one line for the log
	Record   json.RawMessage // the record as the predecessor wrote it

	raw string // the time as recorded, to order entries to the microsecond
}

// Source names where an entry was read from, for the log's command column.
func (e Entry) Source() string {
	switch e.Kind {
	case "session":
		return "progress.json sessions"
	case "review":
		return "reviews.json reviews"
	}
	return "reviews.json fixes"
}

// history lists the predecessor's sessions, reviews and fixes, oldest
// first (a record without a readable time keeps its place after the one
// before it in its file).
func history(in Input) []Entry {
	var out []Entry
	if in.Progress != nil {
		in.Progress.Sessions(func(raw []byte) { out = append(out, sessionEntry(raw)) })
	}
	if in.Reviews != nil {
		for _, r := range in.Reviews.Reviews() {
			out = append(out, reviewEntry(r))
		}
		for _, x := range in.Reviews.Fixes() {
			out = append(out, fixEntry(x))
		}
	}
	keys := sortKeys(out)
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]].Before(keys[idx[b]]) })
	sorted := make([]Entry, len(out))
	for i, j := range idx {
		sorted[i] = out[j]
		if sorted[i].Time == "" && i > 0 { // unreadable: placed, and dated, after the one before
			sorted[i].Time = sorted[i-1].Time
		}
	}
	return sorted
}

// sortKeys gives each entry its time, or the time of the entry before it
// in its own file.
func sortKeys(es []Entry) []time.Time {
	keys := make([]time.Time, len(es))
	var prev time.Time
	kind := ""
	for i, e := range es {
		if e.Kind != kind {
			prev, kind = time.Time{}, e.Kind
		}
		if t, err := jsondoc.ParseTime(e.raw); err == nil {
			prev = t
		}
		keys[i] = prev
	}
	return keys
}

// setTime records a predecessor's time (isoformat with +00:00 and
// microseconds), written as baton writes times ("" when it cannot be read).
func (e *Entry) setTime(times ...string) {
	for _, s := range times {
		if t, err := jsondoc.ParseTime(s); err == nil {
			e.Time, e.raw = jsondoc.Timestamp(t), s
			return
		}
	}
}

func sessionEntry(raw []byte) Entry {
	r := gjson.ParseBytes(raw)
	e := Entry{Kind: "session", ID: int(r.Get("session_id").Int()), Role: r.Get("agent_type").String(), Record: json.RawMessage(raw)}
	e.Session = e.ID
	e.setTime(r.Get("completed_at").String(), r.Get("started_at").String())
	e.Features = featureIDs(r.Get("features_touched"))
	e.Summary = fmt.Sprintf("imported session %d %s %s", e.ID, e.Role, r.Get("outcome").String())
	return e
}

func reviewEntry(r gjson.Result) Entry {
	e := Entry{Kind: "review", ID: int(r.Get("review_id").Int()), Role: r.Get("agent_type").String(), Record: json.RawMessage(r.Raw)}
	e.setTime(r.Get("timestamp").String())
	e.Features = featureIDs(r.Get("feature_id"))
	on := strings.Join(e.Features, ",")
	if on == "" {
		on = "the codebase"
	}
	e.Summary = fmt.Sprintf("imported review R%d %s %s on %s: %d issues; %s", e.ID, e.Role, reviews.VerdictOf(r), on, reviews.IssueCount(r), r.Get("summary").String())
	return e
}

func fixEntry(x gjson.Result) Entry {
	e := Entry{Kind: "fix", ID: int(x.Get("fix_id").Int()), Role: x.Get("agent_type").String(), Record: json.RawMessage(x.Raw)}
	if e.Role == "" {
		e.Role = "FIX"
	}
	e.setTime(x.Get("timestamp").String())
	e.Features = featureIDs(x.Get("feature_id"))
	e.Summary = fmt.Sprintf("imported fix %s answering R%d: %d fixed, %d deferred", reviews.FixLabel(e.ID), x.Get("review_id").Int(),
		len(x.Get("issues_fixed").Array()), len(x.Get("issues_deferred").Array()))
	return e
}
