package workflow

// The landing queue's batches ("gate": {"batch": N}): up to N queued items
// are merged onto main one after another and the gate runs once, on the
// last merged tree. When it fails, a Bisection finds the items that broke
// it, as GitHub's merge queue does: the failing span is split in two, the
// first half is gated on main, and whatever passes lands, so that main only
// ever moves to a tree the gate passed.

// Span is a run of a batch's items, positions From up to but not
// including To, in queue order.
type Span struct{ From, To int }

// Len is how many items the span holds.
func (s Span) Len() int { return s.To - s.From }

// BisectAct is what a bisection asks for next.
type BisectAct string

// The acts of a bisection.
const (
	// ActGate: run the gate on main with the span's items merged onto it.
	ActGate BisectAct = "gate"
	// ActLand: the span's items land, the gate run Proof passed on them.
	ActLand BisectAct = "land"
	// ActSendBack: the span's one item goes back as FIX work; the gate run
	// Proof failed on it.
	ActSendBack BisectAct = "send_back"
)

// BisectStep is one step of a bisection. Proof is the index, counting
// from 0 in the order they were asked for, of the gate run the step rests
// on (an ActGate step's own index is the next run's).
type BisectStep struct {
	Act   BisectAct
	Span  Span
	Proof int
}

// Bisection plans the landing of a batch of n items whose gate run has
// not yet been asked for. Ask Next for a step; after an ActGate step,
// report its result with Gated before asking again.
type Bisection struct {
	todo  []bisectSpan
	runs  int
	asked bool
}

// bisectSpan is a span still to settle: bad and good name the gate run
// that failed or passed on it (-1: none yet).
type bisectSpan struct {
	span      Span
	bad, good int
	// firstHalf, for the second half of a split, is its first half: that
	// span passing proves this one failing, by parent, the parent's run.
	firstHalf Span
	parent    int
}

// NewBisection plans a batch of n items.
func NewBisection(n int) *Bisection {
	b := &Bisection{}
	if n > 0 {
		b.todo = []bisectSpan{{span: Span{0, n}, bad: -1, good: -1, parent: -1}}
	}
	return b
}

// Next is the bisection's next step; false when every item has landed or
// gone back.
func (b *Bisection) Next() (BisectStep, bool) {
	if b.asked {
		panic("workflow: Bisection.Next before the gate run asked for was reported")
	}
	if len(b.todo) == 0 {
		return BisectStep{}, false
	}
	s := b.todo[0]
	switch {
	case s.good >= 0:
		b.todo = b.todo[1:]
		if len(b.todo) > 0 && b.todo[0].parent >= 0 && b.todo[0].firstHalf == s.span {
			b.todo[0].bad = b.todo[0].parent // its first half passed: the failure is in it
		}
		return BisectStep{Act: ActLand, Span: s.span, Proof: s.good}, true
	case s.bad < 0:
		b.asked = true
		return BisectStep{Act: ActGate, Span: s.span, Proof: b.runs}, true
	case s.span.Len() == 1:
		b.todo = b.todo[1:]
		return BisectStep{Act: ActSendBack, Span: s.span, Proof: s.bad}, true
	}
	mid := s.span.From + (s.span.Len()+1)/2
	first := bisectSpan{span: Span{s.span.From, mid}, bad: -1, good: -1, parent: -1}
	second := bisectSpan{span: Span{mid, s.span.To}, bad: -1, good: -1, firstHalf: first.span, parent: s.bad}
	b.todo = append([]bisectSpan{first, second}, b.todo[1:]...)
	return b.Next()
}

// Gated reports whether the gate run the last ActGate step asked for
// passed: the span lands next, or is split.
func (b *Bisection) Gated(passed bool) {
	if !b.asked {
		panic("workflow: Bisection.Gated with no gate run asked for")
	}
	b.asked = false
	if passed {
		b.todo[0].good = b.runs
	} else {
		b.todo[0].bad = b.runs
	}
	b.runs++
}
