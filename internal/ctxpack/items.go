package ctxpack

import (
	"fmt"
	"strings"
)

// candidates lists every item the input supports, in reading order.
func candidates(in Input) []Item {
	var out []Item
	out = append(out, situationItem(in), rulesItem(in))
	out = append(out, workItems(in)...)
	out = append(out, reviewItems(in)...)
	if it, ok := fixCyclesItem(in); ok {
		out = append(out, it)
	}
	if it, ok := architectureItem(in); ok {
		out = append(out, it)
	}
	if it, ok := gitItem(in); ok {
		out = append(out, it)
	}
	if it, ok := pointersItem(in); ok {
		out = append(out, it)
	}
	out = append(out, historyItems(in)...)
	return out
}

func situationItem(in Input) Item {
	var b strings.Builder
	fmt.Fprintf(&b, "You are %s", in.Situation.Role())
	if in.Session > 0 {
		fmt.Fprintf(&b, " in baton session %d", in.Session)
	}
	if in.Project != "" {
		fmt.Fprintf(&b, " of project %s", in.Project)
	}
	fmt.Fprintf(&b, ": %s.\n", describeSituation(in))
	if in.Reason != "" {
		fmt.Fprintf(&b, "Why now: %s\n", in.Reason)
	}
	return Item{ID: "situation", Kind: "task", Source: "progress.json", Tags: []string{"task"}, Importance: 1,
		Title: "Your session", Payload: b.String()}
}

func describeSituation(in Input) string {
	ids := workIDs(in.Work)
	switch in.Situation {
	case Initializer:
		return "turn the specification into the feature list"
	case Brownfield:
		return "describe the existing code base as a feature list"
	case Implement:
		return "implement " + ids + " on branch " + in.Branch
	case Bugfix:
		return "fix bug " + ids + " on branch " + in.Branch
	case ReviewFeature, ReviewBug:
		return "review " + ids + " on branch " + in.Branch
	case ReviewRefactor:
		return "review the architecture refactor on branch " + in.Branch
	case ReviewDebt:
		return "review the tech-debt work " + ids + " on branch " + in.Branch
	case FixReview:
		return "fix the issues of " + reviewName(in, "review R") + of(ids) + " on branch " + in.Branch
	case FixArchitecture:
		return "fix the issues of " + reviewName(in, "architecture review A") + " on branch " + in.Branch
	case GlobalFix:
		return "work off the tech-debt items " + ids + " on branch " + in.Branch
	case ArchitectureReview:
		return "assess the health of the whole code base"
	}
	return strings.ToLower(string(in.Situation))
}

// reviewName names the review a FIX answers, when it is known.
func reviewName(in Input, prefix string) string {
	if in.Review != nil {
		return prefix + itoa(in.Review.ID)
	}
	return "the last review"
}

func of(ids string) string {
	if ids == "" {
		return ""
	}
	return " of " + ids
}

func workIDs(w []WorkItem) string {
	var ids []string
	for _, it := range w {
		ids = append(ids, it.ID)
	}
	return strings.Join(ids, ",")
}

func workItems(in Input) []Item {
	var out []Item
	for _, w := range in.Work {
		var b strings.Builder
		fmt.Fprintf(&b, "%s (%s): %s\n", w.ID, kindOr(w.Kind), w.Name)
		if w.Description != "" {
			fmt.Fprintf(&b, "%s\n", w.Description)
		}
		if len(w.Steps) > 0 {
			b.WriteString("Test steps:\n")
			for i, s := range w.Steps {
				fmt.Fprintf(&b, "%d. %s\n", i+1, s)
			}
		}
		if w.Source != "" {
			fmt.Fprintf(&b, "From: %s\n", w.Source)
		}
		out = append(out, Item{ID: "work-" + w.ID, Kind: "task", Source: "feature_list.json", Tags: []string{"task", kindOr(w.Kind)},
			Importance: 0.95, Title: "Work item " + w.ID, Payload: b.String()})
	}
	return out
}

func kindOr(k string) string {
	if k == "" {
		return "feature"
	}
	return k
}

// severityRank orders issues: the worse, the more important.
var severityRank = map[string]float64{"critical": 0.94, "major": 0.93, "minor": 0.86, "suggestion": 0.75}

func reviewItems(in Input) []Item {
	r := in.Review
	if r == nil {
		return nil
	}
	var out []Item
	head := fmt.Sprintf("%s: %s", reviewLabel(*r), r.Verdict)
	if r.Health != "" {
		head += ", health " + r.Health
	}
	payload := head + "\n" + r.Summary + "\n"
	if len(r.Issues) > 0 {
		payload += fmt.Sprintf("Issues: %d (ids %s…)\n", len(r.Issues), r.IssuePrefix())
	}
	payload += fixesOf(in.Fixes, r.ID)
	out = append(out, Item{ID: fmt.Sprintf("review-%d", r.ID), Kind: "task", Source: "reviews.json", Timestamp: r.Timestamp,
		Tags: []string{"review"}, Importance: 0.945, Title: "Review " + reviewLabel(*r), Payload: payload})
	for _, is := range r.Issues {
		var b strings.Builder
		fmt.Fprintf(&b, "[%s] %s: %s\n", is.ID, is.Severity, is.Description)
		if is.Location != "" {
			fmt.Fprintf(&b, "Location: %s\n", is.Location)
		}
		if is.Suggestion != "" {
			fmt.Fprintf(&b, "Suggestion: %s\n", is.Suggestion)
		}
		imp := severityRank[is.Severity]
		if imp == 0 {
			imp = 0.8
		}
		out = append(out, Item{ID: "issue-" + is.ID, Kind: "task", Source: "reviews.json", Tags: []string{"issue", is.Severity},
			Importance: imp, Title: "Issue " + is.ID, Payload: b.String()})
	}
	return out
}

func reviewLabel(r Review) string {
	if r.Architecture {
		return fmt.Sprintf("A%d (architecture, review R%d)", r.ID, r.ID)
	}
	return fmt.Sprintf("R%d", r.ID)
}

func fixCyclesItem(in Input) (Item, bool) {
	switch in.Situation {
	case FixReview, ReviewFeature, ReviewBug, ReviewDebt:
	default:
		return Item{}, false
	}
	if in.MaxFixCycles == 0 {
		return Item{}, false
	}
	left := in.MaxFixCycles - in.FixCount
	if left < 0 {
		left = 0
	}
	p := fmt.Sprintf("Fix cycles used: %d of %d (%d left).", in.FixCount, in.MaxFixCycles, left)
	if left == 0 {
		p += " The limit is reached: a review that is not a PASS is decided by severity — critical or major issues left mean REJECT, only minor ones and suggestions mean PASS_WITH_COMMENTS (merged, leftovers become tech debt)."
	}
	return Item{ID: "fix-cycles", Kind: "task", Source: "reviews.json", Tags: []string{"limits"}, Importance: 0.9,
		Title: "Fix cycles", Payload: p + "\n"}, true
}

func architectureItem(in Input) (Item, bool) {
	if in.Situation != ArchitectureReview {
		return Item{}, false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Interval: an architecture review every %d merged features.\n", in.Interval)
	if len(in.MergedSince) > 0 {
		fmt.Fprintf(&b, "Merged since the last one (%d): %s\n", len(in.MergedSince), strings.Join(in.MergedSince, ", "))
	}
	if l := in.LastArchitecture; l != nil {
		fmt.Fprintf(&b, "Last architecture review: %s, %s", reviewLabel(*l), l.Verdict)
		if l.Health != "" {
			fmt.Fprintf(&b, ", health %s", l.Health)
		}
		fmt.Fprintf(&b, " (%s): %s\n", l.Timestamp, l.Summary)
		for _, is := range l.Issues {
			fmt.Fprintf(&b, "  [%s] %s: %s\n", is.ID, is.Severity, is.Description)
		}
	} else {
		b.WriteString("There has been no architecture review yet.\n")
	}
	return Item{ID: "architecture", Kind: "project", Source: "reviews.json", Tags: []string{"architecture"}, Importance: 0.95,
		Title: "Since the last architecture review", Payload: b.String()}, true
}
