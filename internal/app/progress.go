package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/workflow"
)

const progressHint = "baton progress init -n NAME -c COUNT"

// ---- progress init

// ProgressInitInput is what progress init takes.
type ProgressInitInput struct {
	Name  string `json:"project_name"`
	Count int    `json:"feature_count"`
	Force bool   `json:"force,omitempty"`
}

// ProgressInitResult is the created progress.json and where it is.
type ProgressInitResult struct {
	Path string          `json:"path"`
	Data json.RawMessage `json:"progress"`
}

// ---- progress add-session

// AddSessionInput is what add-session takes. CurrentFeature and
// CurrentBranch set the status when given ("null" clears).
type AddSessionInput struct {
	Agent          string   `json:"agent_type"`
	Summary        string   `json:"summary"`
	Outcome        string   `json:"outcome"`
	Features       string   `json:"features,omitempty"`
	Commits        []string `json:"commits,omitempty"` // "hash:message"
	CommitFrom     string   `json:"commit_from,omitempty"`
	CommitTo       string   `json:"commit_to,omitempty"`
	StartedAt      string   `json:"started_at,omitempty"`
	NextPhase      string   `json:"next_phase,omitempty"`
	CurrentFeature *string  `json:"current_feature,omitempty"`
	CurrentBranch  *string  `json:"current_branch,omitempty"`
}

// parseCommits reads --commits "hash:message" values (the message may be
// left out); in a repository each hash must be a commit there, and outside
// one a commit hash in form.
func (a *App) parseCommits(values []string) ([]progress.Commit, error) {
	out := []progress.Commit{}
	for _, v := range values {
		hash, msg, _ := strings.Cut(v, ":")
		hash = strings.TrimSpace(hash)
		if hash == "" || strings.HasPrefix(hash, "-") {
			return nil, errs.New(errs.Usage, "--commits: %q is not \"hash:message\" (such as \"1a2b3c4:Add the health check\")", v)
		}
		if a.repo() == nil && !isCommitHash(hash) {
			return nil, errs.New(errs.Usage, "--commits: %q is not \"hash:message\" with a commit hash: outside a git repository the hash is the hex hash git prints, 4 to 40 digits (such as \"1a2b3c4:Add the health check\")", v)
		}
		h, err := a.commitRef("--commits", hash)
		if err != nil {
			return nil, err
		}
		out = append(out, progress.Commit{Hash: *h, Message: strings.TrimSpace(msg)})
	}
	return out, nil
}

func (o AddSessionInput) session(a *App) (progress.Session, error) {
	var s progress.Session
	var err error
	if s.AgentType, err = progress.Choose("--agent-type", o.Agent, progress.AgentTypes, nil); err != nil {
		return s, err
	}
	if s.Outcome, err = progress.NormalizeOutcome(o.Outcome); err != nil {
		return s, err
	}
	if o.NextPhase != "" {
		if _, err := progress.Choose("--next-phase", o.NextPhase, progress.Phases, nil); err != nil {
			return s, err
		}
	}
	if s.Commits, err = a.parseCommits(o.Commits); err != nil {
		return s, err
	}
	now := jsondoc.Timestamp(a.env.Now())
	s.StartedAt, s.CompletedAt = now, now
	if o.StartedAt != "" {
		t, err := jsondoc.ParseTime(o.StartedAt)
		if err != nil {
			return s, errs.New(errs.Usage, "--started-at: %v", err)
		}
		s.StartedAt = jsondoc.Timestamp(t)
	}
	s.Summary = o.Summary
	s.FeaturesTouched = features.SplitIDs(o.Features)
	from, err := a.commitRef("--commit-from", o.CommitFrom)
	if err != nil {
		return s, err
	}
	to, err := a.commitRef("--commit-to", o.CommitTo)
	if err != nil {
		return s, err
	}
	if to == nil {
		to = a.head()
	}
	s.CommitRange = &progress.Range{From: from, To: to}
	return s, nil
}

// checkFeatureIDs refuses feature ids the feature list does not have (when
// there is a feature list).
func checkFeatureIDs(st *state, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	feat, ok, err := st.featuresOpt()
	if err != nil || !ok {
		return err
	}
	return feat.CheckIDs(ids)
}

// setHead records HEAD's short hash in the status.
func (st *state) setHead(p *progress.File) error {
	if h := st.app.head(); h != nil {
		return p.SetStatus("head_commit", *h)
	}
	return nil
}

// ---- progress update-status

// UpdateStatusInput is what update-status takes. The counters are
// computed; the values given are only compared (and a difference warned).
type UpdateStatusInput struct {
	Phase        string  `json:"phase,omitempty"`
	Feature      *string `json:"feature,omitempty"`
	Branch       *string `json:"branch,omitempty"`
	Completed    int     `json:"features_completed,omitempty"`
	Passing      int     `json:"features_passing,omitempty"`
	HasCompleted bool    `json:"has_features_completed,omitempty"`
	HasPassing   bool    `json:"has_features_passing,omitempty"`
}

// findSession finds a session in progress.json without decoding the
// others: -N counts from the end.
func findSession(data []byte, id int) (string, error) {
	sessions := gjson.GetBytes(data, "sessions")
	notFound := errs.New(errs.NotFound, "Session %d not found (see 'baton progress list')", id)
	if !sessions.IsArray() {
		return "", notFound
	}
	if id < 0 {
		all := sessions.Array()
		if -id > len(all) {
			return "", notFound
		}
		return all[len(all)+id].Raw, nil
	}
	var found string
	sessions.ForEach(func(_, s gjson.Result) bool {
		if s.Get("session_id").Int() == int64(id) {
			found = s.Raw
			return false
		}
		return true
	})
	if found == "" {
		return "", notFound
	}
	return found, nil
}

// ReviewTypeResult says what REVIEW reviews now.
type ReviewTypeResult struct {
	ReviewType string   `json:"review_type"`
	FeatureID  *string  `json:"-"`
	Features   []string `json:"features"`
	Branch     *string  `json:"branch"`
	// ItemType is "tech_debt" when the items are a tech-debt batch: the
	// reviewer reviews their fixes and its PASS names them.
	ItemType string `json:"item_type,omitempty"`
}

// Deref is *s, or "" for nil.
func Deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ---- progress list

// SessionLine is a session as progress list shows it.
type SessionLine struct {
	SessionID int    `json:"session_id"`
	AgentType string `json:"agent_type"`
	Outcome   string `json:"outcome"`
	Summary   string `json:"summary"`
}

// Truncate cuts s to n runes.
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

// ProgressInit creates progress.json.
func (a *App) ProgressInit(ctx context.Context, c Caller, in ProgressInitInput) (ProgressInitResult, error) {
	if a.remote != nil {
		return forward[ProgressInitResult](ctx, a, c, "progress.init", in)
	}
	var out ProgressInitResult
	err := a.as(c).runProgressInit(ctx, "baton progress init", in, &out)
	return out, err
}

func (a *App) runProgressInit(ctx context.Context, cmdPath string, o ProgressInitInput, out *ProgressInitResult) error {
	if o.Count < 0 {
		return errs.New(errs.Usage, "--feature-count: must not be negative, got %d", o.Count)
	}
	var p *progress.File
	var path string
	a.creating = true
	err := a.update(ctx, cmdPath, progress.FileName, func(st *state) error {
		if _, err := st.require(workflow.InitFiles); err != nil {
			return err
		}
		path = st.tx.Store().Path(progress.FileName)
		phase := ""
		if old, err := st.tx.Read(progress.FileName); err != nil {
			return err
		} else if old != nil && !o.Force {
			if phase, err = st.emptyProgress(path); err != nil {
				return err
			}
		} else if old != nil {
			if cur, err := st.progress(); err != nil {
				return err
			} else if err := st.keepRecords(progress.FileName, cur.Len(), "session(s)"); err != nil {
				return err
			}
		}
		p = progress.New(o.Name, o.Count, st.stamp(), a.head())
		if phase != "" {
			if err := p.SetStatus("current_phase", phase); err != nil {
				return err
			}
		}
		st.prog, st.progNew = p, true
		st.touch(progress.FileName)
		return nil
	})
	if err != nil {
		return err
	}
	*out = ProgressInitResult{Path: path, Data: p.Bytes()}
	return nil
}

// AddSession records a finished session (its id assigned under the lock)
// and computes the next phase.
func (a *App) AddSession(ctx context.Context, c Caller, in AddSessionInput) (progress.Session, error) {
	if a.remote != nil {
		return forward[progress.Session](ctx, a, c, "progress.add-session", in)
	}
	var out progress.Session
	err := a.as(c).runAddSession(ctx, "baton progress add-session", in, &out)
	return out, err
}

func (a *App) runAddSession(ctx context.Context, cmdPath string, o AddSessionInput, out *progress.Session) error {
	in, err := o.session(a)
	if err != nil {
		return err
	}
	var added progress.Session
	early := a.earlyRange(in)
	err = a.update(ctx, cmdPath, progress.FileName, func(st *state) error {
		who, err := st.requireAs(workflow.RecordSession, in.AgentType)
		if err != nil {
			return err
		}
		st.debtFixForReview(who, &in)
		p, err := st.progress()
		if err != nil {
			return err
		}
		if err := checkFeatureIDs(st, in.FeaturesTouched); err != nil {
			return err
		}
		if err := st.ownFeatures(in.FeaturesTouched); err != nil {
			return err
		}
		if in.Commits, in.CommitRange, err = early.get(a, st.cfg, in); err != nil {
			return err
		}
		open, err := st.openSessions()
		if err != nil {
			return err
		}
		var lane *progress.Lane
		if who != nil && who.Session != nil {
			if l, ok := p.LaneOf(*who.Session); ok {
				lane = &l
			}
		}
		if added, err = st.recordSession(p, open, who, in); err != nil {
			return err
		}
		st.touch(progress.FileName)
		st.summary = fmt.Sprintf("added session %d (%s, %s)", added.SessionID, added.AgentType, added.Outcome)
		st.record = added
		st.taskID = progress.Nullable(strings.Join(added.FeaturesTouched, ","))
		x, feature, branch, err := st.recordedWork(p, open, who, o, added, lane)
		if err != nil {
			return err
		}
		if err := st.checkReady(added, a.workBranch(branch)); err != nil {
			return err
		}
		if err := st.afterSession(p, x, added, feature, branch, added.AgentType, o.NextPhase); err != nil {
			return err
		}
		return st.setHead(p)
	})
	if err != nil {
		return err
	}
	*out = added
	return nil
}

// recordedWork is the item, feature and branch a recorded session's work
// is about: what the record names, else its lane's (a lane's session
// records its own item's work), else the status's.
func (st *state) recordedWork(p *progress.File, open *progress.OpenSessions, who *actor, o AddSessionInput, added progress.Session, lane *progress.Lane) (string, *string, *string, error) {
	cur, err := p.Status()
	if err != nil {
		return "", nil, nil, err
	}
	feature, branch := cur.CurrentFeature, cur.CurrentBranch
	if lane != nil {
		feature, branch = workflow.ItemFeature(lane.Item, lane.Branch), lane.Branch
	}
	if len(added.FeaturesTouched) > 0 {
		feature = progress.Nullable(strings.Join(added.FeaturesTouched, ","))
	}
	if o.CurrentFeature != nil {
		feature = progress.Nullable(*o.CurrentFeature)
		if feature != nil {
			if err := checkFeatureIDs(st, features.SplitIDs(*feature)); err != nil {
				return "", nil, nil, err
			}
			if err := st.ownFeatures(features.SplitIDs(*feature)); err != nil {
				return "", nil, nil, err
			}
		}
	}
	if o.CurrentBranch != nil {
		branch = progress.Nullable(*o.CurrentBranch)
	} else if branch == nil {
		branch = st.ownBranch(p, open, who)
	}
	if lane != nil {
		return lane.Item, feature, branch, nil
	}
	return workflow.ItemOf(feature, branch, added.AgentType), feature, branch, nil
}

// UpdateStatus sets the current phase (checked), feature or branch and
// returns the status.
func (a *App) UpdateStatus(ctx context.Context, c Caller, in UpdateStatusInput) (json.RawMessage, error) {
	if a.remote != nil {
		return forward[json.RawMessage](ctx, a, c, "progress.update-status", in)
	}
	var out json.RawMessage
	err := a.as(c).runUpdateStatus(ctx, "baton progress update-status", in, &out)
	return out, err
}

func (a *App) runUpdateStatus(ctx context.Context, cmdPath string, o UpdateStatusInput, out *json.RawMessage) error {
	var p *progress.File
	var computed progress.Counters
	err := a.update(ctx, cmdPath, progress.FileName, func(st *state) error {
		var err error
		if _, err := st.require(workflow.StatusAction(o.Feature != nil || o.Branch != nil)); err != nil {
			return err
		}
		if p, err = st.progress(); err != nil {
			return err
		}
		cur, err := p.Status()
		if err != nil {
			return err
		}
		if o.Feature != nil {
			v := progress.Nullable(*o.Feature)
			if v != nil {
				if err := checkFeatureIDs(st, features.SplitIDs(*v)); err != nil {
					return err
				}
				if err := st.ownFeatures(features.SplitIDs(*v)); err != nil {
					return err
				}
			}
			if err := st.pointAt(p, cur, "current_feature", v); err != nil {
				return err
			}
		}
		if o.Branch != nil {
			if err := st.pointAt(p, cur, "current_branch", progress.Nullable(*o.Branch)); err != nil {
				return err
			}
		}
		if o.Phase != "" {
			reason := gjson.GetBytes(p.StatusRaw(), "decision.reason").String()
			if reason == "" {
				reason = "the current phase"
			}
			if err := st.checkNextPhase("--phase", o.Phase, workflow.Decision{Phase: cur.CurrentPhase, Reason: reason}, "", ""); err != nil {
				return err
			}
		}
		st.touch(progress.FileName)
		st.summary = "updated the status"
		if err := st.setHead(p); err != nil {
			return err
		}
		if o.HasCompleted || o.HasPassing { // only to say why the values given are ignored
			computed, err = st.counters()
		}
		return err
	})
	if err != nil {
		return err
	}
	status := p.StatusRaw()
	if o.HasCompleted && o.Completed != computed.FeaturesCompleted {
		a.warn("--features-completed %d ignored: computed from the files as %d", o.Completed, computed.FeaturesCompleted)
	}
	if o.HasPassing && o.Passing != computed.FeaturesPassing {
		a.warn("--features-passing %d ignored: computed from the files as %d", o.Passing, computed.FeaturesPassing)
	}
	*out = status
	return nil
}

// GetStatus is progress.json's status, read without the lock.
func (a *App) GetStatus(ctx context.Context, c Caller, field string) (gjson.Result, error) {
	if a.remote != nil {
		return remoteRecord(ctx, a, c, "progress.get-status", FieldInput{Field: field})
	}
	a = a.as(c)
	session := a.boundSessionID(ctx)
	p, err := readFile(ctx, a, progress.FileName, progressHint, progress.Parse)
	if err != nil {
		return gjson.Result{}, err
	}
	out := gjson.ParseBytes(p.StatusRaw())
	if session == 0 {
		return out, nil
	}
	l, ok := p.LaneOf(session)
	if !ok {
		return out, nil
	}
	var pl *progress.Pipeline
	if x, ok := p.Pipelines()[l.Item]; ok {
		pl = &x
	}
	return laneStatus(out, l, pl)
}

// GetSession is a session record: id, or -1 for the last.
func (a *App) GetSession(ctx context.Context, c Caller, id int) (gjson.Result, error) {
	if a.remote != nil {
		return remoteRecord(ctx, a, c, "progress.get-session", SessionRefInput{Session: id})
	}
	data, err := readFile(ctx, a.as(c), progress.FileName, progressHint, func(b []byte) ([]byte, error) {
		_, err := progress.Parse(b)
		return b, err
	})
	if err != nil {
		return gjson.Result{}, err
	}
	raw, err := findSession(data, id)
	if err != nil {
		return gjson.Result{}, err
	}
	return gjson.Parse(raw), nil
}

// GetReviewType says whether REVIEW reviews a FEATURE or an
// ARCHITECTURE_REFACTOR now.
func (a *App) GetReviewType(ctx context.Context, c Caller) (ReviewTypeResult, error) {
	if a.remote != nil {
		return forward[ReviewTypeResult](ctx, a, c, "progress.get-review-type", nil)
	}
	a = a.as(c)
	p, err := a.Progress(ctx, c)
	if err != nil {
		return ReviewTypeResult{}, err
	}
	st, err := p.Status()
	if err != nil {
		return ReviewTypeResult{}, err
	}
	if l, ok := a.boundLane(ctx, p); ok { // a lane's session reviews its own item
		var pl *progress.Pipeline
		if got, ok := p.Pipelines()[l.Item]; ok {
			pl = &got
		}
		if v, ok := workflow.LaneView(l, pl); ok {
			st.CurrentFeature, st.CurrentBranch = v.Feature, v.Branch
		}
	}
	res := ReviewTypeResult{ReviewType: progress.ReviewType(st), FeatureID: st.CurrentFeature, Features: IDList(st.CurrentFeature), Branch: st.CurrentBranch}
	if len(res.Features) > 0 && res.ReviewType == "FEATURE" {
		if f, err := a.Features(ctx, c); err == nil && allKind(f, res.Features, "DEBT") {
			res.ItemType = features.TypeTechDebt
		}
	}
	return res, nil
}

// Progress reads progress.json (without the lock: as the last writer
// committed it).
func (a *App) Progress(ctx context.Context, c Caller) (*progress.File, error) {
	if a.remote != nil {
		return remoteFile(ctx, a, c, "progress.read", progress.Parse)
	}
	return readFile(ctx, a.as(c), progress.FileName, progressHint, progress.Parse)
}

// NextSessionID is the id the next 'progress add-session' records its
// session under, as recordSession assigns it: for a call bound to a
// session that has not recorded yet, the session's own id (reserved when
// it opened); otherwise the id after the last one recorded and after every
// open session. The predecessor's prompts name files after it (a summary,
// the verification folder) before they record, and REVIEW finds them
// again under the record's session_id.
func (a *App) NextSessionID(ctx context.Context, c Caller) (int, error) {
	if a.remote != nil {
		return forward[int](ctx, a, c, "progress.next-session-id", nil)
	}
	a = a.as(c)
	p, err := readFile(ctx, a, progress.FileName, progressHint, progress.Parse)
	if err != nil {
		return 0, err
	}
	open, err := readFile(ctx, a, progress.OpenFileName, "baton init", progress.ParseOpen)
	if errs.Is(err, errs.NotFound) {
		return p.NextSessionID(), nil
	}
	if err != nil {
		return 0, err
	}
	if a.insideSession() {
		s, err := boundSession(open, a.caller.Session)
		if err != nil {
			return 0, err
		}
		if id, ok := ownRecordID(p, &s); ok {
			return id, nil
		}
	}
	p.ReserveAfter(open.MaxID())
	return p.NextSessionID(), nil
}
