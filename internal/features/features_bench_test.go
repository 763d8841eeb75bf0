package features_test

import (
	"sync"
	"testing"

	"github.com/baton-cli/baton/bench/gen"
	"github.com/baton-cli/baton/internal/features"
)

// large is the generated state with 1,000 features, made once per test binary.
var large = sync.OnceValues(func() (*gen.State, error) { return gen.Generate(gen.Large, 1) })

func largeState(b *testing.B) *gen.State {
	st, err := large()
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkParse validates and indexes 1,000 features.
func BenchmarkParse(b *testing.B) {
	data := largeState(b).Features
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := features.Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPass is the domain side of `features pass`: parse, mark one
// pending feature passing, encode.
func BenchmarkPass(b *testing.B) {
	st := largeState(b)
	id := st.Pending[len(st.Pending)/2]
	b.SetBytes(int64(len(st.Features)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := features.Parse(st.Features)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.SetPasses([]string{id}, true, "2026-01-30T10:00:00Z", ""); err != nil {
			b.Fatal(err)
		}
		if out := f.Bytes(); len(out) <= len(st.Features) {
			b.Fatalf("encoded %d bytes from %d", len(out), len(st.Features))
		}
	}
}

// BenchmarkNext is `features next` after the parse.
func BenchmarkNext(b *testing.B) {
	f, err := features.Parse(largeState(b).Features)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(f.Pending("")) == 0 {
			b.Fatal("nothing pending")
		}
	}
}
