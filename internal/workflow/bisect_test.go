package workflow

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestBisection drives the planner with gates that fail exactly when a
// span holds a bad item, and checks every step, the proofs included.
func TestBisection(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		bad   []int
		steps string
	}{
		{"empty", 0, nil, ""},
		{"one good", 1, nil, "gate 0-1 #0, land 0-1 #0"},
		{"one bad", 1, []int{0}, "gate 0-1 #0, send 0 #0"},
		{"all good", 3, nil, "gate 0-3 #0, land 0-3 #0"},
		{"the middle of three", 3, []int{1},
			"gate 0-3 #0, gate 0-2 #1, gate 0-1 #2, land 0-1 #2, send 1 #1, gate 2-3 #3, land 2-3 #3"},
		{"the first of three", 3, []int{0},
			"gate 0-3 #0, gate 0-2 #1, gate 0-1 #2, send 0 #2, gate 1-2 #3, land 1-2 #3, gate 2-3 #4, land 2-3 #4"},
		{"the last of three: its first half passing proves it", 3, []int{2},
			"gate 0-3 #0, gate 0-2 #1, land 0-2 #1, send 2 #0"},
		{"the last of four", 4, []int{3},
			"gate 0-4 #0, gate 0-2 #1, land 0-2 #1, gate 2-3 #2, land 2-3 #2, send 3 #0"},
		{"two bad of four", 4, []int{0, 3},
			"gate 0-4 #0, gate 0-2 #1, gate 0-1 #2, send 0 #2, gate 1-2 #3, land 1-2 #3, gate 2-4 #4, gate 2-3 #5, land 2-3 #5, send 3 #4"},
		{"all bad", 2, []int{0, 1},
			"gate 0-2 #0, gate 0-1 #1, send 0 #1, gate 1-2 #2, send 1 #2"},
		{"a part of the first half passing proves nothing of the second", 4, []int{0},
			"gate 0-4 #0, gate 0-2 #1, gate 0-1 #2, send 0 #2, gate 1-2 #3, land 1-2 #3, gate 2-4 #4, land 2-4 #4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := runBisection(t, tc.n, tc.bad)
			if got != tc.steps {
				t.Errorf("steps:\n got %s\nwant %s", got, tc.steps)
			}
		})
	}
}

// runBisection runs a bisection of n items to its end against gates that
// fail when a span holds an item of bad, checking that every item lands
// or goes back exactly once and only the bad ones go back.
func runBisection(t *testing.T, n int, bad []int) string {
	t.Helper()
	b := NewBisection(n)
	var steps []string
	settled := map[int]string{}
	for i := 0; ; i++ {
		if i > 4*n+4 {
			t.Fatalf("no end after %d steps: %v", i, steps)
		}
		st, ok := b.Next()
		if !ok {
			break
		}
		switch st.Act {
		case ActGate:
			steps = append(steps, fmt.Sprintf("gate %d-%d #%d", st.Span.From, st.Span.To, st.Proof))
			b.Gated(!slices.ContainsFunc(bad, func(x int) bool { return x >= st.Span.From && x < st.Span.To }))
		case ActLand:
			steps = append(steps, fmt.Sprintf("land %d-%d #%d", st.Span.From, st.Span.To, st.Proof))
		case ActSendBack:
			steps = append(steps, fmt.Sprintf("send %d #%d", st.Span.From, st.Proof))
		}
		for x := st.Span.From; x < st.Span.To && st.Act != ActGate; x++ {
			if settled[x] != "" {
				t.Fatalf("item %d settled twice: %v", x, steps)
			}
			settled[x] = string(st.Act)
		}
	}
	for x := range n {
		want := string(ActLand)
		if slices.Contains(bad, x) {
			want = string(ActSendBack)
		}
		if settled[x] != want {
			t.Errorf("item %d: %q, want %q (%v)", x, settled[x], want, steps)
		}
	}
	return strings.Join(steps, ", ")
}

// TestBisectionFindsEveryBadSet checks, for every set of bad items in
// batches of up to 6, that exactly the bad items go back, and that a
// batch with one bad item takes at most 2·log2(n)+2 gate runs.
func TestBisectionFindsEveryBadSet(t *testing.T) {
	for n := 1; n <= 6; n++ {
		for mask := 0; mask < 1<<n; mask++ {
			var bad []int
			for x := range n {
				if mask&(1<<x) != 0 {
					bad = append(bad, x)
				}
			}
			got := runBisection(t, n, bad)
			if gates := strings.Count(got, "gate"); len(bad) == 1 && gates > 2*log2(n)+2 {
				t.Errorf("n=%d bad=%v: %d gate runs: %s", n, bad, gates, got)
			}
		}
	}
}

func log2(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}

func TestBisectionMisuse(t *testing.T) {
	b := NewBisection(2)
	b.Next()
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Next before Gated did not panic")
			}
		}()
		b.Next()
	}()
	b.Gated(true)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Gated with no gate asked for did not panic")
			}
		}()
		b.Gated(true)
	}()
}
