package reviews

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/jsondoc"
)

// The reference answers: every record read, as the rules read them before
// the index.

func refFixCount(rv, fx []gjson.Result, featureIDs string) int {
	want := map[string]bool{}
	for _, id := range features.SplitIDs(featureIDs) {
		want[id] = true
	}
	shares := func(batch string) bool {
		for _, id := range features.SplitIDs(batch) {
			if want[id] {
				return true
			}
		}
		return false
	}
	after := int64(0)
	for i := len(rv) - 1; i >= 0; i-- {
		r := rv[i]
		if shares(r.Get("feature_id").String()) && (VerdictOf(r) == "REJECT" || r.Get("decision.reject").Bool()) {
			after = r.Get("review_id").Int()
			break
		}
	}
	n := 0
	for _, x := range fx {
		if (after == 0 || x.Get("review_id").Int() > after) && shares(x.Get("feature_id").String()) {
			n++
		}
	}
	return n
}

func refPassed(rv []gjson.Result) map[string]bool {
	out := map[string]bool{}
	for _, r := range rv {
		if !Merged(r) || r.Get("agent_type").String() == "ARCHITECTURE" {
			continue
		}
		for _, id := range features.SplitIDs(r.Get("feature_id").String()) {
			out[id] = true
		}
	}
	return out
}

func refSinceArch(rv []gjson.Result) []string {
	out := []string{}
	for i := len(rv) - 1; i >= 0; i-- {
		r := rv[i]
		if r.Get("agent_type").String() == "ARCHITECTURE" {
			break
		}
		if Merged(r) {
			out = append(out, r.Get("feature_id").String())
		}
	}
	slices.Reverse(out)
	return out
}

func refBranch(rv []gjson.Result, branch string) []string {
	set := map[string]bool{}
	for _, r := range rv {
		if r.Get("branch").String() == branch {
			for _, id := range features.SplitIDs(r.Get("feature_id").String()) {
				set[id] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

var (
	testFeatures = []string{"F1", "F2", "F3", "F4", "BUG-1", "DEBT-001", "F\ufffd"}
	testBranches = []string{"feature/F1", "feature/F2", "feature/a\"b", "bugfix/x", "refactor/t", "feature/F1,F2", "feature/\ufffd<&>"}
)

// checkIndex compares every answer the index gives with the reference's,
// read from the file's bytes in full.
func checkIndex(t *testing.T, step string, f *File) {
	t.Helper()
	full, err := Parse(f.Bytes())
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	rv, fx := full.Reviews(), full.Fixes()
	queries := slices.Clone(testFeatures)
	queries = append(queries, "F1,F2", "F2,F3,BUG-1", "F4,DEBT-001", "F9", "F\xff", "F1,F\xff")
	for _, q := range queries {
		if got, want := f.FixCount(q), refFixCount(rv, fx, q); got != want {
			t.Fatalf("%s: FixCount(%s) = %d from the index, %d from the records", step, q, got, want)
		}
	}
	if got, want := f.PassedFeatures(), refPassed(rv); !maps.Equal(got, want) {
		t.Fatalf("%s: PassedFeatures = %v from the index, %v from the records", step, got, want)
	}
	if got, want := f.MergedSinceArchitecture(), refSinceArch(rv); !slices.Equal(got, want) {
		t.Fatalf("%s: MergedSinceArchitecture = %q from the index, %q from the records", step, got, want)
	}
	for _, b := range append(slices.Clone(testBranches), "none", "feature/\xff<&>") {
		got := f.BranchFeatures(b)
		slices.Sort(got)
		if want := refBranch(rv, b); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("%s: BranchFeatures(%s) = %q from the index, %q from the records", step, b, got, want)
		}
	}
}

// reopen commits f as a transaction does and reads it back as the next
// one: trusted with its index (or, now and then, in full).
func reopen(t *testing.T, f *File, r *rand.Rand) *File {
	t.Helper()
	data := f.Bytes()
	factsRaw, _ := json.Marshal(f.Facts())
	idx := slices.Clone(f.IndexBytes())
	if r.IntN(8) == 0 {
		g, err := Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	var facts jsondoc.Facts
	if err := json.Unmarshal(factsRaw, &facts); err != nil {
		t.Fatal(err)
	}
	g, err := ParseTrusted(data, facts)
	if err != nil {
		t.Fatal(err)
	}
	g.SetIndexSource(func() []byte { return idx })
	return g
}

func randomReview(t *testing.T, r *rand.Rand) NewReview {
	in := NewReview{AgentType: "REVIEW", Verdict: Verdicts[r.IntN(len(Verdicts))], Summary: "s", Timestamp: "2025-01-01T00:00:00Z"}
	if r.IntN(8) == 0 {
		in.AgentType = "ARCHITECTURE"
	}
	if in.AgentType == "REVIEW" || r.IntN(4) == 0 { // old files: architecture reviews naming features
		ids := []string{testFeatures[r.IntN(len(testFeatures))]}
		if r.IntN(4) == 0 {
			ids = append(ids, testFeatures[r.IntN(len(testFeatures))])
		}
		s := strings.Join(ids, ",")
		in.FeatureID = &s
	}
	if r.IntN(6) != 0 {
		b := testBranches[r.IntN(len(testBranches))]
		in.Branch = &b
	}
	switch r.IntN(6) {
	case 0:
		in.Decision = json.RawMessage(`{"reject":true}`)
	case 1:
		in.Decision = json.RawMessage(`{"merge":true}`)
	}
	if r.IntN(2) == 0 {
		in.Issues = majorIssue(t)
	}
	return in
}

func majorIssue(t *testing.T) []PendingIssue {
	t.Helper()
	is, err := ParseIssues("--issues", []byte(`{"major":[{"description":"d"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return is
}

func randomFix(r *rand.Rand, f *File) (NewFix, bool) {
	all := f.Reviews()
	if len(all) == 0 {
		return NewFix{}, false
	}
	i := r.IntN(len(all))
	if r.IntN(2) == 0 { // most fixes answer a recent review
		i = max(0, len(all)-1-r.IntN(3))
	}
	id := int(all[i].Get("review_id").Int())
	in := NewFix{ReviewID: id, Timestamp: "2025-01-01T00:00:00Z"}
	if r.IntN(4) == 0 {
		s := testFeatures[r.IntN(len(testFeatures))]
		in.FeatureID = &s
	}
	return in, true
}

// TestIndexEquivalence: over generated histories of reviews, fixes,
// rejections, merges and architecture reviews, written and read back as
// transactions do, every answer of the index equals the answer read from
// every record. It fails when an incremental update is wrong. Half the
// histories fold the recent branches into the others at every write.
func TestIndexEquivalence(t *testing.T) {
	defer func(n int) { foldSize = n }(foldSize)
	for seed := uint64(1); seed <= 16; seed++ {
		foldSize = []int{32 << 10, 24}[seed%2]
		r := rand.New(rand.NewPCG(seed, 7))
		f := New()
		for step := 0; step < 100; step++ {
			name := fmt.Sprintf("seed %d step %d", seed, step)
			switch p := r.IntN(10); {
			case p < 5:
				if _, err := f.AddReview(randomReview(t, r)); err != nil {
					t.Fatal(err)
				}
			case p < 8:
				if in, ok := randomFix(r, f); ok {
					if _, err := f.AddFix(in); err != nil {
						t.Fatal(err)
					}
				}
			case p < 9 && f.NextReviewID() > 1: // a merge or a rejection changes a review afterwards
				id := 1 + r.IntN(f.NextReviewID()-1) // baton's ids: 1 to the last, none missing
				if err := f.SetReviewFields(id, Field{"decision", map[string]bool{"reject": r.IntN(2) == 0, "merge": r.IntN(2) == 0}}); err != nil {
					t.Fatal(err)
				}
			case f.NextFixID() > 1:
				if err := f.MarkMerged(1+r.IntN(f.NextFixID()-1), "2025-01-02T00:00:00Z", nil); err != nil {
					t.Fatal(err)
				}
			}
			if r.IntN(3) == 0 {
				f = reopen(t, f, r)
			}
			checkIndex(t, name, f)
		}
	}
}

// TestIndexUnordered: a predecessor's file whose review ids do not
// increase in file order is indexed (and kept) without the pruning that
// order allows.
func TestIndexUnordered(t *testing.T) {
	data := []byte(`{"reviews": [
    {"review_id": 5, "feature_id": "F1", "verdict": "REJECT", "branch": "feature/F1"},
    {"review_id": 2, "feature_id": "F1", "verdict": "REQUEST_CHANGES", "branch": "feature/F1"},
    {"review_id": 3, "feature_id": "F1,F2", "verdict": "REJECT"},
    {"review_id": 9, "feature_id": "F2", "verdict": "APPROVED", "branch": "feature/F2"}
  ],
  "fixes": [
    {"fix_id": 1, "review_id": 2, "feature_id": "F1"},
    {"fix_id": 2, "review_id": 4, "feature_id": "F1"},
    {"fix_id": 3, "review_id": 6, "feature_id": "F1,F2"}
  ]}`)
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	checkIndex(t, "as read", f)
	r := rand.New(rand.NewPCG(3, 3))
	for step := 0; step < 60; step++ {
		if in, ok := randomFix(r, f); ok && r.IntN(2) == 0 {
			if _, err := f.AddFix(in); err != nil {
				t.Fatal(err)
			}
		} else if _, err := f.AddReview(randomReview(t, r)); err != nil {
			t.Fatal(err)
		}
		f = reopen(t, f, r)
		checkIndex(t, fmt.Sprintf("step %d", step), f)
	}
}

// TestIndexNotTrusted: an index that is not the one the facts name —
// edited, stale, truncated, missing — is never used: the answers come
// from the records.
func TestIndexNotTrusted(t *testing.T) {
	f := New()
	id, b := "F1", "feature/F1"
	for i := 0; i < 3; i++ {
		rv, err := f.AddReview(NewReview{AgentType: "REVIEW", FeatureID: &id, Branch: &b, Verdict: "REQUEST_CHANGES", Issues: majorIssue(t)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.AddFix(NewFix{ReviewID: rv.ReviewID}); err != nil {
			t.Fatal(err)
		}
	}
	data := f.Bytes()
	facts := f.Facts()
	good := slices.Clone(f.IndexBytes())
	stale := New().IndexBytes()
	forged := []byte(strings.Replace(string(good), `"F1":[0,0,1,1,2,2,3,3]`, `"F1":[0,0]`, 1))
	if string(forged) == string(good) {
		t.Fatalf("the forgery changed nothing in %s", good)
	}
	for name, idx := range map[string][]byte{"good": good, "forged": forged, "stale": stale, "missing": nil, "cut": good[:len(good)/2], "garbage": []byte("{\n}\n{")} {
		g, err := ParseTrusted(data, facts)
		if err != nil {
			t.Fatal(err)
		}
		g.SetIndexSource(func() []byte { return idx })
		if n := g.FixCount("F1"); n != 3 {
			t.Errorf("%s index: FixCount(F1) = %d, want 3", name, n)
		}
		if got := g.BranchFeatures(b); !slices.Equal(got, []string{"F1"}) {
			t.Errorf("%s index: BranchFeatures = %q", name, got)
		}
	}
}

func TestLazyObject(t *testing.T) {
	o := lazyObject{raw: []byte("{}")}
	o.set("b", json.RawMessage(`["y"]`))
	o.set("a\"{,", json.RawMessage(`["x",1,"]}\",\"b\":"]`))
	if got := string(bytes.Join(o.segments(), nil)); got != `{"a\"{,":["x",1,"]}\",\"b\":"],"b":["y"]}` {
		t.Fatalf("encode = %s", got)
	}
	o = lazyObject{raw: bytes.Join(o.segments(), nil)} // as read back
	if got := string(o.get("b")); got != `["y"]` {
		t.Fatalf(`get("b") = %s`, got)
	}
	o.set("b", json.RawMessage(`["y","w"]`))
	o.set("c", json.RawMessage(`[]`))
	if got := string(bytes.Join(o.segments(), nil)); got != `{"a\"{,":["x",1,"]}\",\"b\":"],"b":["y","w"],"c":[]}` {
		t.Fatalf("encode = %s", got)
	}
	for key, want := range map[string]string{"a\"{,": `["x",1,"]}\",\"b\":"]`, "b": `["y","w"]`, "c": `[]`, "{": "", ",": "", "x": ""} {
		if got := string(o.get(key)); got != want {
			t.Errorf("get(%q) = %s, want %s", key, got, want)
		}
	}
}

// TestIndexParts: each part of the index is checked against the digest in
// its head when a write first reads it, and only then: a part edited by
// hand is never used, also when a write that did not read it carried it
// into the next version, and a write reads and hashes no part it does not
// need (a fix reads the features, a review the recent branches and the
// features, neither the branches folded).
func TestIndexParts(t *testing.T) {
	defer func(n int) { foldSize = n }(foldSize)
	f := New()
	ids := []string{"F1", "F2"}
	review := func(f *File, i int) int {
		id, b := ids[i%2], fmt.Sprintf("feature/%s-%d", ids[i%2], i)
		rv, err := f.AddReview(NewReview{AgentType: "REVIEW", FeatureID: &id, Branch: &b, Verdict: "REQUEST_CHANGES", Issues: majorIssue(t)})
		if err != nil {
			t.Fatal(err)
		}
		return rv.ReviewID
	}
	for i := 0; i < 5; i++ {
		if _, err := f.AddFix(NewFix{ReviewID: review(f, i)}); err != nil {
			t.Fatal(err)
		}
		if i == 3 { // the branches so far folded, the fifth's recent
			foldSize = 1
			f.Bytes()
			f.Facts()
			foldSize = 32 << 10
		}
	}
	data, facts, good := f.Bytes(), f.Facts(), slices.Clone(f.IndexBytes())
	edits := map[string][2]string{
		"branches": {`"feature/F1-0":["F1"]`, `"feature/F1-0":["F2"]`},
		"recent":   {`"feature/F1-4":["F1"]`, `"feature/F1-4":["F2"]`},
		"features": {`"F1":[0,0,1,1,3,3,5,5]`, `"F1":[0,0]`},
		"head":     {`"fixes":5`, `"fixes":5 `},
	}
	read := func(data, idx []byte, facts jsondoc.Facts) *File { return readIndexed(t, data, facts, idx) }
	check := func(name string, g *File, fixes int) {
		t.Helper()
		if n := g.FixCount("F1"); n != fixes {
			t.Errorf("%s: FixCount(F1) = %d, want %d", name, n, fixes)
		}
		for _, b := range []string{"feature/F1-0", "feature/F1-4"} {
			if got := g.BranchFeatures(b); !slices.Equal(got, []string{"F1"}) {
				t.Errorf("%s: BranchFeatures(%s) = %q", name, b, got)
			}
		}
	}
	for part, e := range edits {
		edited := []byte(strings.Replace(string(good), e[0], e[1], 1))
		if bytes.Equal(edited, good) {
			t.Fatalf("%s: the edit changed nothing in %s", part, good)
		}
		check(part+" edited", read(data, edited, facts), 3)
		// a fix, which reads the features only, carries the rest
		g := read(data, edited, facts)
		if _, err := g.AddFix(NewFix{ReviewID: 1}); err != nil {
			t.Fatal(err)
		}
		data2, facts2 := g.Bytes(), g.Facts()
		if part != "head" && part != "features" && (g.idx.checked[partBranches] || g.idx.checked[partRecent]) {
			t.Errorf("%s edited: a fix read and checked the branches", part)
		}
		check(part+" edited, then a fix written", read(data2, bytes.Join(g.IndexSegments(), nil), facts2), 4)
	}
	// unedited: a fix reads the features, a review the recent branches too
	g := read(data, good, facts)
	if _, err := g.AddFix(NewFix{ReviewID: 1}); err != nil {
		t.Fatal(err)
	}
	if g.idx == nil || g.idx.checked != [numParts]bool{partFeatures: true} {
		t.Fatalf("a fix checked the parts %v (want the features only) of an index as written", g.idx)
	}
	review(g, 5)
	if g.idx == nil || g.idx.checked != [numParts]bool{partFeatures: true, partRecent: true} {
		t.Fatalf("a review checked the parts %v (want the features and the recent branches) of an index as written", g.idx)
	}
	data2, facts2 := g.Bytes(), g.Facts()
	check("written by a fix and a review", read(data2, bytes.Join(g.IndexSegments(), nil), facts2), 4)
}
