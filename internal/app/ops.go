package app

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"

	"github.com/baton-cli/baton/internal/ctxpack"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/workflow"
)

// The registry of operations: what a front end that dispatches by name
// (the MCP server's tools, the broker's requests) needs to know of each
// operation — its name, its input and result types, whether it only reads
// or may destroy work, and which roles the responsibility matrix lets call
// it — with no switch of its own. The CLI calls the typed methods directly.

// OpInfo describes an operation.
type OpInfo struct {
	// Name is the operation's name: the CLI's command path below baton,
	// with dots ("reviews.merge").
	Name    string `json:"name"`
	Summary string `json:"summary"`
	// Action is the responsibility matrix's action the operation takes
	// ("" for one that records nothing the matrix governs).
	Action workflow.Action `json:"action,omitempty"`
	// Roles may call it: the matrix's roles for Action plus HUMAN, every
	// role for a read, HUMAN alone for what only launchers and people do.
	Roles       []string `json:"roles"`
	ReadOnly    bool     `json:"read_only"`
	Destructive bool     `json:"destructive"` // moves or deletes git refs, or replaces records
}

// Operation is one operation, for dispatch by name.
type Operation interface {
	Info() OpInfo
	// NewInput is a pointer to a zero input (for deriving a schema).
	NewInput() any
	// Invoke decodes in (a JSON object; empty means the zero input), runs
	// the operation for c and returns its result.
	Invoke(ctx context.Context, a *App, c Caller, in json.RawMessage) (any, error)
}

// Op is an operation with its input and result types.
type Op[In, Out any] struct {
	OpInfo
	Run func(a *App, ctx context.Context, c Caller, in In) (Out, error)
}

// Info describes the operation.
func (o Op[In, Out]) Info() OpInfo { return o.OpInfo }

// NewInput is a pointer to a zero input.
func (o Op[In, Out]) NewInput() any { return new(In) }

// Invoke decodes the input strictly (an unknown field is a usage error
// naming it) and runs the operation.
func (o Op[In, Out]) Invoke(ctx context.Context, a *App, c Caller, raw json.RawMessage) (any, error) {
	var in In
	if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return nil, errs.New(errs.Usage, "%s: the input is not what the operation takes: %v", o.Name, err)
		}
	}
	return o.Run(a, ctx, c, in)
}

// NoInput is the input of an operation that takes none.
type NoInput struct{}

// IDInput names one item: a feature, bug or debt id.
type IDInput struct {
	ID string `json:"id"`
}

// IDsInput names several features (all or nothing).
type IDsInput struct {
	IDs []string `json:"ids"`
}

// FeatureInput names a feature or a batch ("F001,F002").
type FeatureInput struct {
	Feature string `json:"feature"`
}

// FieldInput names one field (a gjson path) of a record; "" for all.
type FieldInput struct {
	Field string `json:"field,omitempty"`
}

// SessionRefInput names a recorded session: its id, or -1 for the last.
type SessionRefInput struct {
	Session int `json:"session"`
}

// MarkMergedInput names a fix merged to main, and the merge commit.
type MarkMergedInput struct {
	FixID       int    `json:"fix_id"`
	MergeCommit string `json:"merge_commit,omitempty"`
}

// ReviewsInitInput says whether reviews.json is made anew over one that
// exists (its records must be kept).
type ReviewsInitInput struct {
	Force bool `json:"force,omitempty"`
}

// CompletionsInput names what a shell completes.
type CompletionsInput struct {
	Kind string `json:"kind"`
}

// fileJSON is a state file as the JSON it holds.
func fileJSON[F interface{ Bytes() []byte }](f F, err error) (json.RawMessage, error) {
	if err != nil {
		return nil, err
	}
	return json.RawMessage(f.Bytes()), nil
}

// MarkMergedResult is the fix marked merged.
type MarkMergedResult struct {
	FixID        int  `json:"fix_id"`
	MergedToMain bool `json:"merged_to_main"`
}

func info(name, summary string, action workflow.Action, readOnly, destructive bool) OpInfo {
	return OpInfo{Name: name, Summary: summary, Action: action, Roles: workflow.CallableBy(action, readOnly), ReadOnly: readOnly, Destructive: destructive}
}

// raw turns a record read without the lock into JSON.
func raw(r interface{ String() string }) json.RawMessage { return json.RawMessage(r.String()) }

// Operations lists every operation a front end may dispatch by name,
// sorted by name.
func Operations() []Operation {
	ops := append(append(sessionOps(), progressOps()...), reviewOps()...)
	ops = append(append(append(ops, featureOps()...), auditOps()...), verificationOps()...)
	sort.Slice(ops, func(i, j int) bool { return ops[i].Info().Name < ops[j].Info().Name })
	return ops
}

// Lookup finds an operation by name.
func Lookup(name string) (Operation, bool) {
	for _, o := range Operations() {
		if o.Info().Name == name {
			return o, true
		}
	}
	return nil, false
}

func sessionOps() []Operation {
	end := info("session.end", "Finish the caller's session: record it and compute the next phase", "", false, false)
	end.Roles = append(append([]string{}, workflow.Roles...), workflow.Human) // every session ends itself
	return []Operation{
		Op[SessionStartInput, SessionStartResult]{info("session.start", "Open a session for a role and return its credential (launchers and people)", "", false, false), (*App).SessionStart},
		Op[SessionEndInput, progress.Session]{end, (*App).SessionEnd},
		Op[NoInput, SessionCurrentResult]{info("session.current", "The caller's session, or every open session", "", true, false),
			func(a *App, ctx context.Context, c Caller, _ NoInput) (SessionCurrentResult, error) {
				return a.SessionCurrent(ctx, c)
			}},
	}
}

func progressOps() []Operation {
	return []Operation{
		Op[AddSessionInput, progress.Session]{info("progress.add-session", "Record a finished session (id assigned under the lock)", workflow.RecordSession, false, false), (*App).AddSession},
		Op[UpdateStatusInput, json.RawMessage]{info("progress.update-status", "Update the current phase, feature or branch", workflow.SetStatus, false, false), (*App).UpdateStatus},
		Op[ProgressInitInput, ProgressInitResult]{info("progress.init", "Create progress.json", workflow.InitFiles, false, false), (*App).ProgressInit},
		Op[NoInput, json.RawMessage]{info("progress.read", "progress.json as the last writer committed it", "", true, false),
			func(a *App, ctx context.Context, c Caller, _ NoInput) (json.RawMessage, error) {
				p, err := a.Progress(ctx, c)
				return fileJSON(p, err)
			}},
		Op[FieldInput, json.RawMessage]{info("progress.get-status", "The status (a field named is checked against a valid file)", "", true, false),
			func(a *App, ctx context.Context, c Caller, in FieldInput) (json.RawMessage, error) {
				st, err := a.GetStatus(ctx, c, in.Field)
				return raw(st), err
			}},
		Op[NoInput, int]{info("progress.next-session-id", "The id the next recorded session gets", "", true, false),
			func(a *App, ctx context.Context, c Caller, _ NoInput) (int, error) { return a.NextSessionID(ctx, c) }},
		Op[SessionRefInput, json.RawMessage]{info("progress.get-session", "A recorded session (-1 for the last)", "", true, false),
			func(a *App, ctx context.Context, c Caller, in SessionRefInput) (json.RawMessage, error) {
				s, err := a.GetSession(ctx, c, in.Session)
				return raw(s), err
			}},
		Op[NoInput, ReviewTypeResult]{info("progress.get-review-type", "Whether REVIEW reviews a FEATURE or an ARCHITECTURE_REFACTOR", "", true, false),
			func(a *App, ctx context.Context, c Caller, _ NoInput) (ReviewTypeResult, error) {
				return a.GetReviewType(ctx, c)
			}},
	}
}

func reviewOps() []Operation {
	return []Operation{
		Op[ReviewsInitInput, string]{info("reviews.init", "Create reviews.json", workflow.InitFiles, false, false),
			func(a *App, ctx context.Context, c Caller, in ReviewsInitInput) (string, error) {
				return a.ReviewsInit(ctx, c, in.Force)
			}},
		Op[NoInput, json.RawMessage]{info("reviews.read", "reviews.json as the last writer committed it", "", true, false),
			func(a *App, ctx context.Context, c Caller, _ NoInput) (json.RawMessage, error) {
				r, err := a.Reviews(ctx, c)
				return fileJSON(r, err)
			}},
		Op[AddReviewInput, reviews.Review]{info("reviews.add-review", "Record a review (ids assigned under the lock)", workflow.AddReview, false, false), (*App).AddReview},
		Op[AddFixInput, reviews.Fix]{info("reviews.add-fix", "Record a fix answering a review (refused past the fix-cycle limit)", workflow.AddFix, false, false), (*App).AddFix},
		Op[FeatureInput, FixCountResult]{info("reviews.get-fix-count", "Fixes recorded for a feature against the limit (refused at the limit)", "", true, false),
			func(a *App, ctx context.Context, c Caller, in FeatureInput) (FixCountResult, error) {
				return a.GetFixCount(ctx, c, in.Feature)
			}},
		Op[NoInput, json.RawMessage]{info("reviews.get-last", "The last review", "", true, false),
			func(a *App, ctx context.Context, c Caller, _ NoInput) (json.RawMessage, error) {
				r, err := a.LastReview(ctx, c)
				return raw(r), err
			}},
		Op[MergeInput, MergeResult]{info("reviews.merge", "Merge a passing review's branch into main, mark its features passing, delete the branch", workflow.Merge, false, true), (*App).ReviewsMerge},
		Op[RejectInput, RejectResult]{info("reviews.reject", "Reject a review's work: delete its branch, requeue its features", workflow.DeleteBranch, false, true), (*App).ReviewsReject},
		Op[MarkMergedInput, MarkMergedResult]{info("reviews.mark-merged", "Mark a fix merged to main", workflow.MarkMerged, false, false),
			func(a *App, ctx context.Context, c Caller, in MarkMergedInput) (MarkMergedResult, error) {
				err := a.MarkMerged(ctx, c, in.FixID, in.MergeCommit)
				return MarkMergedResult{FixID: in.FixID, MergedToMain: err == nil}, err
			}},
	}
}

func featureOps() []Operation {
	return []Operation{
		Op[IDInput, PassResult]{info("features.pass", "Mark a feature passing", workflow.MarkPassing, false, false),
			func(a *App, ctx context.Context, c Caller, in IDInput) (PassResult, error) {
				return a.FeaturePass(ctx, c, in.ID)
			}},
		Op[IDsInput, PassResult]{info("features.pass-batch", "Mark several features passing, all or nothing", workflow.MarkPassing, false, false),
			func(a *App, ctx context.Context, c Caller, in IDsInput) (PassResult, error) {
				if len(in.IDs) == 0 {
					return PassResult{}, errs.New(errs.Usage, "features.pass-batch: ids: name at least one feature")
				}
				return a.FeaturesPassBatch(ctx, c, in.IDs)
			}},
		Op[FailInput, FailResult]{info("features.fail", "Mark a feature failing (a regression), saying why", workflow.MarkFailing, false, false), (*App).FeatureFail},
		Op[AppendInput, AppendResult]{info("features.append", "Append features, bugs or tech debt (ids assigned when missing)", workflow.AppendFeatures, false, false), (*App).FeaturesAppend},
		Op[NoInput, json.RawMessage]{info("features.read", "feature_list.json as the last writer committed it", "", true, false),
			func(a *App, ctx context.Context, c Caller, _ NoInput) (json.RawMessage, error) {
				f, err := a.Features(ctx, c)
				return fileJSON(f, err)
			}},
		Op[NoInput, features.Stats]{info("features.stats", "Counts by type and the next work item", "", true, false),
			func(a *App, ctx context.Context, c Caller, _ NoInput) (features.Stats, error) {
				return a.FeatureStats(ctx, c)
			}},
	}
}

func auditOps() []Operation {
	return []Operation{
		Op[NoInput, StatusResult]{info("status", "Phase, feature, branch, counters, last session and review, fix cycles, problems", "", true, false),
			func(a *App, ctx context.Context, c Caller, _ NoInput) (StatusResult, error) { return a.Status(ctx, c) }},
		Op[NoInput, NextResult]{info("next", "Which role runs next, on what, and the rule that decided it", "", true, false),
			func(a *App, ctx context.Context, c Caller, _ NoInput) (NextResult, error) { return a.Next(ctx, c) }},
		Op[VerifyInput, VerifyResult]{info("verify", "Check the audit chain, the files against the last event, the invariants and git", "", true, false),
			func(a *App, ctx context.Context, c Caller, in VerifyInput) (VerifyResult, error) {
				return a.Verify(ctx, c, in)
			}},
		Op[ContextInput, ctxpack.Package]{info("context", "What the caller's role needs now: task, history, git facts, rules, pointers", "", true, false), (*App).Context},
		Op[NoInput, ReportData]{info("report", "What the audit report shows: the timeline, each item's story, the review cycles, verify", "", true, false),
			func(a *App, ctx context.Context, c Caller, _ NoInput) (ReportData, error) { return a.Report(ctx, c) }},
		Op[CompletionsInput, []string]{info("completions", "The ids a shell completes (feature, review, fix, session, schema)", "", true, false),
			func(a *App, ctx context.Context, c Caller, in CompletionsInput) ([]string, error) {
				return a.Completions(ctx, c, in.Kind), nil
			}},
		Op[LogInput, LogResult]{info("log", "The audit timeline, filtered", "", true, false), (*App).Log},
		Op[IDInput, Story]{info("show", "One item's whole story", "", true, false),
			func(a *App, ctx context.Context, c Caller, in IDInput) (Story, error) { return a.Show(ctx, c, in.ID) }},
		Op[BranchCreateInput, BranchCreated]{info("branch.create", "Create a work branch at main (IMPLEMENT: feature branches, FIX: refactor/ branches)", workflow.CreateRefactorBranch, false, false), (*App).BranchCreate},
	}
}
