package cmd

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/errs"
	"github.com/baton-cli/baton/features"
	"github.com/baton-cli/baton/jsondoc"
	"github.com/baton-cli/baton/progress"
	"github.com/baton-cli/baton/workflow"
)

const progressHint = "baton progress init -n NAME -c COUNT"

func (a *App) newProgressCmd() *cobra.Command {
	return group("progress", "Read and append to progress.json (status and session history)",
		a.newProgressInitCmd(), a.newAddSessionCmd(), a.newUpdateStatusCmd(), a.newGetStatusCmd(),
		a.newGetSessionCmd(), a.newGetReviewTypeCmd(), a.newNextSessionIDCmd(), a.newProgressListCmd())
}

// ---- progress init

type progressInitOpts struct {
	Name  string
	Count int
	Force bool
}

func (a *App) newProgressInitCmd() *cobra.Command {
	var o progressInitOpts
	c := &cobra.Command{
		Use: "init", Short: "Create progress.json", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.runProgressInit(c.Context(), c.CommandPath(), o) },
	}
	c.Flags().StringVarP(&o.Name, "project-name", "n", "", "project name (required)")
	c.Flags().IntVarP(&o.Count, "feature-count", "c", 0, "total features (recomputed from feature_list.json when it exists)")
	c.Flags().BoolVar(&o.Force, "force", false, "overwrite an existing progress.json")
	_ = c.MarkFlagRequired("project-name")
	_ = c.MarkFlagRequired("feature-count")
	return c
}

func (a *App) runProgressInit(ctx context.Context, cmdPath string, o progressInitOpts) error {
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
		if old, err := st.tx.Read(progress.FileName); err != nil {
			return err
		} else if old != nil && !o.Force {
			return errs.New(errs.Conflict, "%s already exists. Use --force to overwrite.", path)
		} else if old != nil {
			if cur, err := st.progress(); err != nil {
				return err
			} else if err := st.keepRecords(progress.FileName, cur.Len(), "session(s)"); err != nil {
				return err
			}
		}
		p = progress.New(o.Name, o.Count, st.stamp(), a.head())
		st.prog, st.progNew = p, true
		st.touch(progress.FileName)
		return nil
	})
	if err != nil {
		return err
	}
	data := p.Bytes()
	return a.emit(gjson.ParseBytes(data).Value(), func(w io.Writer) {
		printf(w, "SUCCESS: Initialized %s", path)
		printRaw(w, data)
	})
}

// ---- progress add-session

type addSessionOpts struct {
	Agent, Summary, Outcome       string
	Features                      string
	Commits                       []string
	CommitFrom, CommitTo          string
	StartedAt, NextPhase          string
	CurrentFeature, CurrentBranch *string
}

func (a *App) newAddSessionCmd() *cobra.Command {
	var o addSessionOpts
	var feature, branch string
	c := &cobra.Command{
		Use:   "add-session",
		Short: "Record a finished session (id assigned under the lock)",
		Long: `Record a finished session. The id is the next one, assigned under the lock.
--commits takes "hash:message" values, several after one flag as the predecessor did.
--commit-to defaults to HEAD. --current-feature/--current-branch accept "null" to clear.
In a git repository the session's commits are recorded from git: the commits of
--commit-from..--commit-to (git rev-list, oldest first); without --commit-from, on a branch
other than main, the range starts at the branch's merge base with main. --commits values
must be among them.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 && !c.Flags().Changed("commits") {
				return errs.New(errs.Usage, "unexpected argument %q (commits go after --commits)", args[0])
			}
			o.Commits = append(o.Commits, args...)
			if c.Flags().Changed("current-feature") {
				o.CurrentFeature = &feature
			}
			if c.Flags().Changed("current-branch") {
				o.CurrentBranch = &branch
			}
			return a.runAddSession(c.Context(), c.CommandPath(), o)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.Agent, "agent-type", "a", "", "agent type: "+strings.Join(progress.AgentTypes, ", ")+" (required)")
	f.StringVarP(&o.Summary, "summary", "s", "", "what the session did (required)")
	f.StringVarP(&o.Outcome, "outcome", "o", "", "SUCCESS, READY_FOR_REVIEW, NEEDS_FIX, REJECTED or ERROR (APPROVED, REQUEST_CHANGES, PASS_WITH_COMMENTS, REJECT accepted) (required)")
	f.StringVar(&o.Features, "features", "", "comma-separated feature ids touched")
	f.StringArrayVar(&o.Commits, "commits", nil, `commits as "hash:message" (several may follow)`)
	f.StringVar(&o.CommitFrom, "commit-from", "", "first commit of the range (the commit before the session's work)")
	f.StringVar(&o.CommitTo, "commit-to", "", "last commit of the range (default HEAD)")
	f.StringVar(&o.StartedAt, "started-at", "", "when the session started, ISO 8601 (default now)")
	f.StringVar(&o.NextPhase, "next-phase", "", "next phase: "+strings.Join(progress.Phases, ", "))
	f.StringVar(&feature, "current-feature", "", `set the current feature ("null" clears)`)
	f.StringVar(&branch, "current-branch", "", `set the current branch ("null" clears)`)
	for _, r := range []string{"agent-type", "summary", "outcome"} {
		_ = c.MarkFlagRequired(r)
	}
	return c
}

// parseCommits reads --commits "hash:message" values; in a repository each
// hash must be a commit there (and is recorded short).
func (a *App) parseCommits(values []string) ([]progress.Commit, error) {
	out := []progress.Commit{}
	for _, v := range values {
		hash, msg, _ := strings.Cut(v, ":")
		hash = strings.TrimSpace(hash)
		if hash == "" || strings.HasPrefix(hash, "-") {
			return nil, errs.New(errs.Usage, "--commits: %q is not \"hash:message\"", v)
		}
		h, err := a.commitRef("--commits", hash)
		if err != nil {
			return nil, err
		}
		out = append(out, progress.Commit{Hash: *h, Message: strings.TrimSpace(msg)})
	}
	return out, nil
}

func (o addSessionOpts) session(a *App) (progress.Session, error) {
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

func (a *App) runAddSession(ctx context.Context, cmdPath string, o addSessionOpts) error {
	in, err := o.session(a)
	if err != nil {
		return err
	}
	var added progress.Session
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
		from := in.CommitRange.From
		if from == nil {
			from = a.mainBase(st.cfg, in.CommitRange.To)
		}
		if in.Commits, in.CommitRange, err = a.sessionRange(in.Commits, from, in.CommitRange.To); err != nil {
			return err
		}
		open, err := st.openSessions()
		if err != nil {
			return err
		}
		cur, err := p.Status()
		if err != nil {
			return err
		}
		p.ReserveAfter(open.MaxID())
		if added, err = p.AddSession(in); err != nil {
			return err
		}
		st.touch(progress.FileName)
		st.summary = fmt.Sprintf("added session %d (%s, %s)", added.SessionID, added.AgentType, added.Outcome)
		st.record = added
		st.taskID = progress.Nullable(strings.Join(added.FeaturesTouched, ","))
		feature, branch := cur.CurrentFeature, cur.CurrentBranch
		if len(added.FeaturesTouched) > 0 {
			feature = st.taskID
		}
		if o.CurrentFeature != nil {
			feature = progress.Nullable(*o.CurrentFeature)
			if feature != nil {
				if err := checkFeatureIDs(st, features.SplitIDs(*feature)); err != nil {
					return err
				}
				if err := st.ownFeatures(features.SplitIDs(*feature)); err != nil {
					return err
				}
			}
		}
		if o.CurrentBranch != nil {
			branch = progress.Nullable(*o.CurrentBranch)
		}
		if err := st.checkReady(added, a.workBranch(branch)); err != nil {
			return err
		}
		if err := st.afterSession(p, added, feature, branch, added.AgentType, o.NextPhase); err != nil {
			return err
		}
		return st.setHead(p)
	})
	if err != nil {
		return err
	}
	return a.emit(added, func(w io.Writer) {
		printf(w, "SUCCESS: Added session %d", added.SessionID)
		printJSON(w, added)
	})
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

type updateStatusOpts struct {
	Phase                    string
	Feature, Branch          *string
	Completed, Passing       int
	HasCompleted, HasPassing bool
}

func (a *App) newUpdateStatusCmd() *cobra.Command {
	var o updateStatusOpts
	var feature, branch string
	c := &cobra.Command{
		Use: "update-status", Short: "Update the current phase, feature or branch", Args: cobra.NoArgs,
		Long: `Update the current phase, feature or branch. The counters are computed from
feature_list.json and reviews.json; --features-completed and --features-passing are accepted
for compatibility, and a value that disagrees with the computed one is reported and ignored.`,
		RunE: func(c *cobra.Command, _ []string) error {
			if c.Flags().Changed("feature") {
				o.Feature = &feature
			}
			if c.Flags().Changed("branch") {
				o.Branch = &branch
			}
			o.HasCompleted = c.Flags().Changed("features-completed")
			o.HasPassing = c.Flags().Changed("features-passing")
			return a.runUpdateStatus(c.Context(), c.CommandPath(), o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.Phase, "phase", "", "current phase: "+strings.Join(progress.Phases, ", "))
	f.StringVar(&feature, "feature", "", `current feature ("null" clears)`)
	f.StringVar(&branch, "branch", "", `current branch ("null" clears)`)
	f.IntVar(&o.Completed, "features-completed", 0, "ignored: computed from the files")
	f.IntVar(&o.Passing, "features-passing", 0, "ignored: computed from the files")
	return c
}

func (a *App) runUpdateStatus(ctx context.Context, cmdPath string, o updateStatusOpts) error {
	var p *progress.File
	var computed progress.Counters
	err := a.update(ctx, cmdPath, progress.FileName, func(st *state) error {
		var err error
		if o.Feature != nil || o.Branch != nil {
			if _, err := st.require(workflow.SetStatus); err != nil {
				return err
			}
		} else if _, err := st.require(workflow.RecordSession); err != nil {
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
			if err := p.SetStatus("current_feature", v); err != nil {
				return err
			}
		}
		if o.Branch != nil {
			if err := p.SetStatus("current_branch", progress.Nullable(*o.Branch)); err != nil {
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
	return a.emit(gjson.ParseBytes(status).Value(), func(w io.Writer) {
		printf(w, "SUCCESS: Status updated")
		printRaw(w, status)
	})
}

// ---- progress get-status

func (a *App) newGetStatusCmd() *cobra.Command {
	var field string
	c := &cobra.Command{
		Use: "get-status", Short: "Print the status, or one field of it (--field takes a gjson path)", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.runGetStatus(c.Context(), field) },
	}
	c.Flags().StringVar(&field, "field", "", "print one field's raw value (current_branch, current_feature, ...)")
	return c
}

func (a *App) runGetStatus(ctx context.Context, field string) error {
	m, err := a.mapFile(ctx, progress.FileName, progressHint, validates(progress.Parse))
	if err != nil {
		return err
	}
	defer m.release()
	status := gjson.GetBytes(m.data, "status")
	if !status.IsObject() {
		if err := m.invalid(); err != nil {
			return err
		}
		return invalidFile(m.s, m.name, m.data, &jsondoc.InvalidError{Path: "status", Msg: "missing or not an object"})
	}
	if field == "" {
		return a.emit(status.Value(), func(w io.Writer) { printRaw(w, []byte(status.Raw)) })
	}
	if !status.Get(field).Exists() {
		if err := m.invalid(); err != nil {
			return err
		}
	}
	return a.recordField(status, field, "status")
}

// ---- progress get-session

func (a *App) newGetSessionCmd() *cobra.Command {
	var field string
	c := &cobra.Command{
		Use: "get-session ID", Short: "Print a session (-1 for the last), or one field of it", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			id, err := parseSessionRef(args[0])
			if err != nil {
				return err
			}
			return a.runGetSession(c.Context(), id, field)
		},
	}
	c.Flags().StringVar(&field, "field", "", "print one field's raw value (agent_type, commit_range.from, ...)")
	return c
}

// parseSessionRef reads a session id: N, -N (rewritten to @-N by
// rewriteArgs; N-th from the end) or "last".
func parseSessionRef(s string) (int, error) {
	t := strings.TrimPrefix(s, "@")
	if t == "last" {
		return -1, nil
	}
	n, err := strconv.Atoi(t)
	if err != nil || n == 0 {
		return 0, errs.New(errs.Usage, "ID: %q is not a session id (a number, or -1 for the last session)", s)
	}
	return n, nil
}

func (a *App) runGetSession(ctx context.Context, id int, field string) error {
	m, err := a.mapFile(ctx, progress.FileName, progressHint, validates(progress.Parse))
	if err != nil {
		return err
	}
	defer m.release()
	var raw string
	if last, ok := m.last("sessions"); ok && id == -1 && last != nil {
		raw = string(last)
	} else {
		raw, err = findSession(m.data, id)
	}
	if err != nil {
		if ierr := m.invalid(); ierr != nil {
			return ierr
		}
		return err
	}
	if field == "" {
		return a.emit(gjson.Parse(raw).Value(), func(w io.Writer) { printRaw(w, []byte(raw)) })
	}
	return a.recordField(gjson.Parse(raw), field, "session")
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

// ---- progress get-review-type

func (a *App) newGetReviewTypeCmd() *cobra.Command {
	return &cobra.Command{
		Use: "get-review-type", Short: "Say whether REVIEW reviews a FEATURE or an ARCHITECTURE_REFACTOR", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.runGetReviewType(c.Context()) },
	}
}

type reviewTypeResult struct {
	ReviewType string   `json:"review_type"`
	FeatureID  *string  `json:"-"`
	Features   []string `json:"features"`
	Branch     *string  `json:"branch"`
}

func (a *App) runGetReviewType(ctx context.Context) error {
	p, err := readFile(ctx, a, progress.FileName, progressHint, progress.Parse)
	if err != nil {
		return err
	}
	st, err := p.Status()
	if err != nil {
		return err
	}
	r := reviewTypeResult{ReviewType: progress.ReviewType(st), FeatureID: st.CurrentFeature, Features: idList(st.CurrentFeature), Branch: st.CurrentBranch}
	return a.emit(r, func(w io.Writer) {
		printf(w, "REVIEW_TYPE: %s", r.ReviewType)
		if r.ReviewType == "FEATURE" {
			printf(w, "FEATURE_ID: %s", deref(r.FeatureID))
		}
		printf(w, "BRANCH: %s", deref(r.Branch))
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ---- progress next-session-id

func (a *App) newNextSessionIDCmd() *cobra.Command {
	return &cobra.Command{
		Use: "next-session-id", Short: "Print the id the next session will get", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			p, err := readFile(c.Context(), a, progress.FileName, progressHint, progress.Parse)
			if err != nil {
				return err
			}
			id := p.NextSessionID()
			return a.emit(map[string]int{"next_session_id": id}, func(w io.Writer) { printf(w, "%d", id) })
		},
	}
}

// ---- progress list

type sessionLine struct {
	SessionID int    `json:"session_id"`
	AgentType string `json:"agent_type"`
	Outcome   string `json:"outcome"`
	Summary   string `json:"summary"`
}

func (a *App) newProgressListCmd() *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "List every session", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			p, err := readFile(c.Context(), a, progress.FileName, progressHint, progress.Parse)
			if err != nil {
				return err
			}
			lines := []sessionLine{}
			records := []any{}
			p.Sessions(func(raw []byte) {
				r := gjson.ParseBytes(raw)
				lines = append(lines, sessionLine{int(r.Get("session_id").Int()), r.Get("agent_type").String(), r.Get("outcome").String(), r.Get("summary").String()})
				records = append(records, r.Value())
			})
			return a.emit(map[string]any{"sessions": records}, func(w io.Writer) {
				for _, l := range lines {
					printf(w, "[%d] %s: %s - %s...", l.SessionID, l.AgentType, l.Outcome, truncate(l.Summary, 50))
				}
			})
		},
	}
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}
