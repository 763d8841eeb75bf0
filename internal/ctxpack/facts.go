package ctxpack

import (
	"fmt"
	"strings"
)

func gitItem(in Input) (Item, bool) {
	g := in.Git
	if g.Main == "" && g.Branch == "" {
		return Item{}, false
	}
	var b strings.Builder
	switch {
	case g.Branch != "" && g.BranchExists:
		fmt.Fprintf(&b, "Branch: %s (exists) at %s; it merges into %s", g.Branch, g.Tip, g.Main)
	case g.Branch != "":
		fmt.Fprintf(&b, "Branch: %s (does not exist yet); it starts from %s", g.Branch, g.Main)
	default:
		fmt.Fprintf(&b, "Main branch: %s", g.Main)
	}
	if g.Head != "" {
		fmt.Fprintf(&b, " at %s", g.Head)
	}
	b.WriteString("\n")
	if g.MergeBase != "" && g.BranchExists {
		fmt.Fprintf(&b, "Commit range: %s..%s (git log %s..%s)\n", g.MergeBase, g.Tip, g.Main, g.Branch)
	}
	if g.MergeBase != "" && g.Branch == "" {
		fmt.Fprintf(&b, "Since the last architecture review (%s at %s):\n", g.Main, g.MergeBase)
	}
	if len(g.Commits) > 0 {
		fmt.Fprintf(&b, "Commits (%d, oldest first):\n", len(g.Commits))
		for _, c := range g.Commits {
			fmt.Fprintf(&b, "  %s\n", c)
		}
	}
	if g.DiffStat != "" {
		fmt.Fprintf(&b, "Diff stat:\n%s\n", strings.TrimRight(g.DiffStat, "\n"))
	}
	return Item{ID: "git", Kind: "project", Source: "git", Tags: []string{"git"}, Importance: 0.85,
		Title: "Git", Payload: b.String()}, true
}

func pointersItem(in Input) (Item, bool) {
	var b strings.Builder
	if in.SpecFile != "" {
		fmt.Fprintf(&b, "Specification: %s\n", in.SpecFile)
	}
	for _, d := range in.AgentDocs {
		fmt.Fprintf(&b, "Project instructions for agents: %s (read it first)\n", d)
	}
	if in.TestCommand != "" {
		fmt.Fprintf(&b, "Run the tests: %s\n", in.TestCommand)
	} else if in.Situation != Initializer {
		b.WriteString("Tests: no test command is configured; find how the project runs its tests (README, Makefile, CI files).\n")
	}
	if b.Len() == 0 {
		return Item{}, false
	}
	return Item{ID: "pointers", Kind: "project", Source: ".baton/config", Tags: []string{"docs"}, Importance: 0.8,
		Title: "Where to look", Payload: b.String()}, true
}

// historyItems: previous sessions and earlier reviews and fixes of this
// work, the most recent the most important.
func historyItems(in Input) []Item {
	var out []Item
	n := len(in.History)
	for i, s := range in.History {
		p := fmt.Sprintf("Session %d, %s: %s — %s\n", s.ID, s.Role, s.Outcome, s.Summary)
		if s.Range != "" {
			p += "Commits: " + s.Range + "\n"
		}
		out = append(out, Item{ID: fmt.Sprintf("session-%d", s.ID), Kind: "task", Source: "progress.json", Timestamp: s.Ended,
			Tags: []string{"history", "summary"}, Importance: recency(0.7, i, n), Title: fmt.Sprintf("Session %d (%s)", s.ID, s.Role), Payload: p})
	}
	m := len(in.Earlier)
	for i, r := range in.Earlier {
		p := fmt.Sprintf("%s: %s — %s\n", reviewLabel(r), r.Verdict, r.Summary)
		for _, is := range r.Issues {
			p += fmt.Sprintf("  [%s] %s: %s\n", is.ID, is.Severity, is.Description)
		}
		p += fixesOf(in.Fixes, r.ID)
		out = append(out, Item{ID: fmt.Sprintf("earlier-review-%d", r.ID), Kind: "task", Source: "reviews.json", Timestamp: r.Timestamp,
			Tags: []string{"history", "review"}, Importance: recency(0.65, i, m), Title: "Earlier review " + reviewLabel(r), Payload: p})
	}
	return out
}

// recency ranks the i-th of n entries (oldest first): the newest gets top,
// each older one a little less.
func recency(top float64, i, n int) float64 {
	v := top - 0.02*float64(n-1-i)
	if v < 0.1 {
		v = 0.1
	}
	return float64(int(v*1000+0.5)) / 1000
}

func orNone(ids []string) string {
	if len(ids) == 0 {
		return "nothing"
	}
	return strings.Join(ids, ", ")
}

// fixesOf lists the fixes answering review id.
func fixesOf(fixes []Fix, id int) string {
	var b strings.Builder
	for _, f := range fixes {
		if f.ReviewID == id {
			fmt.Fprintf(&b, "  FIX-%d answered it: fixed %s", f.ID, orNone(f.Fixed))
			if len(f.Deferred) > 0 {
				b.WriteString("; deferred " + strings.Join(f.Deferred, ", "))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}
