package reviews

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/baton-cli/baton/internal/jsondoc"
)

// A branches part edited by hand, read first by the fold inside Facts
// (segments), must not be written again with a fresh digest as "{}" and the
// recent entries: the index is built again from the records, and the
// branch the edit wiped keeps its features.
func TestFoldDoesNotLaunderEditedBranches(t *testing.T) {
	defer func(n int) { foldSize = n }(foldSize)
	f := New()
	review := func(f *File, id, b string) { addBranchReview(t, f, id, b) }
	for i := 0; i < 4; i++ {
		review(f, "F1", fmt.Sprintf("feature/old-%d", i))
	}
	foldSize = 1
	f.Bytes()
	f.Facts() // folds all into the branches part
	foldSize = 32 << 10
	review(f, "F2", "feature/recent")
	data, facts, good := f.Bytes(), f.Facts(), slices.Clone(f.IndexBytes())
	read := func(data, idx []byte, facts jsondoc.Facts) *File { return readIndexed(t, data, facts, idx) }
	// the agent edits the branches part (the first line)
	edited := []byte(strings.Replace(string(good), `"feature/old-0":["F1"]`, `"feature/old-0":["F9"]`, 1))
	if bytes.Equal(edited, good) {
		t.Fatalf("no edit in %s", good)
	}
	g := read(data, edited, facts)
	foldSize = 1 // this write's recent part reaches the fold size
	review(g, "F3", "feature/new")
	data2, facts2 := g.Bytes(), g.Facts()
	idx2 := bytes.Join(g.IndexSegments(), nil)
	foldSize = 32 << 10
	h := read(data2, idx2, facts2)
	for _, b := range []string{"feature/old-0", "feature/old-1", "feature/recent"} {
		want := []string{"F1"}
		if b == "feature/recent" {
			want = []string{"F2"}
		}
		if got := h.BranchFeatures(b); !slices.Equal(got, want) {
			t.Errorf("BranchFeatures(%s) = %q, want %q (index %s)", b, got, want, idx2)
		}
	}
}

// With the default fold size, an agent that pads the recent line past 32 KiB
// must not make the next write fold two broken parts and write them with
// fresh digests (add-fix reads only the features part, and the fold in
// Facts would drop the broken recent part): the recent branches stay.
func TestPaddedRecentDoesNotForceFold(t *testing.T) {
	f := New()
	review := func(f *File, id, b string) { addBranchReview(t, f, id, b) }
	for i := 0; i < 4; i++ {
		review(f, "F1", fmt.Sprintf("feature/old-%d", i))
	}
	data, facts, good := f.Bytes(), f.Facts(), slices.Clone(f.IndexBytes())
	lines := strings.SplitN(string(good), "\n", 4)
	lines[1] = lines[1][:len(lines[1])-1] + strings.Repeat(" ", 40<<10) + "}" // recent, padded
	edited := []byte(strings.Join(lines, "\n"))
	g, err := ParseTrusted(data, facts)
	if err != nil {
		t.Fatal(err)
	}
	g.SetIndexSource(func() []byte { return edited })
	if _, err := g.AddFix(NewFix{ReviewID: 1}); err != nil { // reads the features only
		t.Fatal(err)
	}
	data2, facts2 := g.Bytes(), g.Facts()
	idx2 := bytes.Join(g.IndexSegments(), nil)
	h, err := ParseTrusted(data2, facts2)
	if err != nil {
		t.Fatal(err)
	}
	h.SetIndexSource(func() []byte { return idx2 })
	if got := h.BranchFeatures("feature/old-0"); !slices.Equal(got, []string{"F1"}) {
		t.Errorf("BranchFeatures(feature/old-0) = %q, want [F1]; index written:\n%.300s", got, idx2)
	}
}

// addBranchReview records a review of feature id on branch b that asks for
// changes.
func addBranchReview(t *testing.T, f *File, id, b string) {
	t.Helper()
	if _, err := f.AddReview(NewReview{AgentType: "REVIEW", FeatureID: &id, Branch: &b, Verdict: "REQUEST_CHANGES", Issues: majorIssue(t)}); err != nil {
		t.Fatal(err)
	}
}
