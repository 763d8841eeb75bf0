package app

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/ctxpack"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/prompts"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/workflow"
)

// Assignment is what one session is for: what baton context describes
// and what baton run's prompt asks.
type Assignment struct {
	Role, Feature, Branch, Reason string
	Session                       int
}

// situationOf names the kind of work of an assignment.
func (sn *snapshot) situationOf(w Assignment) ctxpack.Situation {
	var kinds []string
	for _, id := range features.SplitIDs(w.Feature) {
		kinds = append(kinds, sn.kindOf(id))
	}
	return ctxpack.Classify(w.Role, kinds, w.Branch)
}

// kindOf is an item's type as the context names it: feature, bug or
// tech_debt.
func (sn *snapshot) kindOf(id string) string {
	if sn.feat != nil {
		if f, err := sn.feat.Get(id); err == nil {
			switch f.Kind() {
			case "BUG":
				return "bug"
			case "DEBT":
				return "tech_debt"
			}
		}
	}
	return "feature"
}

// contextInput gathers what the context package of w draws on, from the
// files and git.
func (a *App) contextInput(sn *snapshot, w Assignment) ctxpack.Input {
	in := ctxpack.Input{Situation: sn.situationOf(w), Session: w.Session, Branch: w.Branch, Reason: w.Reason,
		MaxFixCycles: sn.cfg.MaxFixCycles, Interval: sn.cfg.ArchitectureInterval}
	if sn.prog != nil {
		if p, err := sn.prog.Project(); err == nil {
			in.Project = p.Name
		}
	}
	for _, id := range features.SplitIDs(w.Feature) {
		in.Work = append(in.Work, sn.workItem(id))
	}
	if sn.rev != nil {
		if w.Feature != "" {
			in.FixCount = sn.rev.FixCount(w.Feature)
		}
		sn.reviewHistory(&in, w)
	}
	in.History = sn.sessionHistory(in.Situation, w)
	in.Git = a.gitFacts(sn, w.Branch)
	if in.Situation == ctxpack.ArchitectureReview {
		sn.architectureFacts(&in)
		if in.LastArchitecture != nil {
			a.gitSince(&in.Git, in.LastArchitecture.Timestamp)
		}
	}
	top := a.projectTop(sn)
	in.SpecFile = specFile(top, sn.cfg.SpecFile)
	in.AgentDocs = agentDocs(top)
	in.TestCommand = testCommand(top, sn.cfg.TestCommand)
	return in
}

// workItem reads one item of the feature list as the context shows it.
func (sn *snapshot) workItem(id string) ctxpack.WorkItem {
	w := ctxpack.WorkItem{ID: id, Kind: sn.kindOf(id)}
	if sn.feat == nil {
		return w
	}
	raw, ok := sn.feat.Raw(id)
	if !ok {
		return w
	}
	r := gjson.ParseBytes(raw)
	w.Name, w.Description, w.Passes = r.Get("name").String(), r.Get("description").String(), r.Get("passes").Bool()
	for _, key := range []string{"steps", "test_steps", "acceptance_criteria"} {
		r.Get(key).ForEach(func(_, v gjson.Result) bool { w.Steps = append(w.Steps, v.String()); return true })
	}
	if sr := r.Get("source_review"); sr.Exists() && sr.Type != gjson.Null {
		w.Source = "review " + sr.String()
	}
	return w
}

// toReview turns a recorded review into the context's form.
func toReview(r gjson.Result) ctxpack.Review {
	cr := ctxpack.Review{ID: int(r.Get("review_id").Int()), Architecture: r.Get("agent_type").String() == workflow.Architecture,
		Feature: r.Get("feature_id").String(), Branch: r.Get("branch").String(), Verdict: reviews.VerdictOf(r),
		Summary: r.Get("summary").String(), Timestamp: r.Get("timestamp").String(), Health: r.Get("health_status").String()}
	for _, is := range reviews.ReadIssues(r.Get("issues")) {
		cr.Issues = append(cr.Issues, ctxpack.Issue{ID: is.ID, Severity: is.Severity, Description: is.Description, Location: is.Location, Suggestion: is.Suggestion})
	}
	return cr
}

var archBranch = regexp.MustCompile(`^refactor/arch-review-(\d+)$`)

// concerns says whether a review is of the work w: the same items, or
// (for work without items) the same branch; an architecture refactor's
// review is the architecture review its branch is named after.
func concernsWork(r gjson.Result, w Assignment) bool {
	if m := archBranch.FindStringSubmatch(w.Branch); m != nil && w.Feature == "" {
		return r.Get("review_id").String() == m[1] || r.Get("branch").String() == w.Branch
	}
	if w.Feature == "" {
		return w.Branch != "" && r.Get("branch").String() == w.Branch
	}
	mine := map[string]bool{}
	for _, id := range features.SplitIDs(w.Feature) {
		mine[id] = true
	}
	for _, id := range features.SplitIDs(r.Get("feature_id").String()) {
		if mine[id] {
			return true
		}
	}
	return false
}

// reviewHistory fills the review the work answers or re-reviews (the last
// one of this work), the earlier ones, and their fixes.
func (sn *snapshot) reviewHistory(in *ctxpack.Input, w Assignment) {
	var mine []ctxpack.Review
	for _, r := range sn.rev.Reviews() {
		if concernsWork(r, w) {
			mine = append(mine, toReview(r))
		}
	}
	if len(mine) > 0 {
		last := mine[len(mine)-1]
		in.Review, in.Earlier = &last, mine[:len(mine)-1]
	}
	ids := map[int]bool{}
	for _, r := range mine {
		ids[r.ID] = true
	}
	for _, f := range sn.rev.Fixes() {
		if !ids[int(f.Get("review_id").Int())] {
			continue
		}
		fx := ctxpack.Fix{ID: int(f.Get("fix_id").Int()), ReviewID: int(f.Get("review_id").Int()), Time: f.Get("timestamp").String()}
		fx.Fixed = issueIDs(f.Get("issues_fixed"))
		fx.Deferred = issueIDs(f.Get("issues_deferred"))
		in.Fixes = append(in.Fixes, fx)
	}
}

func issueIDs(list gjson.Result) []string {
	var out []string
	list.ForEach(func(_, v gjson.Result) bool {
		if v.Type == gjson.String {
			out = append(out, v.String())
		} else {
			out = append(out, v.Get("issue_id").String())
		}
		return true
	})
	return out
}

// maxHistory is how many earlier sessions the context offers.
const maxHistory = 6

// sessionHistory lists the finished sessions on the same work (for an
// architecture review: the earlier architecture sessions), oldest first.
func (sn *snapshot) sessionHistory(s ctxpack.Situation, w Assignment) []ctxpack.Session {
	if sn.prog == nil {
		return nil
	}
	mine := map[string]bool{}
	for _, id := range features.SplitIDs(w.Feature) {
		mine[id] = true
	}
	var out []ctxpack.Session
	sn.prog.Sessions(func(raw []byte) {
		r := gjson.ParseBytes(raw)
		match := s == ctxpack.ArchitectureReview && r.Get("agent_type").String() == workflow.Architecture
		r.Get("features_touched").ForEach(func(_, v gjson.Result) bool {
			match = match || mine[v.String()]
			return !match
		})
		if !match {
			return
		}
		cs := ctxpack.Session{ID: int(r.Get("session_id").Int()), Role: r.Get("agent_type").String(), Outcome: r.Get("outcome").String(),
			Summary: r.Get("summary").String(), Ended: r.Get("completed_at").String()}
		if f, t := r.Get("commit_range.from").String(), r.Get("commit_range.to").String(); f != "" || t != "" {
			cs.Range = gitops.Short(f) + ".." + gitops.Short(t)
		}
		out = append(out, cs)
	})
	if len(out) > maxHistory {
		out = out[len(out)-maxHistory:]
	}
	return out
}

// architectureFacts fills what an architecture review needs: the features
// merged since the last one, and that review.
func (sn *snapshot) architectureFacts(in *ctxpack.Input) {
	if sn.rev == nil {
		return
	}
	var merged []string
	for _, r := range sn.rev.Reviews() {
		if r.Get("agent_type").String() == workflow.Architecture {
			last := toReview(r)
			in.LastArchitecture, merged = &last, nil
			continue
		}
		if reviews.Merged(r) {
			merged = append(merged, features.SplitIDs(r.Get("feature_id").String())...)
		}
	}
	in.MergedSince = merged
}

// projectTop is the repository's top directory, else the state directory.
func (a *App) projectTop(sn *snapshot) string {
	if r := a.repo(); r != nil {
		return r.Top()
	}
	return sn.s.Dir
}

// specNames are where a specification usually is, in order.
var specNames = []string{"app_spec.txt", "app_spec.md", "spec.md", "SPEC.md", "specification.md", "docs/spec.md", "prompts/app_spec.txt", "README.md"}

// specFile is the configured specification, else the first usual one that
// exists; "" when there is none.
func specFile(top, configured string) string {
	if configured != "" {
		return configured
	}
	for _, n := range specNames {
		if fileExists(filepath.Join(top, n)) {
			return n
		}
	}
	return ""
}

// agentDocNames are the files that instruct agents working on a project.
var agentDocNames = []string{"AGENTS.md", "CLAUDE.md", ".github/copilot-instructions.md", "CONTRIBUTING.md"}

// agentDocs lists the instruction files for agents the project has.
func agentDocs(top string) []string {
	var out []string
	for _, n := range agentDocNames {
		if fileExists(filepath.Join(top, n)) {
			out = append(out, n)
		}
	}
	return out
}

// testCommand is the configured test command, else the usual one for the
// project's build files; "" when baton cannot tell.
func testCommand(top, configured string) string {
	if configured != "" {
		return configured
	}
	if b, err := os.ReadFile(filepath.Join(top, "Makefile")); err == nil && regexp.MustCompile(`(?m)^test:`).Match(b) {
		return "make test"
	}
	for _, c := range []struct{ file, cmd string }{
		{"go.mod", "go test ./..."}, {"package.json", "npm test"}, {"Cargo.toml", "cargo test"},
		{"pyproject.toml", "python -m pytest"}, {"pytest.ini", "python -m pytest"}, {"pom.xml", "mvn test"},
	} {
		if fileExists(filepath.Join(top, c.file)) {
			return c.cmd
		}
	}
	return ""
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// promptData is the prompt's data for w: the context input's facts, the
// commands' values and the rendered context package.
func (a *App) promptData(sn *snapshot, w Assignment, in ctxpack.Input, pkg ctxpack.Package) prompts.Data {
	d := prompts.Data{Role: w.Role, Situation: string(in.Situation), Session: w.Session, Project: in.Project,
		ProjectPath: a.projectTop(sn), StateDir: sn.s.Dir, Feature: w.Feature, Branch: w.Branch,
		BranchExists: in.Git.BranchExists, MainBranch: in.Git.Main, Reason: w.Reason, MaxFixCycles: in.MaxFixCycles,
		FixCount: in.FixCount, SpecFile: in.SpecFile, TestCommand: in.TestCommand, AgentDocs: in.AgentDocs,
		Context: pkg.Text(), ArchitectureInterval: sn.cfg.ArchitectureInterval, TechDebtThreshold: sn.cfg.TechDebtThreshold}
	if d.Project == "" {
		d.Project = filepath.Base(d.ProjectPath)
	}
	if sn.rev != nil {
		d.NextReviewID = sn.rev.NextReviewID()
	} else {
		d.NextReviewID = 1
	}
	if sn.feat != nil {
		st := sn.feat.Stats()
		d.FeatureCount, d.FeaturesCompleted = st.All.Total, st.All.Passing
	}
	if r := in.Review; r != nil {
		switch in.Situation {
		case ctxpack.FixReview, ctxpack.FixArchitecture:
			d.ReviewID, d.IssuePrefix = r.ID, r.IssuePrefix()
			for _, is := range r.Issues {
				d.IssueIDs = append(d.IssueIDs, is.ID)
			}
		case ctxpack.ReviewFeature, ctxpack.ReviewBug, ctxpack.ReviewDebt, ctxpack.ReviewRefactor:
			if r.Verdict == "REQUEST_CHANGES" || r.Verdict == "PASS_WITH_COMMENTS" {
				d.PrevReviewID = r.ID
			}
		}
	}
	if d.ReviewID == 0 {
		if m := archBranch.FindStringSubmatch(w.Branch); m != nil {
			d.ReviewID, _ = strconv.Atoi(m[1])
			d.IssuePrefix = "A" + m[1] + "-"
		}
	}
	return d
}
