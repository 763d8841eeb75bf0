package gitops

import (
	"container/heap"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The walks here answer range, ancestry and merge-base questions by
// visiting commits newest first (by committer time) and stopping as soon as
// the answer is known, as git itself does. go-git's own MergeBase and
// IsAncestor visit the whole history, which takes seconds on a large
// repository. Committer times can be skewed, so a walk only stops after a
// few extra commits (slop) have confirmed that nothing interesting is left.

const slop = 5

// flags painted on commits during a walk.
const (
	fromLeft  = 1 << iota // reachable from the "to" side (interesting)
	fromRight             // reachable from the "from" side (uninteresting)
	stale                 // merge-base walk: at or below a found base
	queued
	walked // its parents have been marked
)

const paint = fromLeft | fromRight | stale

type node struct {
	c     *object.Commit
	flags int
}

type commitQueue []*node

func (q commitQueue) Len() int { return len(q) }
func (q commitQueue) Less(i, j int) bool {
	return q[i].c.Committer.When.After(q[j].c.Committer.When)
}
func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)   { *q = append(*q, x.(*node)) }
func (q *commitQueue) Pop() any {
	old := *q
	n := old[len(old)-1]
	*q = old[:len(old)-1]
	return n
}

// walker holds the commits a walk has loaded.
type walker struct {
	g       *repo
	nodes   map[plumbing.Hash]*node
	queue   commitQueue
	shallow map[plumbing.Hash]bool // a shallow clone's roots (shallow.go)
}

func (g *repo) newWalker() *walker {
	return &walker{g: g, nodes: map[plumbing.Hash]*node{}, shallow: g.shallowRoots()}
}

func (w *walker) node(h plumbing.Hash) (*node, error) {
	if n, ok := w.nodes[h]; ok {
		return n, nil
	}
	c, err := w.g.r.CommitObject(h)
	if err != nil {
		return nil, err
	}
	if w.shallow[h] {
		c.ParentHashes = nil // a shallow clone's root: its parents were never fetched
	}
	n := &node{c: c}
	w.nodes[h] = n
	return n, nil
}

// mark paints h with flags. A commit seen for the first time is queued; one
// whose parents were already marked passes the new flags down to them (a
// later path can reach a commit the walk has passed).
func (w *walker) mark(h plumbing.Hash, flags int) error {
	n, err := w.node(h)
	if err != nil {
		return err
	}
	add := flags &^ n.flags & paint
	if add == 0 && n.flags&queued != 0 {
		return nil
	}
	n.flags |= add
	switch {
	case n.flags&queued == 0:
		n.flags |= queued
		heap.Push(&w.queue, n)
	case n.flags&walked != 0:
		for _, p := range n.c.ParentHashes {
			if err := w.mark(p, add); err != nil {
				return err
			}
		}
		if n.flags&(fromLeft|fromRight) == fromLeft|fromRight && n.flags&stale == 0 {
			// a commit walked before the other side reached it (commits
			// with equal times are not walked in topological order) is
			// walked again, so that a merge-base walk sees it as common
			heap.Push(&w.queue, n)
		}
	}
	return nil
}

// pop takes the newest queued commit and marks its parents.
func (w *walker) pop() (*node, error) {
	n := heap.Pop(&w.queue).(*node)
	n.flags |= walked
	for _, p := range n.c.ParentHashes {
		if err := w.mark(p, n.flags&paint); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// settled reports whether every queued commit carries flag; a walk ends
// after it has stayed so for slop more commits.
func (w *walker) settled(flag int, extra *int) bool {
	for _, n := range w.queue {
		if n.flags&flag == 0 {
			*extra = 0
			return false
		}
	}
	*extra++
	return *extra > slop
}

// Range returns the commits reachable from to and not from from — the set
// `git rev-list from..to` lists — oldest first. An empty from lists every
// ancestor of to.
func (g *repo) Range(from, to string) ([]Commit, error) {
	w := g.newWalker()
	if err := w.mark(plumbing.NewHash(to), fromLeft); err != nil {
		return nil, err
	}
	if from != "" {
		if err := w.mark(plumbing.NewHash(from), fromRight); err != nil {
			return nil, err
		}
	}
	var order []*node
	extra := 0
	for w.queue.Len() > 0 && !w.settled(fromRight, &extra) {
		n, err := w.pop()
		if err != nil {
			return nil, err
		}
		order = append(order, n)
	}
	var out []Commit
	for i := len(order) - 1; i >= 0; i-- {
		if n := order[i]; n.flags&fromLeft != 0 && n.flags&fromRight == 0 {
			out = append(out, commitOf(n.c))
		}
	}
	return out, nil
}

// IsAncestor reports whether a is an ancestor of b (or b itself).
func (g *repo) IsAncestor(a, b string) (bool, error) {
	if a == b {
		return true, nil
	}
	target, err := g.r.CommitObject(plumbing.NewHash(a))
	if err != nil {
		return false, err
	}
	w := g.newWalker()
	if err := w.mark(plumbing.NewHash(b), fromLeft); err != nil {
		return false, err
	}
	extra := 0
	for w.queue.Len() > 0 {
		n, err := w.pop()
		if err != nil {
			return false, err
		}
		if n.c.Hash == target.Hash {
			return true, nil
		}
		if n.c.Committer.When.Before(target.Committer.When) {
			extra++ // older than a: a cannot be below, once slop confirms it
			if extra > slop {
				return false, nil
			}
		}
	}
	return false, nil
}

// MergeBase returns the best common ancestor of a and b ("" when they
// share no history): of the common ancestors found newest first, the first
// that is not an ancestor of another.
func (g *repo) MergeBase(a, b string) (string, error) {
	if a == b {
		return a, nil
	}
	w := g.newWalker()
	if err := w.mark(plumbing.NewHash(a), fromLeft); err != nil {
		return "", err
	}
	if err := w.mark(plumbing.NewHash(b), fromRight); err != nil {
		return "", err
	}
	var bases []string
	extra := 0
	for w.queue.Len() > 0 && !w.settled(stale, &extra) {
		n := heap.Pop(&w.queue).(*node)
		n.flags |= walked
		if n.flags&(fromLeft|fromRight) == fromLeft|fromRight && n.flags&stale == 0 {
			bases = append(bases, n.c.Hash.String())
			n.flags |= stale
		}
		for _, p := range n.c.ParentHashes {
			if err := w.mark(p, n.flags&paint); err != nil {
				return "", err
			}
		}
	}
	return g.bestBase(bases)
}

// bestBase drops bases that are ancestors of other bases.
func (g *repo) bestBase(bases []string) (string, error) {
	for i, b := range bases {
		redundant := false
		for j, o := range bases {
			if i == j {
				continue
			}
			below, err := g.IsAncestor(b, o)
			if err != nil {
				return "", err
			}
			if below {
				redundant = true
				break
			}
		}
		if !redundant {
			return b, nil
		}
	}
	return "", nil
}

func commitOf(c *object.Commit) Commit {
	return Commit{Hash: c.Hash.String(), Subject: subject(c.Message), Parents: hashes(c.ParentHashes)}
}

func hashes(hs []plumbing.Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.String()
	}
	return out
}

func subject(msg string) string {
	for i := 0; i < len(msg); i++ {
		if msg[i] == '\n' {
			return msg[:i]
		}
	}
	return msg
}
