// Package features owns feature_list.json: its shape, its validation, and the
// pure operations on it (next work item, pass, fail, append, statistics).
// It does no I/O; callers hand it the file's bytes and write back Bytes().
package features

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
)

// FileName is the feature list's name in the state directory.
const FileName = "feature_list.json"

// Work-item types as stored in a feature's "type" field. Anything else (or
// no type at all) is an ordinary feature.
const (
	TypeBug      = "bug"
	TypeTechDebt = "tech_debt"
	TypeFeature  = "feature"
)

// Feature is the part of a feature record baton reads. The record itself
// keeps every other field.
type Feature struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Type          string `json:"type,omitempty"`
	Passes        bool   `json:"passes"`
	SourceReview  any    `json:"source_review,omitempty"`
	FailureReason string `json:"failure_reason,omitempty"`
	// DependsOn lists the ids that must pass before the item is started.
	DependsOn []string `json:"depends_on,omitempty"`
}

// Kind returns the work-item filter word (BUG, DEBT, FEAT) for f.
func (f Feature) Kind() string {
	switch f.Type {
	case TypeBug:
		return "BUG"
	case TypeTechDebt:
		return "DEBT"
	}
	return "FEAT"
}

// File is a parsed feature_list.json.
type File struct {
	doc   *jsondoc.Doc
	items []Feature
	index map[string]int
}

// New returns an empty feature list.
func New() *File {
	return &File{doc: jsondoc.NewDoc("features"), index: map[string]int{}}
}

// Parse validates data and returns the feature list. Errors are
// *jsondoc.InvalidError with the offset of the offending value.
func Parse(data []byte) (*File, error) {
	if err := jsondoc.Check(data); err != nil {
		return nil, err
	}
	doc, err := jsondoc.ParseDoc(data, "features")
	if err != nil {
		return nil, err
	}
	if err := doc.Top.Check("", "an empty list is {\"features\": []}", topShape); err != nil {
		return nil, err
	}
	f := &File{doc: doc, index: map[string]int{}}
	arr := doc.Array("features")
	for i, raw := range arr.Elems() {
		item, err := parseItem(raw)
		if err != nil {
			return nil, arr.Invalid("features", i, err.field, "%s", err.msg)
		}
		if err := jsondoc.CheckRecord(arr.Parsed(i), arr.RecordOffset(i), "features", i, itemShape); err != nil {
			return nil, err
		}
		if _, dup := f.index[item.ID]; dup {
			return nil, arr.Invalid("features", i, "id", "duplicate feature id %q", item.ID)
		}
		f.index[item.ID] = i
		f.items = append(f.items, item)
	}
	if i, msg := badDependencies(f.items, 0); msg != "" {
		return nil, arr.Invalid("features", i, "depends_on", "%s", msg)
	}
	return f, nil
}

// The shape of feature_list.json, as readers and writers both check it.
var (
	topShape  = []jsondoc.Want{{Key: "features", Type: jsondoc.TypeArray, Required: true}}
	itemShape = []jsondoc.Want{
		{Key: "name", Type: jsondoc.TypeString, Null: true},
		{Key: "type", Type: jsondoc.TypeString, Null: true},
		{Key: "failure_reason", Type: jsondoc.TypeString, Null: true},
		{Key: "depends_on", Type: jsondoc.TypeArray, Null: true},
	}
)

type fieldError struct{ field, msg string }

func parseItem(raw []byte) (item Feature, ferr *fieldError) {
	r := gjson.ParseBytes(raw)
	if !r.IsObject() {
		return Feature{}, &fieldError{"", "a feature must be a JSON object"}
	}
	var name, typ, passes, id, source, reason, deps gjson.Result
	r.ForEach(func(k, v gjson.Result) bool {
		var to *gjson.Result
		switch k.Str {
		case "name":
			to = &name
		case "type":
			to = &typ
		case "passes":
			to = &passes
		case "id":
			to = &id
		case "source_review":
			to = &source
		case "failure_reason":
			to = &reason
		case "depends_on":
			to = &deps
		}
		if to != nil && !to.Exists() { // the first of a key given twice counts
			*to = v
		}
		return true
	})
	item = Feature{Name: name.String(), Type: typ.String()}
	switch passes.Type {
	case gjson.True:
		item.Passes = true
	case gjson.False, gjson.Null:
	default:
		return Feature{}, &fieldError{"passes", "passes must be true or false"}
	}
	if item.DependsOn, ferr = dependsOn(deps); ferr != nil {
		return item, ferr
	}
	if id.Type != gjson.String || strings.TrimSpace(id.Str) == "" {
		return item, &fieldError{"id", "every feature needs a non-empty string id"}
	}
	item.ID = id.Str
	if source.Exists() {
		item.SourceReview = source.Value()
	}
	item.FailureReason = reason.String()
	return item, nil
}

// dependsOn reads an item's depends_on: absent, null or a list of ids.
func dependsOn(v gjson.Result) ([]string, *fieldError) {
	if !v.Exists() || v.Type == gjson.Null {
		return nil, nil
	}
	bad := &fieldError{"depends_on", "depends_on must be a list of ids, such as [\"F001\", \"F002\"]"}
	if !v.IsArray() {
		return nil, bad
	}
	var ids []string
	for _, e := range v.Array() {
		if e.Type != gjson.String || strings.TrimSpace(e.Str) == "" {
			return nil, bad
		}
		ids = append(ids, strings.Clone(e.Str))
	}
	return ids, nil
}

// Bytes encodes the file.
func (f *File) Bytes() []byte { return f.doc.Bytes() }

// All returns every feature in file order.
func (f *File) All() []Feature {
	return append([]Feature(nil), f.items...)
}

// Raw returns the stored record of id.
func (f *File) Raw(id string) ([]byte, bool) {
	i, ok := f.index[id]
	if !ok {
		return nil, false
	}
	return f.doc.Array("features").Elems()[i], true
}

// Get returns the feature id, or a NotFound error.
func (f *File) Get(id string) (Feature, error) {
	i, ok := f.index[id]
	if !ok {
		return Feature{}, errs.New(errs.NotFound, "Feature %s not found in %s", id, FileName)
	}
	return f.items[i], nil
}

// Has reports whether id exists.
func (f *File) Has(id string) bool { _, ok := f.index[id]; return ok }

// SplitIDs splits a batch such as "F001, F002" into its ids, each once.
func SplitIDs(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// BadID says what is wrong with a new item's id ("" when nothing): a comma
// or white space in it would split it into other ids wherever ids are
// listed together ("F001,F002"), so that an item named "F002,DEBT-009"
// would stand for F002 in a review or a merge.
func BadID(id string) string {
	if i := strings.IndexFunc(id, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }); i >= 0 {
		r, _ := utf8.DecodeRuneInString(id[i:])
		return fmt.Sprintf("contains %q at byte %d: ids are single words such as F001, BUG-001 or DEBT-001 (no commas or spaces)", r, i)
	}
	return ""
}

// BadIDs lists the items whose ids BadID refuses, each with the reason.
func (f *File) BadIDs() []string {
	var out []string
	for _, it := range f.items {
		if msg := BadID(it.ID); msg != "" {
			out = append(out, fmt.Sprintf("%q %s", it.ID, msg))
		}
	}
	return out
}

// CheckIDs returns a NotFound error naming every id of ids not in the list.
func (f *File) CheckIDs(ids []string) error {
	var missing []string
	for _, id := range ids {
		if !f.Has(id) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return errs.New(errs.NotFound, "Features not found: %s (see 'baton features list')", strings.Join(missing, ", "))
	}
	return nil
}

// NormalizeKind maps a -t/--type argument to BUG, DEBT or FEAT.
func NormalizeKind(t string) (string, error) {
	switch strings.ToUpper(strings.TrimSpace(t)) {
	case "BUG", "BUGS":
		return "BUG", nil
	case "DEBT", "TECH_DEBT":
		return "DEBT", nil
	case "FEAT", "FEATURE", "FEATURES":
		return "FEAT", nil
	}
	return "", errs.New(errs.Usage, "--type: must be FEAT, BUG or DEBT, got %q", t)
}

// Pending returns the features not passing, optionally of one kind, in file
// order.
func (f *File) Pending(kind string) []Feature {
	var out []Feature
	for _, it := range f.items {
		if !it.Passes && (kind == "" || it.Kind() == kind) {
			out = append(out, it)
		}
	}
	return out
}

// PendingIDs returns the ids of the items not passing, by kind (BUG,
// DEBT, FEAT), each in file order: Pending without the items' other
// fields.
func (f *File) PendingIDs() map[string][]string {
	out := map[string][]string{}
	for _, it := range f.items {
		if !it.Passes {
			out[it.Kind()] = append(out[it.Kind()], it.ID)
		}
	}
	return out
}

// SetPasses marks every id passing (or failing) in one step: if any id is
// unknown nothing changes. It returns the ids whose value was already the
// requested one.
func (f *File) SetPasses(ids []string, passes bool, stamp, reason string) (already []string, err error) {
	if len(ids) == 0 {
		return nil, errs.New(errs.Usage, "no feature ids given")
	}
	if err := f.CheckIDs(ids); err != nil {
		return nil, err
	}
	arr := f.doc.Array("features")
	done := map[string]bool{}
	for _, id := range ids {
		if done[id] {
			continue
		}
		done[id] = true
		i := f.index[id]
		if f.items[i].Passes == passes {
			already = append(already, id)
		}
		rec, err := arr.Record(i)
		if err != nil {
			return nil, err
		}
		if err := setPassFields(rec, passes, stamp, reason); err != nil {
			return nil, err
		}
		arr.Replace(i, rec)
		f.items[i].Passes = passes
		if !passes {
			f.items[i].FailureReason = reason
		}
	}
	return already, nil
}

func setPassFields(rec *jsondoc.Object, passes bool, stamp, reason string) error {
	if err := rec.Set("passes", passes); err != nil {
		return err
	}
	if passes {
		return rec.Set("passed_at", stamp)
	}
	if err := rec.Set("failed_at", stamp); err != nil {
		return err
	}
	return rec.Set("failure_reason", reason)
}

// NextID returns the next free id of a kind: FEAT-001, BUG-001, DEBT-001.
// The predecessor's F001 ids count toward FEAT.
func (f *File) NextID(kind string) string {
	ids := make([]string, len(f.items))
	for i, it := range f.items {
		ids[i] = it.ID
	}
	return nextID(kind, ids)
}

func nextID(kind string, ids []string) string {
	prefix := kind + "-"
	max := 0
	for _, id := range ids {
		var num string
		switch {
		case strings.HasPrefix(id, prefix):
			num = id[len(prefix):]
		case kind == "FEAT" && strings.HasPrefix(id, "F") && !strings.HasPrefix(id, "FEAT-"):
			num = id[1:]
		default:
			continue
		}
		if n, err := strconv.Atoi(num); err == nil && n > max {
			max = n
		}
	}
	return fmt.Sprintf("%s%03d", prefix, max+1)
}

// Append adds entries (JSON objects) to the list, each tagged with source.
// An entry without an id gets the next id of its type; a duplicate id is a
// usage error naming the entry. All or nothing.
func (f *File) Append(entries [][]byte, source string) ([]string, error) {
	recs := make([]*jsondoc.Object, len(entries))
	items := make([]Feature, len(entries))
	var taken []string
	for _, it := range f.items {
		taken = append(taken, it.ID)
	}
	seen := map[string]bool{}
	for i, raw := range entries { // first the ids given
		if err := jsondoc.Check(raw); err != nil {
			return nil, errs.New(errs.Usage, "--entries: entry %d: %v", i, err)
		}
		rec, err := jsondoc.ParseObject(raw, jsondoc.RecordDepth)
		if err != nil {
			return nil, errs.New(errs.Usage, "--entries: entry %d: %v", i, err)
		}
		item, ferr := parseItem(raw)
		if ferr != nil && ferr.field != "id" {
			return nil, errs.New(errs.Usage, "--entries: entry %d: %s", i, ferr.msg)
		}
		// the same checks a reader makes: what is appended always reads back
		if err := jsondoc.CheckMembers(raw, 0, fmt.Sprintf("entry %d", i), itemShape); err != nil {
			return nil, errs.New(errs.Usage, "--entries: %v", err)
		}
		if ferr != nil {
			if id := gjson.GetBytes(raw, "id"); id.Exists() && id.Type != gjson.Null {
				return nil, errs.New(errs.Usage, "--entries: entry %d: %s", i, ferr.msg)
			}
			rec.Members = removeMember(rec.Members, "id") // a null id is replaced
		} else if at := jsondoc.ControlAt(item.ID); at >= 0 {
			return nil, errs.New(errs.Usage, "--entries: entry %d: feature id %+q contains a control character at byte %d: ids may not contain line breaks, escape sequences or other control characters", i, item.ID, at)
		} else if msg := BadID(item.ID); msg != "" {
			return nil, errs.New(errs.Usage, "--entries: entry %d: feature id %q %s", i, item.ID, msg)
		} else if f.Has(item.ID) || seen[item.ID] {
			return nil, errs.New(errs.Usage, "--entries: entry %d: feature id %q already exists", i, item.ID)
		} else {
			seen[item.ID] = true
			taken = append(taken, item.ID)
		}
		recs[i], items[i] = rec, item
	}
	for i := range items { // then ids for the entries that had none
		if items[i].ID != "" {
			continue
		}
		items[i].ID = nextID(items[i].Kind(), taken)
		taken = append(taken, items[i].ID)
		recs[i].Members = append([]jsondoc.Member{{Key: "id", Raw: []byte(fmt.Sprintf("%q", items[i].ID))}}, recs[i].Members...)
	}
	if i, msg := badDependencies(append(slices.Clone(f.items), items...), len(f.items)); msg != "" {
		return nil, errs.New(errs.Usage, "--entries: entry %d: %s; depends_on names ids of the list or of these entries, with no cycle", i-len(f.items), msg)
	}
	added := make([]string, len(items))
	arr := f.doc.Array("features")
	for i, rec := range recs {
		if err := rec.Set("source_appspec", source); err != nil {
			return nil, err
		}
		if !rec.Has("passes") {
			if err := rec.Set("passes", false); err != nil {
				return nil, err
			}
		}
		f.index[items[i].ID] = len(f.items)
		f.items = append(f.items, items[i])
		arr.AppendRaw(rec.Bytes())
		added[i] = items[i].ID
	}
	f.refreshTotals()
	return added, nil
}

func removeMember(ms []jsondoc.Member, key string) []jsondoc.Member {
	out := ms[:0]
	for _, m := range ms {
		if m.Key != key {
			out = append(out, m)
		}
	}
	return out
}

// refreshTotals keeps the predecessor's total_features/total_bugs fields
// in step with the list when the file carries them.
func (f *File) refreshTotals() {
	st := f.Stats()
	top := f.doc.Top
	if top.Has("total_features") {
		_ = top.Set("total_features", st.Features.Total)
	}
	if top.Has("total_bugs") {
		_ = top.Set("total_bugs", st.Bugs.Total)
	}
}

// Count is a passing/total pair.
type Count struct {
	Passing int `json:"passing"`
	Total   int `json:"total"`
}

// Stats summarises the list.
type Stats struct {
	Features Count  `json:"features"`
	Bugs     Count  `json:"bugs"`
	TechDebt Count  `json:"tech_debt"`
	All      Count  `json:"total"`
	Percent  int    `json:"percent"`
	Next     string `json:"next"`
}

// Stats counts the list by kind and names the next work item with the
// predecessor's priority: bugs, then accumulated debt, then features.
func (f *File) Stats() Stats { return f.StatsWith(DefaultDebtThreshold) }

// StatsWith is Stats with the pending tech-debt count at which GLOBAL_FIX
// comes before features.
func (f *File) StatsWith(debtThreshold int) Stats {
	var s Stats
	for _, it := range f.items {
		c := &s.Features
		switch it.Kind() {
		case "BUG":
			c = &s.Bugs
		case "DEBT":
			c = &s.TechDebt
		}
		c.Total++
		s.All.Total++
		if it.Passes {
			c.Passing++
			s.All.Passing++
		}
	}
	if s.All.Total > 0 {
		s.Percent = 100 * s.All.Passing / s.All.Total
	}
	s.Next = f.nextWork(debtThreshold)
	return s
}

// DefaultDebtThreshold is the pending tech-debt count at which the list
// says GLOBAL_FIX comes next.
const DefaultDebtThreshold = 5

func (f *File) nextWork(debtThreshold int) string {
	pending := f.PendingIDs()
	bugs, debt, feats := pending["BUG"], pending["DEBT"], pending["FEAT"]
	switch {
	case len(bugs) > 0:
		return bugs[0] + " (bug - priority)"
	case len(debt) >= debtThreshold:
		return fmt.Sprintf("GLOBAL_FIX (%d tech debt items accumulated)", len(debt))
	case len(feats) > 0:
		return feats[0]
	case len(debt) > 0:
		return debt[0] + " (tech debt)"
	}
	return "All done!"
}

// Passing returns the ids of passing features, sorted.
func (f *File) Passing() []string {
	var out []string
	for _, it := range f.items {
		if it.Passes {
			out = append(out, it.ID)
		}
	}
	sort.Strings(out)
	return out
}
