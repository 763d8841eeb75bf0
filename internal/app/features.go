package app

import (
	"context"
	"strings"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/workflow"
)

const featuresHint = "baton init"

func (a *App) readFeatures(ctx context.Context) (*features.File, error) {
	return readFile(ctx, a, features.FileName, featuresHint, features.Parse)
}

// ---- features next-candidates

// Candidates are the pending features to choose a batch from.
type Candidates struct {
	TotalPending    int    `json:"total_pending"`
	CandidatesShown int    `json:"candidates_shown"`
	Features        []any  `json:"features"`
	Instruction     string `json:"instruction"`
}

// ---- features pass / pass-batch / fail

// PassResult lists the features marked passing and those already passing.
type PassResult struct {
	Passed         []string `json:"passed"`
	AlreadyPassing []string `json:"already_passing"`
}

func (a *App) setPasses(ctx context.Context, cmdPath string, ids []string, passes bool, reason string) ([]string, error) {
	var already []string
	action := workflow.MarkPassing
	if !passes {
		action = workflow.MarkFailing
	}
	err := a.update(ctx, cmdPath, features.FileName, func(st *state) error {
		if _, err := st.require(action); err != nil {
			return err
		}
		st.taskID = progress.Nullable(strings.Join(ids, ","))
		st.summary = map[bool]string{true: "marked passing: ", false: "marked failing: "}[passes] + strings.Join(ids, ", ")
		f, err := st.features()
		if err != nil {
			return err
		}
		if passes {
			if err := st.ownItem(ids, ""); err != nil {
				return err
			}
			if err := st.checkPassReviews(ids); err != nil {
				return err
			}
		}
		if already, err = f.SetPasses(ids, passes, st.stamp(), reason); err != nil {
			return err
		}
		st.touch(features.FileName)
		if !passes {
			return st.reopenAfterRegression(ids)
		}
		if p, ok, err := st.progressOpt(); err != nil || !ok {
			return err
		} else if _, err := st.landed(p, f); err != nil {
			return err
		}
		return nil
	})
	return already, err
}

// reopenAfterRegression takes a finished project back to work when a
// feature is marked failing: DONE with a feature pending is not done.
func (st *state) reopenAfterRegression(ids []string) error {
	p, ok, err := st.progressOpt()
	if err != nil || !ok {
		return err
	}
	cur, err := p.Status()
	if err != nil || cur.CurrentPhase != workflow.PhaseDone {
		return err
	}
	sit, err := st.situation()
	if err != nil {
		return err
	}
	if d, ok := workflow.AfterRegression(cur.CurrentPhase, ids, sit); ok {
		return st.applyDecision(p, "", d)
	}
	return nil
}

// NonNil is s, or an empty list for nil (JSON [] rather than null).
func NonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Features reads feature_list.json (without the lock: as the last writer
// committed it).
func (a *App) Features(ctx context.Context, c Caller) (*features.File, error) {
	if a.remote != nil {
		return remoteFile(ctx, a, c, "features.read", features.Parse)
	}
	return a.as(c).readFeatures(ctx)
}

// FeatureStats counts the items by type and names the next work item.
func (a *App) FeatureStats(ctx context.Context, c Caller) (features.Stats, error) {
	if a.remote != nil {
		return forward[features.Stats](ctx, a, c, "features.stats", nil)
	}
	a = a.as(c)
	f, err := a.readFeatures(ctx)
	if err != nil {
		return features.Stats{}, err
	}
	st, err := a.openStore(features.FileName)
	if err != nil {
		return features.Stats{}, err
	}
	cfg, err := st.LoadConfig()
	if err != nil {
		return features.Stats{}, err
	}
	return f.StatsWith(cfg.TechDebtThreshold), nil
}

// FeaturePass marks a feature passing (a warning when it already was).
func (a *App) FeaturePass(ctx context.Context, c Caller, id string) (PassResult, error) {
	if a.remote != nil {
		return forward[PassResult](ctx, a, c, "features.pass", IDInput{ID: id})
	}
	id = strings.TrimSpace(id)
	already, err := a.as(c).setPasses(ctx, "baton features pass", []string{id}, true, "")
	if err != nil {
		return PassResult{}, err
	}
	if len(already) > 0 {
		a.warn("Feature %s is already passing", id)
	}
	return PassResult{Passed: []string{id}, AlreadyPassing: NonNil(already)}, nil
}

// FeaturesPassBatch marks several features passing, all or nothing.
func (a *App) FeaturesPassBatch(ctx context.Context, c Caller, ids []string) (PassResult, error) {
	if a.remote != nil {
		return forward[PassResult](ctx, a, c, "features.pass-batch", IDsInput{IDs: ids})
	}
	already, err := a.as(c).setPasses(ctx, "baton features pass-batch", ids, true, "")
	if err != nil {
		return PassResult{}, err
	}
	skip := map[string]bool{}
	for _, id := range already {
		skip[id] = true
	}
	var passed []string
	for _, id := range ids {
		if !skip[id] {
			passed = append(passed, id)
		}
	}
	if len(already) > 0 {
		a.warn("Already passing: %s", strings.Join(already, ", "))
	}
	return PassResult{Passed: NonNil(passed), AlreadyPassing: NonNil(already)}, nil
}

// FailInput is what features fail takes.
type FailInput struct {
	ID     string `json:"id"`
	Reason string `json:"failure_reason"` // why it fails (default: the person's reason)
}

// FailResult is a feature marked failing and why.
type FailResult struct {
	Failed []string `json:"failed"`
	Reason string   `json:"reason"`
}

// FeatureFail marks a feature failing (a regression), saying why.
func (a *App) FeatureFail(ctx context.Context, c Caller, in FailInput) (FailResult, error) {
	if a.remote != nil {
		return forward[FailResult](ctx, a, c, "features.fail", in)
	}
	reason := in.Reason
	if strings.TrimSpace(reason) == "" {
		reason = c.Reason
	}
	if strings.TrimSpace(reason) == "" {
		return FailResult{}, errs.New(errs.Usage, "--failure-reason (-r): say why the feature fails")
	}
	id := strings.TrimSpace(in.ID)
	if _, err := a.as(c).setPasses(ctx, "baton features fail", []string{id}, false, reason); err != nil {
		return FailResult{}, err
	}
	return FailResult{Failed: []string{id}, Reason: reason}, nil
}

// AppendInput is what features append takes: a JSON list of entries
// (inline, "-" for stdin, or a file path) and where they came from.
type AppendInput struct {
	Entries string `json:"entries"`
	Source  string `json:"source_appspec"`
}

// AppendResult lists the ids of the entries appended.
type AppendResult struct {
	Added []string `json:"added"`
}

// FeaturesAppend appends features, bugs or tech debt (ids assigned when
// missing).
func (a *App) FeaturesAppend(ctx context.Context, c Caller, in AppendInput) (AppendResult, error) {
	if a.remote != nil {
		return forward[AppendResult](ctx, a, c, "features.append", in)
	}
	a = a.as(c)
	data, err := a.readArg("--entries", in.Entries)
	if err != nil {
		return AppendResult{}, err
	}
	items, err := parseList("--entries", data)
	if err != nil {
		return AppendResult{}, err
	}
	raws := make([][]byte, len(items))
	for i, it := range items {
		raws[i] = it
	}
	var added []string
	a.creating = true // the initializer's first list may be the first state file
	err = a.update(ctx, "baton features append", features.FileName, func(st *state) error {
		if err := st.mayAppend(raws); err != nil {
			return err
		}
		f, ok, err := st.featuresOpt()
		if err != nil {
			return err
		}
		if !ok {
			f = features.New()
			st.feat = f
		}
		fresh := st.withoutRecordedDebt(f, raws)
		if len(fresh) == 0 {
			return nil
		}
		if added, err = f.Append(fresh, in.Source); err != nil {
			return err
		}
		st.summary = "appended " + strings.Join(added, ", ")
		st.touch(features.FileName)
		return nil
	})
	return AppendResult{Added: NonNil(added)}, err
}
