package reviews

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/features"
)

// The index: the facts add-review and add-fix decide on (each feature's
// fix cycles and whether a review passed it, the reviews merged since the
// last architecture review, the features each branch's reviews named),
// kept beside reviews.json so that a write reads them instead of every
// review and fix. It is derived from the file alone and valid only for the
// exact version whose stamp carries its digest (Facts): any other index —
// stale, lost, edited by hand — is ignored and rebuilt from the records.
//
// The digest is that of the index's head, which holds the digest of each
// of its other parts (the branches, the recent branches, the features): a
// write checks only the parts it reads, when it first reads them, and
// hashes again only the parts it changes; a part it neither reads nor
// changes keeps its digest and its bytes as they were — one edited
// meanwhile still does not match that digest, for whichever write reads
// it next. A part that does not match its digest when read makes the index
// built again from the records. The features each branch's reviews named
// are kept in two parts: a review adds its branch's to the recent ones,
// which it reads and hashes, not the others (every review has a branch,
// most a new one); the recent part is folded into the other when it has
// grown to foldSize. A filter over the branches part's keys (bloom.go),
// built at each fold, tells a new branch absent without reading that part.

// IndexName is where the index of reviews.json lives, beside the stamps.
const IndexName = ".baton/reviews-index"

// indexVersion changes whenever what the index holds changes.
const indexVersion = 3

// Index is the index of one version of reviews.json.
type Index struct {
	head indexHead
	// features (id → FeatureFacts) and branches (branch → the feature ids
	// its reviews named; those named since the last fold in recent) are
	// the parts that grow: kept as read and looked up by key, with the
	// entries changed since on top.
	features, branches, recent lazyObject
	// filter is the part holding the filter over the branches part's keys
	// ({} when there is none), decoded into bloom on first use (filtered)
	filter   lazyObject
	bloom    *bloom
	filtered bool
	// the entries read or changed, decoded (changed: dirty), and the
	// passed features as a set: encoded into the objects by segments
	fcache map[string]FeatureFacts
	bcache map[string][]string // the branches part's entries read
	rcache map[string][]string // the recent part's entries read or changed
	dirty  map[string]bool     // "f"+id, "r"+branch
	passed map[string]bool
	// checked says which parts (partBranches, ...) were read against
	// their digest in the head (or built); broken, that one did not match
	// it: the index must then be built from the records.
	checked [numParts]bool
	broken  bool
}

// The parts of the index besides its head, in the order they are encoded
// and numbered in indexHead.Parts.
const (
	partBranches = iota
	partFilter
	partRecent
	partFeatures
	numParts
)

// foldSize is the size of the recent branches' part at which a write
// folds it into the branches' part (a variable for the tests).
var foldSize = 32 << 10

// indexHead is the index's first line.
type indexHead struct {
	Version int `json:"v"`
	Reviews int `json:"reviews"` // the records it covers
	Fixes   int `json:"fixes"`
	// Ordered says the reviews' ids increase in file order (baton appends
	// them so; a predecessor's file may not).
	Ordered bool `json:"ordered"`
	MaxID   int  `json:"max_id"` // the largest review id
	// SinceArch is the feature_id of each review that let its features
	// through after the last architecture review, in order.
	SinceArch []string `json:"since_arch"`
	// Passed are the features a review of their work let through.
	Passed []string `json:"passed"`
	// Parts are the digests of the other parts as encoded (Digest).
	Parts [numParts]string `json:"parts"`
	// Sizes are the parts' lengths as encoded, so that a write finds the
	// parts without scanning them for the newlines between them.
	Sizes [numParts]int `json:"sizes"`
}

// FeatureFacts are the facts of one feature id, encoded as one list of
// numbers: the Reject pair, then the Fixes pairs.
type FeatureFacts struct {
	// Reject is the position in the reviews (from 1) and the id of the
	// last review rejecting it ({0, 0}: none).
	Reject [2]int
	// Fixes are the position in the fixes (from 1) and the review id of
	// the fixes naming it; in an ordered file, only those after its last
	// rejection (the others never count again).
	Fixes [][2]int
}

func (ff FeatureFacts) MarshalJSON() ([]byte, error) {
	flat := append(make([]int, 0, 2+2*len(ff.Fixes)), ff.Reject[:]...)
	for _, e := range ff.Fixes {
		flat = append(flat, e[:]...)
	}
	return json.Marshal(flat)
}

func (ff *FeatureFacts) UnmarshalJSON(b []byte) error {
	var flat []int
	if err := json.Unmarshal(b, &flat); err != nil {
		return err
	}
	if len(flat) < 2 || len(flat)%2 != 0 {
		return fmt.Errorf("feature facts: %d numbers", len(flat))
	}
	*ff = FeatureFacts{Reject: [2]int{flat[0], flat[1]}}
	for i := 2; i < len(flat); i += 2 {
		ff.Fixes = append(ff.Fixes, [2]int{flat[i], flat[i+1]})
	}
	return nil
}

func newIndex() *Index {
	return &Index{head: indexHead{Version: indexVersion, Ordered: true, SinceArch: []string{}, Passed: []string{}},
		features: lazyObject{raw: []byte("{}")}, branches: lazyObject{raw: []byte("{}")}, recent: lazyObject{raw: []byte("{}")},
		filter: lazyObject{raw: []byte("{}")}, checked: [numParts]bool{true, true, true, true}}
}

func (x *Index) object(i int) *lazyObject {
	return [numParts]*lazyObject{&x.branches, &x.filter, &x.recent, &x.features}[i]
}

// mayHoldBranch is false when the filter tells branch absent from the
// branches part (checked against its digest like any part: a filter
// edited by hand breaks the index, which is then built from the records).
func (x *Index) mayHoldBranch(branch string) bool {
	if !x.filtered {
		x.filtered = true
		x.bloom = decodeBloom(x.part(partFilter).get("b"))
	}
	return x.bloom == nil || x.bloom.mayHold(branch)
}

// part returns part i, checked against its digest on first use; one that
// does not match is read as empty, and the index marked broken.
func (x *Index) part(i int) *lazyObject {
	o := x.object(i)
	if !x.checked[i] {
		x.checked[i] = true
		if Digest(o.raw) != x.head.Parts[i] {
			x.broken = true
			*o = lazyObject{raw: []byte("{}")}
		}
	}
	return o
}

func (x *Index) feature(id string) FeatureFacts {
	if ff, ok := x.fcache[id]; ok {
		return ff
	}
	var ff FeatureFacts
	if raw := x.part(partFeatures).get(id); raw != nil {
		_ = json.Unmarshal(raw, &ff) // baton wrote it (the digest says so)
	}
	if x.fcache == nil {
		x.fcache = map[string]FeatureFacts{}
	}
	x.fcache[id] = ff
	return ff
}

func (x *Index) setFeature(id string, ff FeatureFacts) {
	x.feature(id) // the cache exists
	x.fcache[id] = ff
	x.markDirty("f" + id)
}

func (x *Index) markDirty(key string) {
	if x.dirty == nil {
		x.dirty = map[string]bool{}
	}
	x.dirty[key] = true
}

// flush encodes the entries changed since into the objects.
func (x *Index) flush() {
	for key := range x.dirty {
		if id, ok := strings.CutPrefix(key, "f"); ok {
			raw, _ := json.Marshal(x.fcache[id])
			x.part(partFeatures).set(id, raw)
		} else {
			raw, _ := json.Marshal(x.rcache[key[1:]])
			x.part(partRecent).set(key[1:], raw)
		}
	}
	x.dirty = nil
}

// buildIndex derives the index from every record.
func buildIndex(rv, fx []gjson.Result) *Index {
	x := newIndex()
	for i := 1; i < len(rv); i++ {
		if rv[i].Get("review_id").Int() <= rv[i-1].Get("review_id").Int() {
			x.head.Ordered = false
		}
	}
	for _, r := range rv {
		x.addReview(r)
	}
	for _, f := range fx {
		x.addFix(f)
	}
	return x
}

// addReview takes in the review appended at the end; false when the index
// cannot (an ordered file given a review whose id is not the largest).
func (x *Index) addReview(r gjson.Result) bool {
	h := &x.head
	h.Reviews++
	rf := readReview(r)
	pos, id := h.Reviews, rf.id
	if id <= h.MaxID && h.Ordered {
		return false
	}
	h.MaxID = max(h.MaxID, id)
	ids := features.SplitIDs(rf.featureID)
	if rf.branch != "" && len(ids) > 0 {
		x.addBranch(rf.branch, ids)
	}
	if rf.verdict == "REJECT" || rf.decision.Get("reject").Bool() {
		for _, f := range ids {
			ff := x.feature(f)
			ff.Reject = [2]int{pos, id}
			x.setFeature(f, x.pruned(ff))
		}
	}
	if rf.agent == "ARCHITECTURE" {
		h.SinceArch = []string{}
		return true
	}
	if rf.verdict == "PASS" || rf.decision.Get("merge").Bool() { // Merged
		h.SinceArch = append(h.SinceArch, rf.featureID)
		if x.passed == nil {
			x.passed = map[string]bool{}
			for _, f := range h.Passed {
				x.passed[f] = true
			}
		}
		for _, f := range ids {
			if !x.passed[f] {
				x.passed[f] = true
				h.Passed = append(h.Passed, f)
			}
		}
	}
	return true
}

// reviewFields are the fields of a review the index reads.
type reviewFields struct {
	id                                int
	featureID, branch, agent, verdict string
	decision                          gjson.Result
}

var reviewKeys = []string{"review_id", "feature_id", "branch", "agent_type", "verdict", "decision"}

// readReview reads them in one pass over the record, as r.Get would
// (VerdictOf for the verdict).
func readReview(r gjson.Result) reviewFields {
	var rf reviewFields
	var verdict gjson.Result
	var seen [6]bool // the first of equal keys, as Get takes it
	r.ForEach(func(k, v gjson.Result) bool {
		i := slices.Index(reviewKeys, k.Str)
		if i < 0 || seen[i] {
			return true
		}
		seen[i] = true
		switch i {
		case 0:
			rf.id = int(v.Int())
		case 1:
			rf.featureID = v.String()
		case 2:
			rf.branch = v.String()
		case 3:
			rf.agent = v.String()
		case 4:
			verdict = v
		case 5:
			rf.decision = v
		}
		return true
	})
	rf.verdict = verdict.String()
	if n, err := NormalizeVerdict(rf.verdict); err == nil {
		rf.verdict = n
	}
	return rf
}

// pruned drops, in an ordered file, the fixes no count can take again:
// those answering reviews up to the feature's last rejection.
func (x *Index) pruned(ff FeatureFacts) FeatureFacts {
	if x.head.Ordered {
		ff.Fixes = slices.DeleteFunc(ff.Fixes, func(e [2]int) bool { return e[1] <= ff.Reject[1] })
	}
	return ff
}

// addFix takes in the fix appended at the end.
func (x *Index) addFix(f gjson.Result) {
	x.head.Fixes++
	rid := int(f.Get("review_id").Int())
	for _, id := range features.SplitIDs(f.Get("feature_id").String()) {
		ff := x.feature(id)
		if x.head.Ordered && ff.Reject[1] > 0 && rid <= ff.Reject[1] {
			continue
		}
		ff.Fixes = append(ff.Fixes, [2]int{x.head.Fixes, rid})
		x.setFeature(id, ff)
	}
}

// branchFeatures returns the feature ids the reviews of branch named, in
// the order they were first named.
func (x *Index) branchFeatures(branch string) []string {
	ids, ok := x.bcache[branch]
	if !ok {
		if x.mayHoldBranch(branch) { // else absent: the part is not read
			if raw := x.part(partBranches).get(branch); raw != nil {
				_ = json.Unmarshal(raw, &ids)
			}
		}
		if x.bcache == nil {
			x.bcache = map[string][]string{}
		}
		x.bcache[branch] = ids
	}
	return union(ids, x.recentFeatures(branch))
}

// recentFeatures are the feature ids of branch in the recent part.
func (x *Index) recentFeatures(branch string) []string {
	if ids, ok := x.rcache[branch]; ok {
		return ids
	}
	var ids []string
	if raw := x.part(partRecent).get(branch); raw != nil {
		_ = json.Unmarshal(raw, &ids)
	}
	if x.rcache == nil {
		x.rcache = map[string][]string{}
	}
	x.rcache[branch] = ids
	return ids
}

// union is a then the ids of b not in a, as a new list (nil when both are
// empty).
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, id := range b {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// addBranch adds ids to the features branch's reviews named, in the
// recent part (which may repeat ids the other part holds).
func (x *Index) addBranch(branch string, ids []string) {
	cur := x.recentFeatures(branch)
	grown := union(cur, ids)
	if cur != nil && len(grown) == len(cur) {
		return
	}
	x.rcache[branch] = grown
	x.markDirty("r" + branch)
}

// fold moves the recent part's entries into the branches' part.
func (x *Index) fold() {
	recent := x.part(partRecent)
	var keys []string
	for k := range x.rcache {
		keys = append(keys, k)
	}
	for _, k := range recent.keys() {
		if _, ok := x.rcache[k]; !ok {
			keys = append(keys, k)
		}
	}
	branches := x.part(partBranches)
	for _, k := range keys {
		if len(x.recentFeatures(k)) == 0 { // a branch looked up, not added
			continue
		}
		merged := x.branchFeatures(k)
		raw, _ := json.Marshal(merged)
		branches.set(k, raw)
		x.bcache[k] = merged
	}
	*recent = lazyObject{raw: []byte("{}")}
	x.rcache, x.head.Parts[partRecent] = nil, ""
	// the filter over every key the branches part now holds
	x.filter = lazyObject{raw: encodeBloom(append(branches.keys(), slices.Collect(maps.Keys(branches.over))...))}
	x.bloom, x.filtered, x.checked[partFilter], x.head.Parts[partFilter] = nil, false, true, ""
}

// fixCount counts as File.FixCount documents.
func (x *Index) fixCount(featureIDs string) int {
	ids := features.SplitIDs(featureIDs)
	facts := make([]FeatureFacts, len(ids))
	last := [2]int{}
	for i, id := range ids {
		if facts[i] = x.feature(id); facts[i].Reject[0] > last[0] {
			last = facts[i].Reject
		}
	}
	after := last[1]
	seen := map[int]bool{}
	for _, ff := range facts {
		for _, e := range ff.Fixes {
			if after == 0 || e[1] > after {
				seen[e[0]] = true
			}
		}
	}
	return len(seen)
}

// segments encodes the index in pieces, one line each: its branches, its
// recent branches, its features, then its head, and returns the digest
// that names it (that of its head). The parts that grow come first and
// change least (a new branch is added at the end of the recent ones), so
// that a commit patches the index from there on; pieces unchanged are the
// bytes read, not copies, and a part unchanged keeps its digest.
func (x *Index) segments() ([][]byte, string) {
	x.flush()
	if x.recent.size() >= foldSize {
		x.fold()
	}
	var out [][]byte
	for i := range numParts {
		o := x.object(i)
		piece := o.segments()
		if x.checked[i] && (len(o.over) > 0 || x.head.Parts[i] == "") {
			x.head.Parts[i] = Digest(piece...)
		}
		x.head.Sizes[i] = 0
		for _, p := range piece {
			x.head.Sizes[i] += len(p)
		}
		out = append(append(out, piece...), []byte("\n"))
	}
	head, _ := json.Marshal(x.head)
	return append(out, head), Digest(head)
}

// parseIndex reads an encoded index whose head hashes to digest, the one
// the stamp vouched for (nil when it is not one). Its other parts are
// checked when first read (part).
func parseIndex(data []byte, digest string) *Index {
	h := bytes.LastIndexByte(data, '\n')
	if h < 0 || Digest(data[h+1:]) != digest {
		return nil
	}
	x := &Index{}
	if json.Unmarshal(data[h+1:], &x.head) != nil || x.head.Version != indexVersion || x.head.SinceArch == nil || x.head.Passed == nil {
		return nil
	}
	lines := x.head.lines(data[:h])
	if lines == nil {
		return nil
	}
	for i, l := range lines {
		if len(l) < 2 || l[0] != '{' || l[len(l)-1] != '}' {
			return nil
		}
		x.object(i).raw = l
	}
	return x
}

// lines splits the parts of an encoded index, before its head: at the
// sizes the head gives (a part is then not scanned: a newline in one,
// which baton never writes, leaves it not matching its digest when it is
// read), else at the newlines between them. Nil when there are fewer.
func (h indexHead) lines(data []byte) [][]byte {
	lines := make([][]byte, numParts)
	at := 0
	for i, n := range h.Sizes {
		if n < 0 || n > len(data)-at { // past the end (a sum that overflows too)
			at = -1
			break
		}
		end := at + n
		if i < numParts-1 && (end >= len(data) || data[end] != '\n') {
			at = -1
			break
		}
		lines[i], at = data[at:end], end+1
	}
	if at == len(data)+1 {
		return lines
	}
	if lines = bytes.SplitN(data, []byte("\n"), numParts); len(lines) != numParts {
		return nil
	}
	return lines
}

// IndexDigest is how the stamp of reviews.json names an encoded index:
// the digest of its head ("" when it has none).
func IndexDigest(encoded []byte) string {
	i := bytes.LastIndexByte(encoded, '\n')
	if i < 0 {
		return ""
	}
	return Digest(encoded[i+1:])
}

// Digest is the sha256 of the pieces given, in hex: of the index's head,
// how the stamp of reviews.json names the index of its version; of each
// other part, how the head names it.
func Digest(pieces ...[]byte) string {
	h := sha256.New()
	for _, p := range pieces {
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// lazyObject is a JSON object of entries keyed by string, as encoded by
// encode, whose values hold no object (so that a key is found by its
// text): looked up in place, with the entries set since kept apart until
// it is encoded again (a change splices its entry, never re-encoding the
// rest).
type lazyObject struct {
	raw  []byte
	over map[string]json.RawMessage
}

func (o *lazyObject) get(key string) json.RawMessage {
	if v, ok := o.over[key]; ok {
		return v
	}
	at, end, ok := o.find(key)
	if !ok {
		return nil
	}
	return o.raw[at:end]
}

// size is about the length of the object encoded (the entries set since
// counted whole, as if added).
func (o *lazyObject) size() int {
	n := len(o.raw)
	for k, v := range o.over {
		n += len(k) + len(v) + 4
	}
	return n
}

// keys are the keys of the entries as read.
func (o *lazyObject) keys() []string {
	var out []string
	gjson.ParseBytes(o.raw).ForEach(func(k, _ gjson.Result) bool {
		out = append(out, k.Str)
		return true
	})
	return out
}

func (o *lazyObject) set(key string, val json.RawMessage) {
	if o.over == nil {
		o.over = map[string]json.RawMessage{}
	}
	o.over[key] = val
}

// find returns the range of key's value in raw. Keys are written by
// json.Marshal (which spells a valid U+FFFD as itself and invalid UTF-8
// as the escape \ufffd: a key asked for with invalid UTF-8 is none of the
// records'), so an entry is found by its encoded key, as a key: right
// after '{' or ',' (a quote inside a string is escaped, so never follows
// either) and before ':'.
func (o *lazyObject) find(key string) (at, end int, ok bool) {
	k, _ := json.Marshal(key)
	k = append(k, ':')
	for from := 0; ; {
		i := bytes.Index(o.raw[from:], k)
		if i < 0 {
			return 0, 0, false
		}
		i += from
		if c := o.raw[i-1]; c == '{' || c == ',' {
			at = i + len(k)
			n := valueLen(o.raw[at:])
			return at, at + n, n > 0
		}
		from = i + 1
	}
}

// segments encodes the object with the entries set since, in pieces:
// the bytes read, with each entry set spliced in at its place and the new
// ones added at the end (in key order).
func (o *lazyObject) segments() [][]byte {
	if len(o.over) == 0 {
		return [][]byte{o.raw}
	}
	type splice struct {
		at, end int
		val     []byte
	}
	var splices []splice
	var added []byte
	for _, k := range slices.Sorted(maps.Keys(o.over)) {
		if at, end, ok := o.find(k); ok {
			splices = append(splices, splice{at, end, o.over[k]})
			continue
		}
		if len(added) > 0 || len(o.raw) > 2 {
			added = append(added, ',')
		}
		key, _ := json.Marshal(k)
		added = append(append(append(added, key...), ':'), o.over[k]...)
	}
	slices.SortFunc(splices, func(a, b splice) int { return a.at - b.at })
	var out [][]byte
	prev := 0
	for _, sp := range splices {
		out = append(out, o.raw[prev:sp.at], sp.val)
		prev = sp.end
	}
	return append(out, o.raw[prev:len(o.raw)-1], added, []byte("}"))
}

// valueLen is the length of the JSON array or object b starts with (0
// when it does not hold a whole one).
func valueLen(b []byte) int {
	depth, inStr := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inStr && c == '\\':
			i++
		case inStr:
			inStr = c != '"'
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			if depth--; depth == 0 {
				return i + 1
			}
		case depth == 0:
			return 0
		}
	}
	return 0
}
