package mcpserver

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/app"
	"github.com/baton-cli/baton/ctxpack"
	"github.com/baton-cli/baton/errs"
	"github.com/baton-cli/baton/features"
	"github.com/baton-cli/baton/progress"
	"github.com/baton-cli/baton/reviews"
)

// The handlers: tool input → application input, application result →
// tool output. Nothing else happens here.

// ContextOut is the context package as the CLI prints it.
type ContextOut struct {
	Text      string   `json:"text"`
	TokenCost int      `json:"token_cost"`
	Omitted   []string `json:"omitted,omitempty" jsonschema:"items left out for the budget"`
}

func contextTool(ctx context.Context, s *Server, in ContextIn) (ContextOut, error) {
	budget := in.Budget
	if budget == 0 {
		budget = ctxpack.DefaultBudget
	}
	pkg, err := s.app.Context(ctx, s.caller, app.ContextInput{Budget: budget})
	if err != nil {
		return ContextOut{}, err
	}
	out := ContextOut{Text: pkg.Text(), TokenCost: pkg.TokenCost}
	for _, o := range pkg.Omitted {
		out.Omitted = append(out.Omitted, o.Title)
	}
	return out, nil
}

func nextTool(ctx context.Context, s *Server, _ NoInput) (app.NextResult, error) {
	return s.app.Next(ctx, s.caller)
}

// Doc is a document of the state (a status, a feature, a review, a
// session) as `baton --json` prints it.
type Doc struct {
	Doc any `json:"doc"`
}

// doc turns an application result into a Doc.
func doc(v any, err error) (Doc, error) {
	if err != nil {
		return Doc{}, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return Doc{}, err
	}
	var d any
	err = json.Unmarshal(b, &d)
	return Doc{Doc: d}, err
}

func statusTool(ctx context.Context, s *Server, _ NoInput) (Doc, error) {
	return doc(s.app.Status(ctx, s.caller))
}

func sessionCurrentTool(ctx context.Context, s *Server, _ NoInput) (Doc, error) {
	return doc(s.app.SessionCurrent(ctx, s.caller))
}

// FeaturesOut is the feature list.
type FeaturesOut struct {
	Features []any `json:"features"`
}

func featuresListTool(ctx context.Context, s *Server, _ NoInput) (FeaturesOut, error) {
	f, err := s.app.Features(ctx, s.caller)
	if err != nil {
		return FeaturesOut{}, err
	}
	out := FeaturesOut{Features: []any{}}
	for _, it := range f.All() {
		raw, _ := f.Raw(it.ID)
		out.Features = append(out.Features, gjson.ParseBytes(raw).Value())
	}
	return out, nil
}

func featuresGetTool(ctx context.Context, s *Server, in IDIn) (Doc, error) {
	f, err := s.app.Features(ctx, s.caller)
	if err != nil {
		return Doc{}, err
	}
	raw, ok := f.Raw(in.ID)
	if !ok {
		return Doc{}, errs.New(errs.NotFound, "Feature %s not found (see 'baton features list')", in.ID)
	}
	return Doc{Doc: gjson.ParseBytes(raw).Value()}, nil
}

func featuresNextTool(ctx context.Context, s *Server, in FeatureNextIn) (Doc, error) {
	kind := ""
	if in.Type != "" {
		k, err := features.NormalizeKind(in.Type)
		if err != nil {
			return Doc{}, err
		}
		kind = k
	}
	f, err := s.app.Features(ctx, s.caller)
	if err != nil {
		return Doc{}, err
	}
	pending := f.Pending(kind)
	if len(pending) == 0 {
		return Doc{Doc: map[string]any{"done": true, "type": kind}}, nil
	}
	raw, _ := f.Raw(pending[0].ID)
	return Doc{Doc: gjson.ParseBytes(raw).Value()}, nil
}

func reviewsGetTool(ctx context.Context, s *Server, in ReviewIn) (Doc, error) {
	id, err := optionalReview(in.Review)
	if err != nil {
		return Doc{}, err
	}
	if id == 0 {
		r, err := s.app.LastReview(ctx, s.caller)
		return Doc{Doc: r.Value()}, err
	}
	rv, err := s.app.Reviews(ctx, s.caller)
	if err != nil {
		return Doc{}, err
	}
	r, err := rv.Review(id)
	return Doc{Doc: r.Value()}, err
}

func fixCountTool(ctx context.Context, s *Server, in IDIn) (app.FixCountResult, error) {
	return s.app.GetFixCount(ctx, s.caller, in.ID)
}

func progressSessionTool(ctx context.Context, s *Server, in SessionIn) (Doc, error) {
	id := in.Session
	if id == 0 {
		id = -1 // the last, as get-session -1
	}
	r, err := s.app.GetSession(ctx, s.caller, id)
	return Doc{Doc: r.Value()}, err
}

// logLimit is how many events the log tool returns when not told.
const logLimit = 50

func logTool(ctx context.Context, s *Server, in LogIn) (Doc, error) {
	limit := in.Limit
	if limit == 0 {
		limit = logLimit
	}
	return doc(s.app.Log(ctx, s.caller, app.LogInput{Feature: in.Feature, Session: in.Session, Refused: in.Refused, Limit: limit}))
}

// optionalReview reads a review id given as 3 or R3; "" is 0, the last.
func optionalReview(v string) (int, error) {
	if strings.TrimSpace(v) == "" {
		return 0, nil
	}
	return reviews.ParseReviewID(v)
}

func sessionEndTool(ctx context.Context, s *Server, in SessionEndIn) (progress.Session, error) {
	ended, err := s.app.SessionEnd(ctx, s.caller, app.SessionEndInput{
		Outcome: in.Outcome, Summary: in.Summary, Features: strings.Join(in.Features, ","), Commits: in.Commits, Failure: in.Failure,
	})
	if err == nil {
		s.unbind()
	}
	return ended, err
}

func addSessionTool(ctx context.Context, s *Server, in AddSessionIn) (progress.Session, error) {
	return s.app.AddSession(ctx, s.caller, app.AddSessionInput{
		Agent: s.role, Outcome: in.Outcome, Summary: in.Summary, Features: strings.Join(in.Features, ","), Commits: in.Commits,
	})
}

func addReviewTool(ctx context.Context, s *Server, in AddReviewIn) (Doc, error) {
	issues, err := json.Marshal(in.Issues)
	if err != nil {
		return Doc{}, err
	}
	if len(in.Issues) == 0 {
		issues = nil
	}
	r := app.AddReviewInput{Agent: s.role, FeatureID: strings.Join(in.Features, ","), Branch: in.Branch, Verdict: in.Verdict, Summary: in.Summary, Issues: string(issues)}
	if in.Coverage != nil {
		r.Coverage, r.HasCoverage = *in.Coverage, true
	}
	return doc(s.app.AddReview(ctx, s.caller, r))
}

func addFixTool(ctx context.Context, s *Server, in AddFixIn) (Doc, error) {
	id, err := reviews.ParseReviewID(in.Review)
	if err != nil {
		return Doc{}, err
	}
	f := app.AddFixInput{ReviewID: id, TestsAdded: strings.Join(in.TestsAdded, ",")}
	if len(in.Fixed) > 0 {
		b, _ := json.Marshal(in.Fixed)
		f.IssuesFixed = string(b)
	}
	if len(in.Deferred) > 0 {
		b, _ := json.Marshal(in.Deferred)
		f.IssuesDeferred = string(b)
	}
	return doc(s.app.AddFix(ctx, s.caller, f))
}

func mergeTool(ctx context.Context, s *Server, in MergeIn) (app.MergeResult, error) {
	id, err := optionalReview(in.Review)
	if err != nil {
		return app.MergeResult{}, err
	}
	return s.app.ReviewsMerge(ctx, s.caller, app.MergeInput{Review: id})
}

func rejectTool(ctx context.Context, s *Server, in MergeIn) (app.RejectResult, error) {
	id, err := optionalReview(in.Review)
	if err != nil {
		return app.RejectResult{}, err
	}
	return s.app.ReviewsReject(ctx, s.caller, app.RejectInput{Review: id})
}

func featureFailTool(ctx context.Context, s *Server, in FailIn) (app.FailResult, error) {
	return s.app.FeatureFail(ctx, s.caller, app.FailInput{ID: in.ID, Reason: in.Reason})
}

func appendTool(ctx context.Context, s *Server, in AppendIn) (app.AppendResult, error) {
	b, err := json.Marshal(in.Entries)
	if err != nil {
		return app.AppendResult{}, err
	}
	return s.app.FeaturesAppend(ctx, s.caller, app.AppendInput{Entries: string(b), Source: in.Source})
}

// debtEntry is a tech-debt item as the feature list stores it.
type debtEntry struct {
	Type string `json:"type"`
	DebtItem
}

func appendDebtTool(ctx context.Context, s *Server, in AppendDebtIn) (app.AppendResult, error) {
	entries := make([]debtEntry, len(in.Items))
	for i, it := range in.Items {
		entries[i] = debtEntry{Type: features.TypeTechDebt, DebtItem: it}
	}
	b, err := json.Marshal(entries)
	if err != nil {
		return app.AppendResult{}, err
	}
	source := in.Source
	if source == "" {
		source = "review"
	}
	return s.app.FeaturesAppend(ctx, s.caller, app.AppendInput{Entries: string(b), Source: source})
}

func featurePassTool(ctx context.Context, s *Server, in IDIn) (app.PassResult, error) {
	return s.app.FeaturePass(ctx, s.caller, in.ID)
}

// MarkedOut is a fix marked merged.
type MarkedOut struct {
	Fix         string `json:"fix"`
	MergeCommit string `json:"merge_commit,omitempty"`
}

func markMergedTool(ctx context.Context, s *Server, in FixIDIn) (MarkedOut, error) {
	id, err := reviews.ParseFixID(in.Fix)
	if err != nil {
		return MarkedOut{}, err
	}
	if err := s.app.MarkMerged(ctx, s.caller, id, in.MergeCommit); err != nil {
		return MarkedOut{}, err
	}
	return MarkedOut{Fix: reviews.FixLabel(id), MergeCommit: in.MergeCommit}, nil
}

func updateStatusTool(ctx context.Context, s *Server, in StatusIn) (Doc, error) {
	var u app.UpdateStatusInput
	if in.Feature != "" {
		u.Feature = &in.Feature
	}
	if in.Branch != "" {
		u.Branch = &in.Branch
	}
	return doc(s.app.UpdateStatus(ctx, s.caller, u))
}

func createBranchTool(ctx context.Context, s *Server, in BranchIn) (app.BranchCreated, error) {
	return s.app.BranchCreate(ctx, s.caller, app.BranchCreateInput{Name: in.Name})
}
