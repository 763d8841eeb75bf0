package reviews

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/jsondoc"
)

// The filter holds every key it was built with, and tells most others
// absent (else it would spare no read).
func TestBloomNeverAbsent(t *testing.T) {
	for _, n := range []int{0, 1, 7, 300, 5000} {
		var keys []string
		for i := range n {
			keys = append(keys, fmt.Sprintf("feature/F%03d-%d-\"q\"\ufffd", i%1000, i))
		}
		b := decodeBloom(jsonEntry(t, encodeBloom(keys)))
		if b == nil {
			t.Fatalf("%d keys: the filter does not decode", n)
		}
		for _, k := range keys {
			if !b.mayHold(k) {
				t.Fatalf("%d keys: %q, built in, told absent", n, k)
			}
		}
		held := 0
		for i := range 10000 {
			if b.mayHold(fmt.Sprintf("bugfix/other-%d", i)) {
				held++
			}
		}
		if n > 0 && held > 300 { // about 1% expected
			t.Errorf("%d keys: %d of 10000 keys never added may be held", n, held)
		}
	}
}

func jsonEntry(t *testing.T, part []byte) []byte {
	t.Helper()
	o := lazyObject{raw: part}
	e := o.get("b")
	if e == nil {
		t.Fatalf("no filter entry in %s", part)
	}
	return e
}

// branchFiltered is a file of many branches' reviews, folded (the branches
// part and its filter written), and one more review in the recent part.
func branchFiltered(t *testing.T) (data []byte, facts jsondoc.Facts, idx []byte) {
	t.Helper()
	defer func(n int) { foldSize = n }(foldSize)
	f := New()
	for i := 0; i < 200; i++ {
		addBranchReview(t, f, fmt.Sprintf("F%d", i%7), fmt.Sprintf("feature/F%d-%d", i%7, i))
	}
	foldSize = 1
	f.Bytes()
	f.Facts()
	foldSize = 32 << 10
	addBranchReview(t, f, "F1", "feature/recent")
	return f.Bytes(), f.Facts(), slices.Clone(f.IndexBytes())
}

func readIndexed(t *testing.T, data []byte, facts jsondoc.Facts, idx []byte) *File {
	t.Helper()
	g, err := ParseTrusted(data, facts)
	if err != nil {
		t.Fatal(err)
	}
	g.SetIndexSource(func() []byte { return idx })
	return g
}

// A new branch is answered without reading the branches part; a branch the
// part holds is read from it.
func TestBranchFilterSparesThePart(t *testing.T) {
	data, facts, idx := branchFiltered(t)
	skipped := 0
	for i := 0; i < 50; i++ {
		g := readIndexed(t, data, facts, idx)
		if got := g.BranchFeatures(fmt.Sprintf("feature/new-%d", i)); got != nil {
			t.Fatalf("a new branch: %q", got)
		}
		if g.idx == nil || g.idx.broken {
			t.Fatal("the index as written was not used")
		}
		if !g.idx.checked[partBranches] {
			skipped++
		}
	}
	if skipped < 45 {
		t.Errorf("the branches part was read for %d of 50 new branches", 50-skipped)
	}
	g := readIndexed(t, data, facts, idx)
	for i := 0; i < 200; i += 13 {
		b := fmt.Sprintf("feature/F%d-%d", i%7, i)
		if got := g.BranchFeatures(b); !slices.Equal(got, []string{fmt.Sprintf("F%d", i%7)}) {
			t.Fatalf("BranchFeatures(%s) = %q", b, got)
		}
	}
	if got := g.BranchFeatures("feature/recent"); !slices.Equal(got, []string{"F1"}) {
		t.Fatalf("BranchFeatures(feature/recent) = %q", got)
	}
}

// A filter edited to tell every branch absent does not match its digest:
// the answers come from the records.
func TestBranchFilterEdited(t *testing.T) {
	data, facts, idx := branchFiltered(t)
	re := regexp.MustCompile(`\{"b":\[\d+,"([A-Za-z0-9+/=]+)"\]\}`)
	m := re.FindSubmatchIndex(idx)
	if m == nil {
		t.Fatalf("no filter in %s", idx)
	}
	edited := slices.Concat(idx[:m[2]], []byte(strings.Repeat("A", m[3]-m[2]-4)+"AA=="), idx[m[3]:])
	if bytes.Equal(edited, idx) || len(edited) != len(idx) {
		t.Fatal("the edit changed nothing")
	}
	g := readIndexed(t, data, facts, edited)
	if got := g.BranchFeatures("feature/F3-3"); !slices.Equal(got, []string{"F3"}) {
		t.Fatalf("BranchFeatures(feature/F3-3) = %q with the filter emptied", got)
	}
}

// An entry that is not the filter as written decodes to none (every key
// then looked up), never to a filter of other bits.
func TestDecodeBloomMalformed(t *testing.T) {
	for _, e := range []string{``, `[]`, `[7]`, `[7,""]`, `[0,"AAAA"]`, `[65,"AAAA"]`, `[x,"AAAA"]`, `[7,"AA\"AA"]`, `[7,"AA\\u0041A"]`, `[7,"AAAA"`, `[7,AAAA]`, `{"b":1}`, `[7,"A==="]`} {
		if b := decodeBloom([]byte(e)); b != nil {
			t.Errorf("%s decoded to a filter of %d bytes", e, len(b.bits))
		}
	}
	if b := decodeBloom([]byte(`[3,"AAAA"]`)); b == nil || b.k != 3 || len(b.bits) != 3 {
		t.Errorf(`[3,"AAAA"]: %+v`, b)
	}
}

// The parts are found at the sizes the head gives as a split at the
// newlines finds them in every index baton writes; a head without sizes
// (or sizes that do not fit) is split at the newlines; a newline put into
// the branches (which the sizes leave inside them) does not match their
// digest.
func TestIndexLinesBySize(t *testing.T) {
	data, facts, idx := branchFiltered(t)
	h := bytes.LastIndexByte(idx, '\n')
	var head indexHead
	if err := json.Unmarshal(idx[h+1:], &head); err != nil {
		t.Fatal(err)
	}
	want := bytes.SplitN(idx[:h], []byte("\n"), numParts)
	for name, sizes := range map[string][numParts]int{
		"written": head.Sizes, "none": {}, "one short": {head.Sizes[0] - 1, head.Sizes[1], head.Sizes[2], head.Sizes[3]},
		"past the end": {head.Sizes[0], head.Sizes[1], head.Sizes[2], head.Sizes[3] + 1}, "negative": {-1, 1, 1, 1},
		"overflowing": {head.Sizes[0], math.MaxInt, 2, 2}, "all huge": {math.MaxInt, math.MaxInt, math.MaxInt, math.MaxInt},
	} {
		hd := head
		hd.Sizes = sizes
		got := hd.lines(idx[:h])
		if len(got) != len(want) {
			t.Fatalf("%s: %d lines, want %d", name, len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%s: line %d: %.80s, want %.80s", name, i, got[i], want[i])
			}
		}
	}
	if head.Sizes == [numParts]int{} {
		t.Fatal("the head has no sizes")
	}
	if (indexHead{}).lines([]byte("{}\n{}")) != nil {
		t.Error("two lines split into four")
	}
	at := bytes.Index(idx, []byte(`,"feature/F3-3":`))
	edited := slices.Concat(idx[:at+1], []byte("\n"), idx[at+2:]) // same size: a character replaced
	g := readIndexed(t, data, facts, edited)
	if got := g.BranchFeatures("feature/F3-3"); !slices.Equal(got, []string{"F3"}) {
		t.Fatalf("BranchFeatures(feature/F3-3) = %q with a newline in the branches", got)
	}
}
