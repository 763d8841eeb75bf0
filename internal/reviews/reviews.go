// Package reviews owns reviews.json: review records (feature and
// architecture), fix records, issue ids, verdict vocabulary and the fix-cycle
// count. It does no I/O.
package reviews

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/progress"
)

// FileName is the reviews file's name in the state directory.
const FileName = "reviews.json"

// SchemaVersion is written into new files.
const SchemaVersion = "1.0"

// Verdicts stored, as the seed names them.
var Verdicts = []string{"PASS", "PASS_WITH_COMMENTS", "REQUEST_CHANGES", "REJECT"}

var verdictAliases = map[string]string{"APPROVE": "PASS", "APPROVED": "PASS", "REJECTED": "REJECT"}

// NormalizeVerdict maps a --verdict value to the seed's vocabulary.
func NormalizeVerdict(v string) (string, error) {
	return progress.Choose("--verdict", v, Verdicts, verdictAliases)
}

// ReviewerTypes are the agent types that write reviews.
var ReviewerTypes = []string{"REVIEW", "ARCHITECTURE"}

// Review is a review record as baton writes it.
type Review struct {
	ReviewID     int             `json:"review_id"`
	FeatureID    *string         `json:"feature_id"`
	FeatureName  string          `json:"feature_name,omitempty"`
	Branch       *string         `json:"branch"`
	AgentType    string          `json:"agent_type"`
	Timestamp    string          `json:"timestamp"`
	CommitRange  *progress.Range `json:"commit_range,omitempty"`
	Verdict      string          `json:"verdict"`
	HealthStatus string          `json:"health_status,omitempty"`
	Metrics      json.RawMessage `json:"metrics,omitempty"`
	Issues       json.RawMessage `json:"issues"`
	Summary      string          `json:"summary"`
	Decision     json.RawMessage `json:"decision,omitempty"`
}

// FixedIssue is one entry of a fix's issues_fixed.
type FixedIssue struct {
	IssueID        string `json:"issue_id"`
	FixDescription string `json:"fix_description,omitempty"`
	Commit         string `json:"commit,omitempty"`
}

// Fix is a fix record as baton writes it.
type Fix struct {
	FixID          int               `json:"fix_id"`
	ReviewID       int               `json:"review_id"`
	FeatureID      *string           `json:"feature_id"`
	Branch         *string           `json:"branch"`
	AgentType      string            `json:"agent_type"`
	Timestamp      string            `json:"timestamp"`
	IssuesFixed    []json.RawMessage `json:"issues_fixed"`
	IssuesDeferred []json.RawMessage `json:"issues_deferred"`
	TestsAdded     []string          `json:"tests_added"`
	MergedToMain   bool              `json:"merged_to_main"`
	PendingReview  bool              `json:"pending_review"`
}

// FixLabel is how a fix id is printed: FIX-3, never F3 (which reads as a
// feature id).
func FixLabel(id int) string { return "FIX-" + strconv.Itoa(id) }

// File is a parsed reviews.json.
type File struct {
	doc     *jsondoc.Doc
	maxRev  int
	maxFix  int
	reviews []gjson.Result // parsed views of the raw records, same order (nil until needed)
	fixes   []gjson.Result
}

// New returns an empty reviews file.
func New() *File {
	f := &File{doc: jsondoc.NewDoc("reviews", "fixes")}
	f.doc.Top.Members = append([]jsondoc.Member{{Key: "schema_version", Raw: quoteJSON(SchemaVersion)}}, f.doc.Top.Members...)
	return f
}

// Parse validates data and returns the file. Errors are
// *jsondoc.InvalidError: the grammar, then every record looked at in turn,
// each problem reported with its record, member and offset.
func Parse(data []byte) (*File, error) {
	if err := jsondoc.Check(data); err != nil {
		return nil, err
	}
	doc, err := jsondoc.ParseDoc(data, "reviews", "fixes")
	if err != nil {
		return nil, err
	}
	f := &File{doc: doc}
	if f.reviews, f.maxRev, err = index(doc.Array("reviews"), "reviews", "review_id"); err != nil {
		return nil, err
	}
	if f.fixes, f.maxFix, err = index(doc.Array("fixes"), "fixes", "fix_id"); err != nil {
		return nil, err
	}
	if err := checkShape(doc, f); err != nil {
		return nil, err
	}
	return f, nil
}

// The shape of reviews.json, as readers and writers both check it.
var (
	topShape = []jsondoc.Want{
		{Key: "schema_version", Type: jsondoc.TypeString, Null: true},
		{Key: "reviews", Type: jsondoc.TypeArray, Required: true},
		{Key: "fixes", Type: jsondoc.TypeArray}, // the predecessor wrote none before the first fix
	}
	reviewShape = []jsondoc.Want{
		{Key: "feature_id", Type: jsondoc.TypeString, Null: true},
		{Key: "branch", Type: jsondoc.TypeString, Null: true},
		{Key: "agent_type", Type: jsondoc.TypeString, Null: true},
		{Key: "timestamp", Type: jsondoc.TypeString, Null: true},
		{Key: "verdict", Type: jsondoc.TypeString, Enum: verdictWords()},
		{Key: "issues", Type: jsondoc.TypeObject, Also: jsondoc.TypeArray, Null: true},
		{Key: "commit_range", Type: jsondoc.TypeObject, Null: true},
		{Key: "summary", Type: jsondoc.TypeString, Null: true},
		{Key: "merge_commit", Type: jsondoc.TypeString, Null: true},
	}
	issuesShape = []jsondoc.Want{
		{Key: "critical", Type: jsondoc.TypeArray, Null: true},
		{Key: "major", Type: jsondoc.TypeArray, Null: true},
		{Key: "minor", Type: jsondoc.TypeArray, Null: true},
		{Key: "suggestions", Type: jsondoc.TypeArray, Null: true},
	}
	fixShape = []jsondoc.Want{
		{Key: "review_id", Type: jsondoc.TypeInt, Null: true},
		{Key: "feature_id", Type: jsondoc.TypeString, Null: true},
		{Key: "branch", Type: jsondoc.TypeString, Null: true},
		{Key: "issues_fixed", Type: jsondoc.TypeArray, Null: true},
		{Key: "merged_to_main", Type: jsondoc.TypeBool, Null: true},
		{Key: "pending_review", Type: jsondoc.TypeBool, Null: true},
	}
)

func verdictWords() []string {
	out := append([]string(nil), Verdicts...)
	for a := range verdictAliases {
		out = append(out, a)
	}
	sort.Strings(out[len(Verdicts):])
	return out
}

// checkShape checks the sections a reviews file must have and the types
// of the fields baton reads in each record.
func checkShape(doc *jsondoc.Doc, f *File) error {
	if err := doc.Top.Check("", "baton never writes reviews.json without it; a person restores it from .baton/backup/", topShape); err != nil {
		return err
	}
	rv, fx := doc.Array("reviews"), doc.Array("fixes")
	for i, r := range f.reviews {
		if err := jsondoc.CheckRecord(r, rv.RecordOffset(i), "reviews", i, reviewShape); err != nil {
			return err
		}
		if is := r.Get("issues"); is.IsObject() {
			if err := jsondoc.CheckMembers([]byte(is.Raw), rv.RecordOffset(i)+is.Index, fmt.Sprintf("reviews[%d].issues", i), issuesShape); err != nil {
				return err
			}
		}
	}
	for i, x := range f.fixes {
		if err := jsondoc.CheckRecord(x, fx.RecordOffset(i), "fixes", i, fixShape); err != nil {
			return err
		}
	}
	return nil
}

func views(arr *jsondoc.Array) []gjson.Result {
	elems := arr.Elems()
	out := make([]gjson.Result, len(elems))
	for i, raw := range elems {
		out[i] = gjson.ParseBytes(raw)
	}
	return out
}

// rv and fx return the parsed views, building them on first use.
func (f *File) rv() []gjson.Result {
	if f.reviews == nil {
		f.reviews = views(f.doc.Array("reviews"))
	}
	return f.reviews
}

func (f *File) fx() []gjson.Result {
	if f.fixes == nil {
		f.fixes = views(f.doc.Array("fixes"))
	}
	return f.fixes
}

func index(arr *jsondoc.Array, name, idField string) ([]gjson.Result, int, error) {
	elems := arr.Elems()
	views := make([]gjson.Result, len(elems))
	seen := make(map[int]bool, len(elems))
	max := 0
	for i := range elems {
		r := arr.Parsed(i)
		if !r.IsObject() {
			return nil, 0, arr.Invalid(name, i, "", "each entry must be a JSON object")
		}
		id, ok := jsondoc.PositiveID(r.Get(idField))
		if !ok {
			return nil, 0, arr.Invalid(name, i, idField, "must be a positive whole number (at most 2^53)")
		}
		if seen[id] {
			return nil, 0, arr.Invalid(name, i, idField, "duplicate id %d", id)
		}
		seen[id] = true
		if id > max {
			max = id
		}
		views[i] = r
	}
	return views, max, nil
}

// Bytes encodes the file.
func (f *File) Bytes() []byte { return f.doc.Bytes() }

// NextReviewID is the id the next review gets.
func (f *File) NextReviewID() int { return f.maxRev + 1 }

// NextFixID is the id the next fix gets.
func (f *File) NextFixID() int { return f.maxFix + 1 }

// Reviews returns parsed views of every review, in order.
func (f *File) Reviews() []gjson.Result { return f.rv() }

// Fixes returns parsed views of every fix, in order.
func (f *File) Fixes() []gjson.Result { return f.fx() }

// Review returns review id's view, or NotFound. The records are read from
// the last one back (a review answered is most often a recent one).
func (f *File) Review(id int) (gjson.Result, error) {
	var out gjson.Result
	found := false
	match := func(r gjson.Result) bool {
		found = r.Get("review_id").Int() == int64(id)
		if found {
			out = r
		}
		return !found
	}
	rv := f.rv()
	for i := len(rv) - 1; i >= 0 && match(rv[i]); i-- {
	}
	if found {
		return out, nil
	}
	return gjson.Result{}, errs.New(errs.NotFound, "Review R%d not found in %s (see 'baton reviews list')", id, FileName)
}

// Last returns the last review, or NotFound when there is none.
func (f *File) Last() (gjson.Result, error) {
	last := f.doc.Array("reviews").Last()
	if last == nil {
		return gjson.Result{}, errs.New(errs.NotFound, "No reviews found in %s", FileName)
	}
	return gjson.ParseBytes(last), nil
}

// NewReview is what a reviewer submits.
type NewReview struct {
	AgentType   string
	FeatureName string
	FeatureID   *string
	Branch      *string
	Verdict     string
	Summary     string
	Issues      []PendingIssue
	CommitRange *progress.Range
	Timestamp   string
	Metrics     json.RawMessage // architecture reviews: the seed's metrics object
	Coverage    *float64        // test coverage percent, for the health status
	Decision    json.RawMessage // what the workflow decided on this review
}

// AddReview appends a review with the next id and its issues numbered.
func (f *File) AddReview(in NewReview) (Review, error) {
	id, err := jsondoc.NextID(f.maxRev)
	if err != nil {
		return Review{}, errs.New(errs.Conflict, "%s: %v", FileName, err)
	}
	issues, err := AssignIDs(in.Issues, IssuePrefix(in.AgentType, id))
	if err != nil {
		return Review{}, err
	}
	rv := Review{
		ReviewID: id, FeatureID: in.FeatureID, FeatureName: in.FeatureName, Branch: in.Branch, AgentType: in.AgentType,
		Timestamp: in.Timestamp, CommitRange: in.CommitRange, Verdict: in.Verdict,
		Metrics: in.Metrics, Issues: issues, Summary: in.Summary, Decision: in.Decision,
	}
	if in.AgentType == "ARCHITECTURE" {
		rv.HealthStatus = Health(ReadIssues(gjson.ParseBytes(issues)), in.Coverage)
	}
	raw, err := f.doc.Array("reviews").Append(rv)
	if err != nil {
		return Review{}, err
	}
	if f.reviews != nil {
		f.reviews = append(f.reviews, gjson.ParseBytes(raw))
	}
	f.maxRev = id
	return rv, nil
}

// NewFix is what a FIX agent submits.
type NewFix struct {
	ReviewID       int
	FeatureID      *string
	Branch         *string
	IssuesFixed    []FixedIssue
	IssuesDeferred []json.RawMessage
	TestsAdded     []string
	Timestamp      string
}

// AddFix appends a fix with the next id, answering an existing review
// (which issues it may name is workflow.FixedIssues's rule).
func (f *File) AddFix(in NewFix) (Fix, error) {
	rv, err := f.Review(in.ReviewID)
	if err != nil {
		return Fix{}, err
	}
	fixID, err := jsondoc.NextID(f.maxFix)
	if err != nil {
		return Fix{}, errs.New(errs.Conflict, "%s: %v", FileName, err)
	}
	fix := Fix{
		FixID: fixID, ReviewID: in.ReviewID, FeatureID: in.FeatureID, Branch: in.Branch,
		AgentType: "FIX", Timestamp: in.Timestamp, TestsAdded: in.TestsAdded,
		IssuesDeferred: in.IssuesDeferred, PendingReview: true,
	}
	for _, fi := range in.IssuesFixed {
		fix.IssuesFixed = append(fix.IssuesFixed, jsondoc.Compact(fi))
	}
	if fix.IssuesFixed == nil {
		fix.IssuesFixed = []json.RawMessage{}
	}
	if fix.IssuesDeferred == nil {
		fix.IssuesDeferred = []json.RawMessage{}
	}
	if fix.TestsAdded == nil {
		fix.TestsAdded = []string{}
	}
	if fix.FeatureID == nil {
		if fid := rv.Get("feature_id"); fid.Type == gjson.String {
			fix.FeatureID = &fid.Str
		}
	}
	if fix.Branch == nil {
		if b := rv.Get("branch"); b.Type == gjson.String {
			fix.Branch = &b.Str
		}
	}
	raw, err := f.doc.Array("fixes").Append(fix)
	if err != nil {
		return Fix{}, err
	}
	if f.fixes != nil {
		f.fixes = append(f.fixes, gjson.ParseBytes(raw))
	}
	f.maxFix = fix.FixID
	return fix, nil
}

// FixCount counts the fixes recorded for a feature or batch since its last
// rejection (a rejected feature is re-implemented and starts its fix cycles
// afresh): a fix counts when its feature ids and the asked ids share one.
func (f *File) FixCount(featureIDs string) int {
	shares := sharesAny(featureIDs)
	after := int64(0)
	rv := f.rv()
	for i := len(rv) - 1; i >= 0; i-- { // the last rejection: looked for from the end
		r := rv[i]
		if shares(r.Get("feature_id").String()) && (VerdictOf(r) == "REJECT" || r.Get("decision.reject").Bool()) {
			after = r.Get("review_id").Int()
			break
		}
	}
	n := 0
	for _, fx := range f.fx() {
		if (after == 0 || fx.Get("review_id").Int() > after) && shares(fx.Get("feature_id").String()) {
			n++
		}
	}
	return n
}

// sharesAny returns whether a batch of feature ids shares one with ids.
func sharesAny(ids string) func(batch string) bool {
	want := map[string]bool{}
	for _, id := range features.SplitIDs(ids) {
		want[id] = true
	}
	return func(batch string) bool {
		for _, id := range features.SplitIDs(batch) {
			if want[id] {
				return true
			}
		}
		return false
	}
}

// Field is one field to set on a stored record.
type Field struct {
	Key   string
	Value any
}

// MarkMerged marks fix id merged to main at stamp, with its merge commit
// when known.
func (f *File) MarkMerged(id int, stamp string, mergeCommit *string) error {
	fields := []Field{{"merged_to_main", true}, {"pending_review", false}, {"merged_at", stamp}}
	if mergeCommit != nil {
		fields = append(fields, Field{"merge_commit", *mergeCommit})
	}
	if !f.setFields("fixes", "fix_id", f.fx(), id, fields) {
		return errs.New(errs.NotFound, "Fix %s not found in %s (see 'baton reviews list')", FixLabel(id), FileName)
	}
	return nil
}

// SetReviewFields sets fields on review id, keeping the rest of the record
// as it is.
func (f *File) SetReviewFields(id int, fields ...Field) error {
	if !f.setFields("reviews", "review_id", f.rv(), id, fields) {
		return errs.New(errs.NotFound, "Review R%d not found in %s (see 'baton reviews list')", id, FileName)
	}
	return nil
}

// setFields sets fields on the record whose idField is id and refreshes its
// view; false when there is no such record.
func (f *File) setFields(array, idField string, views []gjson.Result, id int, fields []Field) bool {
	arr := f.doc.Array(array)
	for i, v := range views {
		if v.Get(idField).Int() != int64(id) {
			continue
		}
		rec, err := arr.Record(i)
		if err != nil {
			return false
		}
		for _, fl := range fields {
			if err := rec.Set(fl.Key, fl.Value); err != nil {
				return false
			}
		}
		arr.Replace(i, rec)
		views[i] = gjson.ParseBytes(arr.Elems()[i])
		return true
	}
	return false
}

// VerdictOf reads a stored review's verdict in the seed's vocabulary (a
// predecessor's APPROVE is PASS).
func VerdictOf(r gjson.Result) string {
	v, err := NormalizeVerdict(r.Get("verdict").String())
	if err != nil {
		return r.Get("verdict").String()
	}
	return v
}

// Merged reports whether a stored review let its features through: a PASS,
// or a fix-cycle-limit decision to merge.
func Merged(r gjson.Result) bool {
	return VerdictOf(r) == "PASS" || r.Get("decision.merge").Bool()
}

// PassedFeatures returns the feature ids that have a passing review (of
// their work: an ARCHITECTURE review passes no feature, whatever it names).
func (f *File) PassedFeatures() map[string]bool {
	out := map[string]bool{}
	for _, r := range f.rv() {
		if !Merged(r) || r.Get("agent_type").String() == "ARCHITECTURE" {
			continue
		}
		for _, id := range features.SplitIDs(r.Get("feature_id").String()) {
			out[id] = true
		}
	}
	return out
}

// MergedSinceArchitecture returns the feature_id (as recorded: one id, a
// batch, or "") of each review after the last architecture review that let
// its features through (see Merged), in order.
func (f *File) MergedSinceArchitecture() []string {
	out := []string{}
	for _, r := range f.rv() {
		switch {
		case r.Get("agent_type").String() == "ARCHITECTURE":
			out = []string{}
		case r.Get("agent_type").String() == "GATE": // the landing queue sent a passed item back: it did not land
			for i := len(out) - 1; i >= 0; i-- {
				if out[i] == r.Get("feature_id").String() {
					out = slices.Delete(out, i, i+1)
					break
				}
			}
		case Merged(r):
			out = append(out, r.Get("feature_id").String())
		}
	}
	return out
}

// BranchFeatures returns the feature ids the reviews of branch named.
func (f *File) BranchFeatures(branch string) []string {
	var out []string
	for _, r := range f.rv() {
		if branch == "" || r.Get("branch").String() != branch {
			continue
		}
		for _, id := range features.SplitIDs(r.Get("feature_id").String()) {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// IssueCount counts a stored review's issues in either form.
func IssueCount(r gjson.Result) int { return len(ReadIssues(r.Get("issues"))) }

// String renders a review's one-line summary as `reviews list` shows it.
func ListLine(r gjson.Result) string {
	feature := r.Get("feature_id").String()
	if feature == "" {
		feature = "ARCHITECTURE"
	}
	return fmt.Sprintf("  R%d: [%s] %s - %s (%d issues)%s", r.Get("review_id").Int(), r.Get("agent_type").String(), feature, r.Get("verdict").String(), IssueCount(r), outcomeOf(r))
}

// outcomeOf says what became of a review when its verdict alone does not:
// merged (a PASS_WITH_COMMENTS or REQUEST_CHANGES review is merged only by
// a fix-cycle-limit decision, which it names) or rejected.
func outcomeOf(r gjson.Result) string {
	switch {
	case r.Get("merge_commit").String() != "":
		s := " - merged as " + r.Get("merge_commit").String()
		if v := VerdictOf(r); v != "PASS" {
			if rule := r.Get("decision.rule").String(); rule != "" {
				s += " by the decision " + rule
			}
		}
		return s
	case r.Get("rejected_at").String() != "":
		return " - rejected"
	}
	return ""
}

// FixListLine renders a fix's one-line summary as `reviews list` shows it.
func FixListLine(x gjson.Result) string {
	feature := x.Get("feature_id").String()
	if feature == "" {
		feature = "ARCHITECTURE"
	}
	state := "VERIFIED"
	if x.Get("pending_review").Bool() {
		state = "PENDING"
	}
	return fmt.Sprintf("  %s: addresses R%d for %s - %d fixed, %d deferred [%s]", FixLabel(int(x.Get("fix_id").Int())), x.Get("review_id").Int(), feature, len(x.Get("issues_fixed").Array()), len(x.Get("issues_deferred").Array()), state)
}

// Health is an architecture review's health status as the seed's table
// decides it: NEEDS_ATTENTION with critical or major issues or coverage
// under 60%, GOOD with coverage over 80%, else FAIR. Unknown coverage
// counts as FAIR when nothing is blocking.
func Health(issues []Issue, coverage *float64) string {
	switch {
	case Blocking(issues), coverage != nil && *coverage < 60:
		return "NEEDS_ATTENTION"
	case coverage != nil && *coverage > 80:
		return "GOOD"
	}
	return "FAIR"
}
