// Package progress owns progress.json: the project header, the current
// status and the append-only session history. It validates the file, adds
// sessions with ids that follow the last one, and updates the status; it does
// no I/O and never decodes a session it does not need.
package progress

import (
	"sort"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
)

// FileName is the progress file's name in the state directory.
const FileName = "progress.json"

// Agent types. The predecessor's extra roles are accepted as they are.
var AgentTypes = []string{"INITIALIZER", "BROWNFIELD_INITIALIZER", "IMPLEMENT", "BUGFIX", "REVIEW", "FIX", "ARCHITECTURE", "GLOBAL_FIX"}

// Phases a status may name as the next one to run (DONE when nothing is
// left).
var Phases = []string{"INITIALIZER", "IMPLEMENT", "BUGFIX", "REVIEW", "FIX", "ARCHITECTURE", "GLOBAL_FIX", "DONE", "STOPPED"}

// Outcomes stored, as the seed names them.
var Outcomes = []string{"SUCCESS", "READY_FOR_REVIEW", "NEEDS_FIX", "REJECTED", "ERROR"}

// outcomeAliases maps the predecessor's outcome words to the seed's.
var outcomeAliases = map[string]string{
	"APPROVED":           "SUCCESS",
	"APPROVE":            "SUCCESS",
	"PASS":               "SUCCESS",
	"REQUEST_CHANGES":    "NEEDS_FIX",
	"PASS_WITH_COMMENTS": "NEEDS_FIX",
	"REJECT":             "REJECTED",
}

// Choose returns the canonical spelling of value among allowed (matched
// without regard to case), or a usage error naming the flag.
func Choose(flag, value string, allowed []string, aliases map[string]string) (string, error) {
	v := strings.ToUpper(strings.TrimSpace(value))
	if a, ok := aliases[v]; ok {
		return a, nil
	}
	for _, s := range allowed {
		if s == v {
			return s, nil
		}
	}
	return "", errs.New(errs.Usage, "%s: %q is not one of %s", flag, value, strings.Join(allowed, ", "))
}

// NormalizeOutcome maps an --outcome value to the seed's vocabulary.
func NormalizeOutcome(o string) (string, error) {
	return Choose("--outcome", o, Outcomes, outcomeAliases)
}

// Commit is one commit a session made.
type Commit struct {
	Hash    string `json:"hash"`
	Message string `json:"message"`
}

// Range is a commit range; From or To may be null.
type Range struct {
	From        *string `json:"from"`
	To          *string `json:"to"`
	Description string  `json:"description,omitempty"`
}

// Session is a session record as baton writes it.
type Session struct {
	SessionID       int      `json:"session_id"`
	AgentType       string   `json:"agent_type"`
	StartedAt       string   `json:"started_at"`
	CompletedAt     string   `json:"completed_at"`
	Summary         string   `json:"summary"`
	FeaturesTouched []string `json:"features_touched"`
	Outcome         string   `json:"outcome"`
	Commits         []Commit `json:"commits"`
	CommitRange     *Range   `json:"commit_range,omitempty"`
	// Failure describes why a session ended in ERROR without its agent
	// saying so (seed 002's FailureSignature).
	Failure *FailureSignature `json:"failure_signature,omitempty"`
}

// FailureSignature is seed 002's FailureSignature.
type FailureSignature struct {
	Code     string `json:"code"` // plan_invalid, tool_failure, json_error, context_miss, timeout, interrupted, unknown
	Message  string `json:"message"`
	StageID  string `json:"stage_id,omitempty"`
	Severity string `json:"severity"` // info, warning, error
}

// FailureCodes are the codes a FailureSignature may carry.
// interrupted: `baton run` was stopped by SIGINT, SIGTERM or SIGHUP while
// the session's agent ran. stalled: the agent wrote nothing for the
// stall timeout and was killed. budget: the run stopped before a session
// that would have started past its cost budget. runner_lost: the
// connection to the runner the agent ran on was lost.
var FailureCodes = []string{"plan_invalid", "tool_failure", "json_error", "context_miss", "timeout", "interrupted", "stalled", "budget", "runner_lost", "unknown"}

// Status is the status object.
type Status struct {
	UpdatedAt         string  `json:"updated_at"`
	FeaturesCompleted int     `json:"features_completed"`
	FeaturesPassing   int     `json:"features_passing"`
	CurrentPhase      string  `json:"current_phase"`
	CurrentFeature    *string `json:"current_feature"`
	CurrentBranch     *string `json:"current_branch"`
	HeadCommit        *string `json:"head_commit"`
}

// Project is the project header.
type Project struct {
	Name          string `json:"name"`
	CreatedAt     string `json:"created_at"`
	TotalFeatures int    `json:"total_features"`
}

// File is a parsed progress.json.
type File struct {
	doc    *jsondoc.Doc
	maxID  int
	status *jsondoc.Object
	ls     lanesState
}

// New returns a fresh progress file; its status names IMPLEMENT next, as
// the predecessor's init did (the initializer calls it).
func New(name string, totalFeatures int, stamp string, head *string) *File {
	f := &File{doc: jsondoc.NewDoc()}
	top := f.doc.Top
	_ = top.Set("project", Project{Name: name, CreatedAt: stamp, TotalFeatures: totalFeatures})
	_ = top.Set("status", Status{UpdatedAt: stamp, CurrentPhase: "IMPLEMENT", HeadCommit: head})
	top.SetRaw("sessions", []byte("[]"))
	f.doc = mustReparse(f.doc)
	f.status, _ = jsondoc.ParseObject(top.Raw("status"), 1)
	f.ls, _ = readLanes(f.doc.Top)
	return f
}

func mustReparse(d *jsondoc.Doc) *jsondoc.Doc {
	nd, err := jsondoc.ParseDoc(d.Bytes(), "sessions")
	if err != nil {
		panic(err) // baton's own encoding always parses
	}
	return nd
}

// Parse validates data and returns the file. Errors are
// *jsondoc.InvalidError: the grammar, then every record looked at in turn,
// each problem reported with its record, member and offset.
func Parse(data []byte) (*File, error) {
	if err := jsondoc.Check(data); err != nil {
		return nil, err
	}
	doc, err := jsondoc.ParseDoc(data, "sessions")
	if err != nil {
		return nil, err
	}
	f, err := fromDoc(doc)
	if err != nil {
		return nil, err
	}
	arr := doc.Array("sessions")
	elems := arr.Elems()
	seen := make(map[int]bool, len(elems))
	for i := range elems {
		r := arr.Parsed(i)
		if !r.IsObject() {
			return nil, arr.Invalid("sessions", i, "", "a session must be a JSON object")
		}
		idv := r.Get("session_id")
		id, ok := jsondoc.PositiveID(idv)
		if !ok {
			return nil, arr.Invalid("sessions", i, "session_id", "must be a positive whole number (at most 2^53), found %s", orMissing(idv))
		}
		if seen[id] {
			return nil, arr.Invalid("sessions", i, "session_id", "duplicate session id %d", id)
		}
		if err := jsondoc.CheckRecord(r, arr.RecordOffset(i), "sessions", i, sessionShape); err != nil {
			return nil, err
		}
		seen[id] = true
		if id > f.maxID {
			f.maxID = id
		}
	}
	if err := checkShape(doc); err != nil {
		return nil, err
	}
	return f, nil
}

// The shape of progress.json, as readers and writers both check it.
var (
	topShape = []jsondoc.Want{
		{Key: "project", Type: jsondoc.TypeObject},
		{Key: "status", Type: jsondoc.TypeObject, Required: true},
		{Key: "sessions", Type: jsondoc.TypeArray, Required: true},
		{Key: "pipelines", Type: jsondoc.TypeObject},
		{Key: "lanes", Type: jsondoc.TypeArray},
		{Key: "landing", Type: jsondoc.TypeArray},
	}
	projectShape = []jsondoc.Want{
		{Key: "name", Type: jsondoc.TypeString, Null: true},
		{Key: "created_at", Type: jsondoc.TypeString, Null: true},
		{Key: "total_features", Type: jsondoc.TypeInt, Null: true},
	}
	statusShape = []jsondoc.Want{
		{Key: "updated_at", Type: jsondoc.TypeString, Null: true},
		{Key: "features_completed", Type: jsondoc.TypeInt, Null: true},
		{Key: "features_passing", Type: jsondoc.TypeInt, Null: true},
		{Key: "current_phase", Type: jsondoc.TypeString, Enum: Phases},
		{Key: "current_feature", Type: jsondoc.TypeString, Null: true},
		{Key: "current_branch", Type: jsondoc.TypeString, Null: true},
		{Key: "head_commit", Type: jsondoc.TypeString, Null: true},
	}
	sessionShape = []jsondoc.Want{
		{Key: "agent_type", Type: jsondoc.TypeString, Null: true},
		{Key: "started_at", Type: jsondoc.TypeString, Null: true},
		{Key: "completed_at", Type: jsondoc.TypeString, Null: true},
		{Key: "summary", Type: jsondoc.TypeString, Null: true},
		{Key: "features_touched", Type: jsondoc.TypeArray, Null: true},
		{Key: "outcome", Type: jsondoc.TypeString, Null: true, Enum: outcomeWords()},
		{Key: "commits", Type: jsondoc.TypeArray, Null: true},
		{Key: "commit_range", Type: jsondoc.TypeObject, Null: true},
	}
)

func outcomeWords() []string {
	out := append([]string(nil), Outcomes...)
	for a := range outcomeAliases {
		out = append(out, a)
	}
	sort.Strings(out[len(Outcomes):])
	return out
}

// checkShape checks the sections a progress file must have and the types
// of the header fields.
func checkShape(doc *jsondoc.Doc) error {
	top := doc.Top
	if err := top.Check("", "baton never writes progress.json without it; a person restores it from .baton/backup/", topShape); err != nil {
		return err
	}
	if err := jsondoc.CheckMembers(top.Raw("project"), top.MemberOffset("project"), "project", projectShape); err != nil {
		return err
	}
	return jsondoc.CheckMembers(top.Raw("status"), top.MemberOffset("status"), "status", statusShape)
}

// fromDoc checks the header objects and reads the status.
func fromDoc(doc *jsondoc.Doc) (*File, error) {
	f := &File{doc: doc}
	top := doc.Top
	for _, key := range []string{"project", "status"} {
		raw := top.Raw(key)
		if raw == nil {
			continue
		}
		if !gjson.ParseBytes(raw).IsObject() {
			return nil, &jsondoc.InvalidError{Offset: memberOffset(top, key), Path: key, Msg: "must be a JSON object"}
		}
	}
	if raw := top.Raw("status"); raw != nil {
		f.status, _ = jsondoc.ParseObject(raw, 1)
	} else {
		f.status = jsondoc.NewObject(1)
	}
	ls, err := readLanes(top)
	if err != nil {
		return nil, err
	}
	f.ls = ls
	return f, nil
}

func orMissing(r gjson.Result) string {
	if !r.Exists() {
		return "nothing"
	}
	return r.Raw
}

func memberOffset(o *jsondoc.Object, key string) int {
	for _, m := range o.Members {
		if m.Key == key {
			return m.Offset
		}
	}
	return 0
}

// Bytes encodes the file, with the status and the lanes as they are now.
func (f *File) Bytes() []byte {
	f.doc.Top.SetRaw("status", f.status.Bytes())
	f.ls.writeLanes(f.doc.Top)
	return f.doc.Bytes()
}

// NextSessionID is the id the next session gets.
func (f *File) NextSessionID() int { return f.maxID + 1 }

// Len is the number of sessions.
func (f *File) Len() int { return f.doc.Array("sessions").Len() }

// AddSession appends s with the next id and returns the stored session.
func (f *File) AddSession(s Session) (Session, error) {
	id, err := jsondoc.NextID(f.maxID)
	if err != nil {
		return Session{}, errs.New(errs.Conflict, "%s: %v", FileName, err)
	}
	s.SessionID = id
	s = Normalized(s)
	if _, err := f.doc.Array("sessions").Append(s); err != nil {
		return Session{}, err
	}
	f.maxID = s.SessionID
	return s, nil
}

// SessionRaw returns the raw record of session id; -1 is the last session.
func (f *File) SessionRaw(id int) ([]byte, error) {
	arr := f.doc.Array("sessions")
	if id == -1 {
		if last := arr.Last(); last != nil {
			return last, nil
		}
	}
	elems := arr.Elems()
	for i := len(elems) - 1; i >= 0; i-- {
		if gjson.GetBytes(elems[i], "session_id").Int() == int64(id) {
			return elems[i], nil
		}
	}
	return nil, errs.New(errs.NotFound, "Session %d not found (see 'baton progress list')", id)
}

// Sessions calls fn with every session's raw record in order.
func (f *File) Sessions(fn func(raw []byte)) {
	for _, raw := range f.doc.Array("sessions").Elems() {
		fn(raw)
	}
}

// Status decodes the status object.
func (f *File) Status() (Status, error) {
	var s Status
	err := f.status.Decode(&s)
	return s, err
}

// StatusRaw returns the status object as stored.
func (f *File) StatusRaw() []byte { return f.status.Bytes() }

// Project decodes the project header.
func (f *File) Project() (Project, error) {
	var p Project
	err := f.doc.Top.Get("project", &p)
	return p, err
}

// SetStatus sets one status field.
func (f *File) SetStatus(key string, v any) error { return f.status.Set(key, v) }

// Counters are the status numbers baton computes from the other files.
type Counters struct {
	TotalFeatures     int
	FeaturesPassing   int
	FeaturesCompleted int
}

// SetCounters writes computed counters into the status and project header.
func (f *File) SetCounters(c Counters) error {
	if err := f.status.Set("features_completed", c.FeaturesCompleted); err != nil {
		return err
	}
	if err := f.status.Set("features_passing", c.FeaturesPassing); err != nil {
		return err
	}
	praw := f.doc.Top.Raw("project")
	if praw == nil {
		return f.doc.Top.Set("project", map[string]int{"total_features": c.TotalFeatures})
	}
	proj, err := jsondoc.ParseObject(praw, 1)
	if err != nil {
		return err
	}
	if err := proj.Set("total_features", c.TotalFeatures); err != nil {
		return err
	}
	f.doc.Top.SetRaw("project", proj.Bytes())
	return nil
}

// Nullable turns the predecessor's "null" spelling (and "") into nil.
func Nullable(s string) *string {
	if s == "" || s == "null" {
		return nil
	}
	return &s
}

// ReviewType says what a REVIEW session reviews: a refactor branch that
// names no item is an ARCHITECTURE_REFACTOR; anything else, a tech-debt
// batch on its refactor branch included, is a FEATURE review of the items
// named, which its PASS names and passes.
func ReviewType(st Status) string {
	named := st.CurrentFeature != nil && strings.TrimSpace(*st.CurrentFeature) != ""
	if !named && st.CurrentBranch != nil && strings.HasPrefix(*st.CurrentBranch, "refactor/") {
		return "ARCHITECTURE_REFACTOR"
	}
	return "FEATURE"
}
