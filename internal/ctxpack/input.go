// Package ctxpack assembles the context package an agent session starts
// with (seed 002's ContextRequest / ContextPackage): what its role needs
// now — the task, the history that matters, the git facts, the rules of
// the role and pointers — as ranked items cut to a token budget. It is
// pure: the caller gathers the facts from the files and git, Build ranks
// and cuts them, Text renders them. The CLI's `baton context`, the role
// prompts of `baton run` and any other front end share it.
package ctxpack

import "strings"

// Situation is what a session is for: its role and the kind of work.
type Situation string

// The situations a role prompt and a context package are written for.
const (
	Initializer        Situation = "INITIALIZER"
	Brownfield         Situation = "BROWNFIELD_INITIALIZER"
	Implement          Situation = "IMPLEMENT"
	Bugfix             Situation = "BUGFIX"
	ReviewFeature      Situation = "REVIEW_FEATURE"
	ReviewBug          Situation = "REVIEW_BUG"
	ReviewRefactor     Situation = "REVIEW_REFACTOR"
	ReviewDebt         Situation = "REVIEW_DEBT"
	FixReview          Situation = "FIX_REVIEW"
	FixArchitecture    Situation = "FIX_ARCHITECTURE"
	GlobalFix          Situation = "GLOBAL_FIX"
	ArchitectureReview Situation = "ARCHITECTURE"
)

// Situations lists them all, in workflow order.
func Situations() []Situation {
	return []Situation{Initializer, Brownfield, Implement, Bugfix, ReviewFeature, ReviewBug, ReviewRefactor,
		ReviewDebt, FixReview, FixArchitecture, GlobalFix, ArchitectureReview}
}

// Role is the role a situation's session runs as.
func (s Situation) Role() string {
	switch s {
	case ReviewFeature, ReviewBug, ReviewRefactor, ReviewDebt:
		return "REVIEW"
	case FixReview, FixArchitecture:
		return "FIX"
	}
	return string(s)
}

// Classify names the situation of a session of role on items (their
// kinds: feature, bug, tech_debt) and branch.
func Classify(role string, kinds []string, branch string) Situation {
	all := func(k string) bool {
		for _, x := range kinds {
			if x != k {
				return false
			}
		}
		return len(kinds) > 0
	}
	switch strings.ToUpper(role) {
	case "INITIALIZER":
		return Initializer
	case "BROWNFIELD_INITIALIZER":
		return Brownfield
	case "BUGFIX":
		return Bugfix
	case "IMPLEMENT":
		if all("bug") {
			return Bugfix
		}
		return Implement
	case "GLOBAL_FIX":
		return GlobalFix
	case "ARCHITECTURE":
		return ArchitectureReview
	case "FIX":
		if len(kinds) == 0 && strings.HasPrefix(branch, "refactor/") {
			return FixArchitecture
		}
		return FixReview
	}
	switch {
	case all("tech_debt"):
		return ReviewDebt
	case len(kinds) == 0 && strings.HasPrefix(branch, "refactor/"):
		return ReviewRefactor
	case all("bug"):
		return ReviewBug
	}
	return ReviewFeature
}

// WorkItem is a feature, bug or tech-debt item of the feature list.
type WorkItem struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Kind        string   `json:"type"` // feature, bug, tech_debt
	Description string   `json:"description,omitempty"`
	Steps       []string `json:"steps,omitempty"`
	Passes      bool     `json:"passes"`
	Source      string   `json:"source,omitempty"` // where a debt item came from
}

// Issue is one issue of a review.
type Issue struct {
	ID          string `json:"id"`
	Severity    string `json:"severity"`
	Description string `json:"description"`
	Location    string `json:"location,omitempty"`
	Suggestion  string `json:"suggestion,omitempty"`
}

// Review is a recorded review, with its issues.
type Review struct {
	ID           int     `json:"review_id"`
	Architecture bool    `json:"architecture"`
	Feature      string  `json:"feature_id,omitempty"`
	Branch       string  `json:"branch,omitempty"`
	Verdict      string  `json:"verdict"`
	Summary      string  `json:"summary"`
	Timestamp    string  `json:"timestamp,omitempty"`
	Issues       []Issue `json:"issues,omitempty"`
	Health       string  `json:"health_status,omitempty"`
}

// IssuePrefix is how the review's issue ids begin: R3- or A3-.
func (r Review) IssuePrefix() string {
	if r.Architecture {
		return "A" + itoa(r.ID) + "-"
	}
	return "R" + itoa(r.ID) + "-"
}

// Fix is a recorded fix.
type Fix struct {
	ID       int      `json:"fix_id"`
	ReviewID int      `json:"review_id"`
	Fixed    []string `json:"issues_fixed,omitempty"`
	Deferred []string `json:"issues_deferred,omitempty"`
	Time     string   `json:"timestamp,omitempty"`
}

// Session is a finished session of the history.
type Session struct {
	ID      int    `json:"session_id"`
	Role    string `json:"agent_type"`
	Outcome string `json:"outcome"`
	Summary string `json:"summary"`
	Ended   string `json:"completed_at,omitempty"`
	Range   string `json:"commit_range,omitempty"`
}

// Git is what git says about the work.
type Git struct {
	Branch       string   `json:"branch,omitempty"`
	BranchExists bool     `json:"branch_exists"`
	Main         string   `json:"main"`
	MergeBase    string   `json:"merge_base,omitempty"`
	Head         string   `json:"head,omitempty"`    // main's head
	Tip          string   `json:"tip,omitempty"`     // the branch's head
	Commits      []string `json:"commits,omitempty"` // "hash subject", oldest first
	DiffStat     string   `json:"diff_stat,omitempty"`
}

// Input is everything the package may draw on. The caller fills what it
// has; empty fields produce no item.
type Input struct {
	Situation              Situation
	Session                int // 0 for a person's request
	Project                string
	Work                   []WorkItem // the items the session works on
	Branch                 string     // the branch the session works on
	Reason                 string     // why the workflow chose this step
	Review                 *Review    // FIX: the review answered; REVIEW: the last review of this work
	Earlier                []Review   // earlier reviews of this work, oldest first
	Fixes                  []Fix      // fixes of this work
	History                []Session  // previous sessions on this work, oldest first
	FixCount, MaxFixCycles int
	Git                    Git
	// ARCHITECTURE: the interval, features merged since the last
	// architecture review, and that review.
	Interval         int
	MergedSince      []string
	LastArchitecture *Review
	SpecFile         string   // the specification, relative to the project
	AgentDocs        []string // AGENTS.md, CLAUDE.md, ... that exist
	TestCommand      string
	Backlog          int // pending items, for INITIALIZER/ARCHITECTURE
}
