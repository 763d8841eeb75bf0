package mcpserver

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/ctxpack"
	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
)

// The handlers: tool input → application input, application result →
// tool output. Nothing else happens here.

// ContextOut is the context package as the CLI prints it.
type ContextOut struct {
	Text      string   `json:"text"`
	TokenCost int      `json:"token_cost"`
	Omitted   []string `json:"omitted,omitempty" jsonschema:"items left out for the budget"`
}

func contextTool(ctx context.Context, c *call, in ContextIn) (ContextOut, error) {
	budget := in.Budget
	if budget == 0 {
		budget = ctxpack.DefaultBudget
	}
	pkg, err := c.app.Context(ctx, c.caller, app.ContextInput{Budget: budget})
	if err != nil {
		return ContextOut{}, err
	}
	out := ContextOut{Text: pkg.Text(), TokenCost: pkg.TokenCost}
	for _, o := range pkg.Omitted {
		out.Omitted = append(out.Omitted, o.Title)
	}
	return out, nil
}

func nextTool(ctx context.Context, c *call, _ NoInput) (app.NextResult, error) {
	return c.app.Next(ctx, c.caller)
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

func statusTool(ctx context.Context, c *call, _ NoInput) (Doc, error) {
	return doc(c.app.Status(ctx, c.caller))
}

func sessionCurrentTool(ctx context.Context, c *call, _ NoInput) (Doc, error) {
	return doc(c.app.SessionCurrent(ctx, c.caller))
}

// FeaturesOut is the feature list.
type FeaturesOut struct {
	Features []any `json:"features"`
}

func featuresListTool(ctx context.Context, c *call, _ NoInput) (FeaturesOut, error) {
	f, err := c.app.Features(ctx, c.caller)
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

func featuresGetTool(ctx context.Context, c *call, in IDIn) (Doc, error) {
	f, err := c.app.Features(ctx, c.caller)
	if err != nil {
		return Doc{}, err
	}
	raw, ok := f.Raw(in.ID)
	if !ok {
		return Doc{}, errs.New(errs.NotFound, "Feature %s not found (see 'baton features list')", in.ID)
	}
	return Doc{Doc: gjson.ParseBytes(raw).Value()}, nil
}

func featuresNextTool(ctx context.Context, c *call, in FeatureNextIn) (Doc, error) {
	kind := ""
	if in.Type != "" {
		k, err := features.NormalizeKind(in.Type)
		if err != nil {
			return Doc{}, err
		}
		kind = k
	}
	f, err := c.app.Features(ctx, c.caller)
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

func reviewsGetTool(ctx context.Context, c *call, in ReviewIn) (Doc, error) {
	id, err := optionalReview(in.Review)
	if err != nil {
		return Doc{}, err
	}
	if id == 0 {
		r, err := c.app.LastReview(ctx, c.caller)
		return Doc{Doc: r.Value()}, err
	}
	rv, err := c.app.Reviews(ctx, c.caller)
	if err != nil {
		return Doc{}, err
	}
	r, err := rv.Review(id)
	return Doc{Doc: r.Value()}, err
}

func fixCountTool(ctx context.Context, c *call, in IDIn) (app.FixCountResult, error) {
	return c.app.GetFixCount(ctx, c.caller, in.ID)
}

func progressSessionTool(ctx context.Context, c *call, in SessionIn) (Doc, error) {
	id := in.Session
	if id == 0 {
		id = -1 // the last, as get-session -1
	}
	r, err := c.app.GetSession(ctx, c.caller, id)
	return Doc{Doc: r.Value()}, err
}

// logLimit is how many events the log tool returns when not told.
const logLimit = 50

func logTool(ctx context.Context, c *call, in LogIn) (Doc, error) {
	limit := in.Limit
	if limit == 0 {
		limit = logLimit
	}
	return doc(c.app.Log(ctx, c.caller, app.LogInput{Feature: in.Feature, Session: in.Session, Refused: in.Refused, Limit: limit}))
}

// optionalReview reads a review id given as 3 or R3; "" is 0, the last.
func optionalReview(v string) (int, error) {
	if strings.TrimSpace(v) == "" {
		return 0, nil
	}
	return reviews.ParseReviewID(v)
}

func sessionEndTool(ctx context.Context, c *call, in SessionEndIn) (progress.Session, error) {
	ended, err := c.app.SessionEnd(ctx, c.caller, app.SessionEndInput{
		Outcome: in.Outcome, Summary: in.Summary, Features: strings.Join(in.Features, ","), Commits: in.Commits, Failure: in.Failure,
	})
	if err == nil {
		c.srv.unbind()
	}
	return ended, err
}

func addSessionTool(ctx context.Context, c *call, in AddSessionIn) (progress.Session, error) {
	return c.app.AddSession(ctx, c.caller, app.AddSessionInput{
		Agent: c.srv.Role(), Outcome: in.Outcome, Summary: in.Summary, Features: strings.Join(in.Features, ","), Commits: in.Commits,
	})
}

func addReviewTool(ctx context.Context, c *call, in AddReviewIn) (Doc, error) {
	issues, err := json.Marshal(in.Issues)
	if err != nil {
		return Doc{}, err
	}
	if len(in.Issues) == 0 {
		issues = nil
	}
	r := app.AddReviewInput{Agent: c.srv.Role(), FeatureID: strings.Join(in.Features, ","), Branch: in.Branch, Verdict: in.Verdict, Summary: in.Summary, Issues: string(issues)}
	if in.Coverage != nil {
		r.Coverage, r.HasCoverage = *in.Coverage, true
	}
	return doc(c.app.AddReview(ctx, c.caller, r))
}

func addFixTool(ctx context.Context, c *call, in AddFixIn) (Doc, error) {
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
	return doc(c.app.AddFix(ctx, c.caller, f))
}

func mergeTool(ctx context.Context, c *call, in MergeIn) (app.MergeResult, error) {
	id, err := optionalReview(in.Review)
	if err != nil {
		return app.MergeResult{}, err
	}
	return c.app.ReviewsMerge(ctx, c.caller, app.MergeInput{Review: id})
}

func rejectTool(ctx context.Context, c *call, in MergeIn) (app.RejectResult, error) {
	id, err := optionalReview(in.Review)
	if err != nil {
		return app.RejectResult{}, err
	}
	return c.app.ReviewsReject(ctx, c.caller, app.RejectInput{Review: id})
}

func featureFailTool(ctx context.Context, c *call, in FailIn) (app.FailResult, error) {
	return c.app.FeatureFail(ctx, c.caller, app.FailInput{ID: in.ID, Reason: in.Reason})
}

func appendTool(ctx context.Context, c *call, in AppendIn) (app.AppendResult, error) {
	b, err := json.Marshal(in.Entries)
	if err != nil {
		return app.AppendResult{}, err
	}
	return c.app.FeaturesAppend(ctx, c.caller, app.AppendInput{Entries: string(b), Source: in.Source})
}

// debtEntry is a tech-debt item as the feature list stores it.
type debtEntry struct {
	Type string `json:"type"`
	DebtItem
}

func appendDebtTool(ctx context.Context, c *call, in AppendDebtIn) (app.AppendResult, error) {
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
	return c.app.FeaturesAppend(ctx, c.caller, app.AppendInput{Entries: string(b), Source: source})
}

func featurePassTool(ctx context.Context, c *call, in IDIn) (app.PassResult, error) {
	return c.app.FeaturePass(ctx, c.caller, in.ID)
}

// MarkedOut is a fix marked merged.
type MarkedOut struct {
	Fix         string `json:"fix"`
	MergeCommit string `json:"merge_commit,omitempty"`
}

func markMergedTool(ctx context.Context, c *call, in FixIDIn) (MarkedOut, error) {
	id, err := reviews.ParseFixID(in.Fix)
	if err != nil {
		return MarkedOut{}, err
	}
	if err := c.app.MarkMerged(ctx, c.caller, id, in.MergeCommit); err != nil {
		return MarkedOut{}, err
	}
	return MarkedOut{Fix: reviews.FixLabel(id), MergeCommit: in.MergeCommit}, nil
}

func updateStatusTool(ctx context.Context, c *call, in StatusIn) (Doc, error) {
	var u app.UpdateStatusInput
	if in.Feature != "" {
		u.Feature = &in.Feature
	}
	if in.Branch != "" {
		u.Branch = &in.Branch
	}
	return doc(c.app.UpdateStatus(ctx, c.caller, u))
}

func createBranchTool(ctx context.Context, c *call, in BranchIn) (app.BranchCreated, error) {
	return c.app.BranchCreate(ctx, c.caller, app.BranchCreateInput{Name: in.Name})
}
