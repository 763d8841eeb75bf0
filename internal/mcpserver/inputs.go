package mcpserver

// The tools' inputs. Descriptions are short on purpose: every role's
// whole tool list stays under 5,000 tokens of schema (schema_test.go).
// Ids take the forms the CLI prints: reviews 3 or R3, fixes 3 or FIX-3.

// NoInput is the input of a tool that takes none.
type NoInput struct{}

// ContextIn asks for the session's context package.
type ContextIn struct {
	Budget int `json:"budget,omitempty" jsonschema:"largest package in tokens (default 4000)"`
}

// IDIn names one record.
type IDIn struct {
	ID string `json:"id" jsonschema:"the id"`
}

// FeatureNextIn asks for the next pending item.
type FeatureNextIn struct {
	Type string `json:"type,omitempty" jsonschema:"only this type: feature, bug or tech_debt"`
}

// ReviewIn names a review; none means the last.
type ReviewIn struct {
	Review string `json:"review,omitempty" jsonschema:"3 or R3 (default: the last review)"`
}

// SessionIn names a session; none means the last.
type SessionIn struct {
	Session int `json:"session,omitempty" jsonschema:"session id (default: the last)"`
}

// LogIn filters the audit timeline.
type LogIn struct {
	Feature string `json:"feature,omitempty" jsonschema:"only this item's story"`
	Session int    `json:"session,omitempty" jsonschema:"only this session's events"`
	Refused bool   `json:"refused,omitempty" jsonschema:"only refused attempts"`
	Limit   int    `json:"limit,omitempty" jsonschema:"the last N events (default 50)"`
}

// SessionEndIn ends the bound session.
type SessionEndIn struct {
	Outcome  string   `json:"outcome" jsonschema:"SUCCESS, READY_FOR_REVIEW, NEEDS_FIX, REJECTED or ERROR"`
	Summary  string   `json:"summary" jsonschema:"what the session did"`
	Features []string `json:"features,omitempty" jsonschema:"feature ids touched (default: the session's)"`
	Commits  []string `json:"commits,omitempty" jsonschema:"hash:message of commits to name"`
	Failure  string   `json:"failure,omitempty" jsonschema:"with ERROR: the failure code"`
}

// AddSessionIn records a finished session (the predecessor's add-session).
type AddSessionIn struct {
	Outcome  string   `json:"outcome" jsonschema:"SUCCESS, READY_FOR_REVIEW, NEEDS_FIX, REJECTED or ERROR"`
	Summary  string   `json:"summary" jsonschema:"what the session did"`
	Features []string `json:"features,omitempty" jsonschema:"feature ids touched"`
	Commits  []string `json:"commits,omitempty" jsonschema:"hash:message"`
}

// Issue is one issue of a review.
type Issue struct {
	Severity    string `json:"severity" jsonschema:"critical, major, minor or suggestion"`
	Description string `json:"description"`
	Location    string `json:"location,omitempty" jsonschema:"file:line"`
	Suggestion  string `json:"suggestion,omitempty"`
}

// AddReviewIn records a review of a branch.
type AddReviewIn struct {
	Verdict  string   `json:"verdict" jsonschema:"PASS, PASS_WITH_COMMENTS, REQUEST_CHANGES or REJECT"`
	Summary  string   `json:"summary"`
	Features []string `json:"features,omitempty" jsonschema:"feature ids reviewed"`
	Branch   string   `json:"branch,omitempty" jsonschema:"branch reviewed (REVIEW)"`
	Issues   []Issue  `json:"issues,omitempty"`
	Coverage *float64 `json:"coverage,omitempty" jsonschema:"ARCHITECTURE: test coverage percent"`
}

// FixedIssue is one issue a fix answers.
type FixedIssue struct {
	IssueID     string `json:"issue_id" jsonschema:"as the review names it, e.g. R3-M1"`
	Description string `json:"fix_description,omitempty"`
	Commit      string `json:"commit,omitempty" jsonschema:"commit on the fix branch"`
}

// AddFixIn records a fix answering a review.
type AddFixIn struct {
	Review     string       `json:"review" jsonschema:"review answered: 3 or R3"`
	Fixed      []FixedIssue `json:"issues_fixed,omitempty"`
	Deferred   []string     `json:"issues_deferred,omitempty" jsonschema:"issue ids left for later"`
	TestsAdded []string     `json:"tests_added,omitempty"`
}

// MergeIn merges a passing review's branch.
type MergeIn struct {
	Review string `json:"review,omitempty" jsonschema:"3 or R3 (default: the last review)"`
}

// FailIn marks a feature failing.
type FailIn struct {
	ID     string `json:"id" jsonschema:"feature id"`
	Reason string `json:"reason" jsonschema:"why it fails"`
}

// AppendIn appends items to the feature list.
type AppendIn struct {
	Entries []Entry `json:"entries"`
	Source  string  `json:"source" jsonschema:"where they came from (spec file)"`
}

// Entry is one item of the feature list.
type Entry struct {
	ID          string   `json:"id,omitempty" jsonschema:"assigned when missing"`
	Type        string   `json:"type,omitempty" jsonschema:"feature (default), bug or tech_debt"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Steps       []string `json:"steps,omitempty" jsonschema:"test steps"`
	Priority    int      `json:"priority,omitempty"`
}

// BranchIn names a branch to create.
type BranchIn struct {
	Name string `json:"name" jsonschema:"feature/..., bugfix/... or refactor/..."`
}

// AppendDebtIn records tech-debt items.
type AppendDebtIn struct {
	Items  []DebtItem `json:"items"`
	Source string     `json:"source,omitempty" jsonschema:"where they came from (default: the review)"`
}

// DebtItem is one tech-debt item.
type DebtItem struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	SourceReview string `json:"source_review,omitempty" jsonschema:"the issue id it comes from, e.g. R3-m1"`
}

// FixIDIn names a fix.
type FixIDIn struct {
	Fix         string `json:"fix" jsonschema:"3 or FIX-3"`
	MergeCommit string `json:"merge_commit,omitempty" jsonschema:"the merge commit on main"`
}

// StatusIn sets the current feature or branch.
type StatusIn struct {
	Feature string `json:"feature,omitempty" jsonschema:"the feature now worked on"`
	Branch  string `json:"branch,omitempty" jsonschema:"the branch of the work"`
}
