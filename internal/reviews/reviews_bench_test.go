package reviews_test

import (
	"sync"
	"testing"

	"github.com/baton-cli/baton/bench/gen"
	"github.com/baton-cli/baton/internal/reviews"
)

// large is the generated state with 2,000 reviews, made once per test binary.
var large = sync.OnceValues(func() (*gen.State, error) { return gen.Generate(gen.Large, 1) })

func largeReviews(b *testing.B) []byte {
	st, err := large()
	if err != nil {
		b.Fatal(err)
	}
	return st.Reviews
}

// BenchmarkParse validates and indexes 2,000 reviews and 1,000 fixes.
func BenchmarkParse(b *testing.B) {
	data := largeReviews(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reviews.Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

const benchIssues = `{"major":[{"description":"Missing error handling for database connection failure","location":"backend/app/routes/health.py:15","suggestion":"Add a try/except block"}],"minor":[{"description":"Magic number for the timeout","location":"backend/app/config.py:40"}]}`

// BenchmarkAddReview is the domain side of `reviews add-review`: parse,
// append a review with issues, encode.
func BenchmarkAddReview(b *testing.B) {
	data := largeReviews(b)
	issues, err := reviews.ParseIssues("--issues", []byte(benchIssues))
	if err != nil {
		b.Fatal(err)
	}
	id, branch := "F743", "feature/F743-bench"
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := reviews.Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		in := reviews.NewReview{AgentType: "REVIEW", FeatureID: &id, Branch: &branch, Verdict: "REQUEST_CHANGES",
			Summary: "Missing error handling", Issues: issues, Timestamp: "2026-01-30T10:00:00Z"}
		if _, err := f.AddReview(in); err != nil {
			b.Fatal(err)
		}
		if out := f.Bytes(); len(out) <= len(data) {
			b.Fatalf("encoded %d bytes from %d", len(out), len(data))
		}
	}
}

// BenchmarkPassedFeatures is what every write pays to recompute
// features_completed from the reviews.
func BenchmarkPassedFeatures(b *testing.B) {
	f, err := reviews.Parse(largeReviews(b))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(f.PassedFeatures()) == 0 {
			b.Fatal("no passed features")
		}
	}
}
