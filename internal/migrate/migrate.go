// Package migrate adopts the state a predecessor tool left in a project
// (progress.json, reviews.json and feature_list.json written by the Python
// scripts/progress.py, reviews.py and features.py, with no baton audit log):
// the files' hashes as the starting point, the recorded phase, feature and
// branch as the current ones unless the files prove them over, the counters
// it changes, the predecessor's sessions, reviews and fixes as history for
// the audit log, and the predecessor's anomalies with what to do about each.
//
// It is pure: the caller reads the files and the facts of the project (what
// git tracks, which of the predecessor's leftovers exist) and applies the
// Plan in one transaction.
package migrate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/workflow"
)

// Rules of an adopted status decision (status.decision.rule).
const (
	// RuleAdopted: the predecessor's recorded phase, feature and branch are
	// taken as they are.
	RuleAdopted = "adopted"
	// RuleRecomputed: the recorded phase could not stand (its work is
	// provably over, or it names no work), so the next work was computed.
	RuleRecomputed = "adopted/recomputed"
)

// Input is what the caller read: the three files (nil when absent, parsed
// and raw), the counters baton computes from them, the next work baton
// computes from the backlog, and facts of the project.
type Input struct {
	Progress *progress.File
	Reviews  *reviews.File
	Features *features.File
	// Raw holds each present file's content by name (progress.json, ...).
	Raw map[string][]byte
	// Counters are the counters computed from the feature list and reviews.
	Counters progress.Counters
	// NextWork is baton's next work from the backlog (workflow.NextWork).
	NextWork workflow.Decision
	Limits   workflow.Limits
	// Tracked lists the state files git tracks in the project.
	Tracked []string
	// Untracked names the branches on which init has just stopped git
	// tracking the state files, each with its new commit ("main (1a2b3c4)").
	Untracked []string
	// Leftovers lists the predecessor's own files and directories found in
	// the state directory (".backups/", ".agent_state.json", ...), each
	// with what it holds.
	Leftovers []Leftover
	// Scripts lists the scripts in scripts/ that are not baton's drop-in
	// ones (the predecessor's own), relative to the state directory.
	Scripts []string
	// BranchExists says whether a branch exists in the repository (nil
	// outside one: every branch is taken as given).
	BranchExists func(string) bool
	// NoHistory leaves Plan.History empty (a reader that only shows the
	// decision and the counters).
	NoHistory bool
}

// Leftover is a file or directory the predecessor kept beside its state.
type Leftover struct {
	Path  string `json:"path"`
	Files int    `json:"files,omitempty"` // for a directory: how many files it holds
}

// Plan is what adopting the predecessor's state does.
type Plan struct {
	// Start is the sha256 of each file as the predecessor left it: the
	// audit log's starting point.
	Start map[string]string `json:"start"`
	// Decision is the status decision to record (phase, feature, branch).
	Decision workflow.Decision `json:"decision"`
	// Changes lists every value of progress.json that adopting changes.
	Changes []Change `json:"changes"`
	// Anomalies are the predecessor's defects found in the state, each
	// with what to do about it.
	Anomalies []Anomaly `json:"anomalies"`
	// History is the predecessor's sessions, reviews and fixes, oldest
	// first, for the audit log.
	History []Entry `json:"-"`
}

// Change is one value adopting changes, with why.
type Change struct {
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
	Why   string `json:"why"`
}

// Anomaly is one defect of the predecessor's state.
type Anomaly struct {
	Kind  string `json:"kind"`  // null-strings, stale-counters, tracked, backups, leftover, fix-limit, unreviewed-pass, abbreviated-hashes
	Found string `json:"found"` // what and where
	Do    string `json:"do"`    // what to do about it
}

// Detect says whether dir's state is a predecessor's: a state file exists
// and baton has no audit log there yet (hasLog reports whether it has).
func Detect(present []string, hasLog bool) bool {
	return len(present) > 0 && !hasLog
}

// Adopt computes the plan for in.
func Adopt(in Input) Plan {
	p := Plan{Start: map[string]string{}, Changes: []Change{}, Anomalies: []Anomaly{}}
	for name, b := range in.Raw {
		sum := sha256.Sum256(b)
		p.Start[name] = hex.EncodeToString(sum[:])
	}
	p.Decision, p.Changes = adoptStatus(in)
	p.Changes = append(p.Changes, counterChanges(in)...)
	p.Anomalies = anomalies(in, p.Changes)
	if !in.NoHistory {
		p.History = history(in)
	}
	return p
}

// cleanRef is a recorded feature or branch: the predecessor's "null"
// string, an empty string and JSON null all mean none.
func cleanRef(s *string) *string {
	if s == nil {
		return nil
	}
	v := strings.TrimSpace(*s)
	if v == "" || strings.EqualFold(v, "null") || v == "None" {
		return nil
	}
	return &v
}

func show(s *string) string {
	if s == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *s)
}

// adoptStatus takes the recorded phase, feature and branch, recomputing
// only what the files prove: a work item whose features all pass is over,
// and a phase that names no work (IMPLEMENT with no feature: the
// predecessor's "next work") is the next work baton computes, as the
// predecessor's orchestrator chose it (bugs, then tech debt at the
// threshold, then features).
func adoptStatus(in Input) (workflow.Decision, []Change) {
	changes := []Change{}
	if in.Progress == nil {
		return in.NextWork, changes
	}
	st, err := in.Progress.Status()
	if err != nil {
		return in.NextWork, changes
	}
	feature, branch := cleanRef(st.CurrentFeature), cleanRef(st.CurrentBranch)
	phase := st.CurrentPhase
	d := workflow.Decision{Phase: phase, Feature: feature, Branch: branch, Rule: RuleAdopted,
		Reason: fmt.Sprintf("the predecessor's progress.json records %s", describe(phase, feature, branch))}
	if why := overReason(in, phase, feature, branch); why != "" {
		d = in.NextWork
		d.Reason = fmt.Sprintf("the predecessor recorded %s, but %s: %s", describe(phase, feature, branch), why, in.NextWork.Reason)
		d.Rule = RuleRecomputed
	}
	// one change per field, from the value as recorded to the one adopted
	for _, c := range []struct {
		field             string
		recorded, cleaned *string
		adopted           *string
	}{
		{"status.current_phase", &phase, &phase, &d.Phase},
		{"status.current_feature", st.CurrentFeature, feature, d.Feature},
		{"status.current_branch", st.CurrentBranch, branch, d.Branch},
	} {
		if show(c.recorded) == show(c.adopted) {
			continue
		}
		why := d.Reason
		if show(c.cleaned) == show(c.adopted) {
			why = fmt.Sprintf("the predecessor's %s means none", show(c.recorded))
		}
		changes = append(changes, Change{Field: c.field, Old: show(c.recorded), New: show(c.adopted), Why: why})
	}
	return d, changes
}

func describe(phase string, feature, branch *string) string {
	s := phase
	if feature != nil {
		s += " of " + *feature
	}
	if branch != nil {
		s += " on " + *branch
	}
	return s
}

// overReason says why the recorded phase cannot stand ("" when it stands).
func overReason(in Input, phase string, feature, branch *string) string {
	if feature != nil && in.Features != nil {
		ids := features.SplitIDs(*feature)
		done := len(ids) > 0
		for _, id := range ids {
			if f, err := in.Features.Get(id); err != nil || !f.Passes {
				done = false
			}
		}
		if done {
			return fmt.Sprintf("%s passes already", *feature)
		}
	}
	if branch != nil && in.BranchExists != nil && !in.BranchExists(*branch) &&
		(phase == workflow.PhaseReview || phase == workflow.PhaseFix && !strings.HasPrefix(*branch, "refactor/")) {
		// FIX creates its refactor branch; anything else must be there
		return fmt.Sprintf("its branch %s does not exist in the repository (deleted, or never pushed here)", *branch)
	}
	switch phase {
	case workflow.PhaseImplement, workflow.PhaseBugfix, workflow.PhaseGlobalFix:
		if feature == nil {
			return "it names no work item (the predecessor's orchestrator chose the next one)"
		}
	case workflow.PhaseReview, workflow.PhaseFix:
		if feature == nil && branch == nil {
			return "it names neither a feature nor a branch to work on"
		}
	case workflow.PhaseDone:
		if in.NextWork.Phase != workflow.PhaseDone {
			return "work is still pending"
		}
	}
	return ""
}

// counterChanges lists the counters the predecessor's agents typed in that
// differ from what the files say.
func counterChanges(in Input) []Change {
	if in.Progress == nil {
		return nil
	}
	st, err := in.Progress.Status()
	if err != nil {
		return nil
	}
	proj, _ := in.Progress.Project()
	var out []Change
	for _, c := range []struct {
		field    string
		old, new int
		why      string
	}{
		{"status.features_passing", st.FeaturesPassing, in.Counters.FeaturesPassing, "features with passes: true in feature_list.json"},
		{"status.features_completed", st.FeaturesCompleted, in.Counters.FeaturesCompleted, "features named by a passing review in reviews.json"},
		{"project.total_features", proj.TotalFeatures, in.Counters.TotalFeatures, "items in feature_list.json"},
	} {
		if c.old != c.new {
			out = append(out, Change{Field: c.field, Old: fmt.Sprint(c.old), New: fmt.Sprint(c.new), Why: "recounted: " + c.why})
		}
	}
	return out
}
