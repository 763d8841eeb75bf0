package app

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/migrate"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/scripts"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

// This file is 'baton init' on a predecessor's state: the plan comes from
// package migrate (pure); here it is read from the files and applied in
// the init transaction.

// Migrated is what init reports about adopting a predecessor's state.
type Migrated struct {
	Start     map[string]string `json:"start"`
	Phase     string            `json:"phase"`
	Feature   *string           `json:"feature"`
	Branch    *string           `json:"branch"`
	Rule      string            `json:"rule"`
	Reason    string            `json:"reason"`
	Changes   []migrate.Change  `json:"changes"`
	Anomalies []migrate.Anomaly `json:"anomalies"`
	Imported  map[string]int    `json:"imported"` // sessions, reviews, fixes
	// Tracked are the state files git tracks (init lists them once, here).
	Tracked []string `json:"-"`
}

// predecessorLeftovers are files the predecessor keeps beside its state.
var predecessorLeftovers = []string{".backups/", ".agent_state.json"}

// adoptPredecessor adopts the state files init found, when baton has no
// audit log there yet: nil when there is nothing to adopt.
func (st *state) adoptPredecessor(kept []string, scriptsDir string, untracked []string) (*Migrated, error) {
	s := st.tx.Store()
	if fi, err := os.Stat(s.EventsPath()); err == nil && fi.Size() > 0 || !migrate.Detect(kept, false) {
		return nil, nil
	}
	// baton's own state whose log is gone is no predecessor's: adopting it
	// would launder whatever the missing log recorded
	if anchors, broken := s.Anchors(); len(anchors) > 0 || len(broken) > 0 {
		where := ""
		if len(anchors) > 0 {
			where = fmt.Sprintf("%s records its head at seq %d", anchors[0].Path, anchors[0].Seq)
		} else {
			where = fmt.Sprintf("baton left an anchor at %s (%s)", broken[0].Path, broken[0].Problem)
		}
		st.app.warn("the audit log %s is missing, but %s: this is baton's state with its log deleted, not a predecessor's, so nothing was adopted or imported; run 'baton verify'", s.EventsPath(), where)
		return nil, nil
	}
	st.tellProgress("adopting the predecessor's state: reading its files")
	in, err := st.migrateInput(scriptsDir)
	if err != nil {
		return nil, err
	}
	in.Untracked = untracked
	// a file created just now holds nothing to adopt; a feature list alone
	// is anyone's (an INITIALIZER's), not a predecessor's state
	if !slices.Contains(kept, progress.FileName) {
		in.Progress = nil
	}
	if !slices.Contains(kept, reviews.FileName) {
		in.Reviews = nil
	}
	if in.Progress == nil && in.Reviews == nil {
		return nil, nil
	}
	st.tellProgress("adopting the predecessor's state: planning")
	plan := migrate.Adopt(in)
	if in.Progress != nil {
		if err := st.adopt(in.Progress, plan.Decision); err != nil {
			return nil, err
		}
		if err := in.Progress.SetCounters(in.Counters); err != nil {
			return nil, err
		}
	}
	res := &Migrated{Start: plan.Start, Phase: plan.Decision.Phase, Feature: plan.Decision.Feature, Branch: plan.Decision.Branch,
		Rule: plan.Decision.Rule, Reason: plan.Decision.Reason, Changes: plan.Changes, Anomalies: plan.Anomalies,
		Imported: map[string]int{"sessions": 0, "reviews": 0, "fixes": 0}, Tracked: in.Tracked}
	st.logHistory(plan.History, res.Imported)
	st.tellProgress("adopting the predecessor's state: writing %d entries to the audit log", len(plan.History)+1)
	st.record = map[string]any{"migrated": res}
	st.summary = fmt.Sprintf("adopted the predecessor's state: %s; imported %d sessions, %d reviews, %d fixes; %d anomalies",
		describeDecision(plan.Decision), res.Imported["sessions"], res.Imported["reviews"], res.Imported["fixes"], len(plan.Anomalies))
	return res, nil
}

// migrateInput reads the files and the project's facts for the plan.
func (st *state) migrateInput(scriptsDir string) (migrate.Input, error) {
	s := st.tx.Store()
	in := migrate.Input{Raw: map[string][]byte{}, Limits: st.limits()}
	for _, name := range stateFiles {
		b, err := st.tx.Read(name)
		if err != nil {
			return in, err
		}
		if b != nil {
			in.Raw[name] = b
		}
	}
	var err error
	if in.Progress, _, err = st.progressOpt(); err != nil {
		return in, err
	}
	if in.Reviews, _, err = st.reviewsOpt(); err != nil {
		return in, err
	}
	if in.Features, _, err = st.featuresOpt(); err != nil {
		return in, err
	}
	if in.Counters, err = st.counters(); err != nil {
		return in, err
	}
	sit, err := st.situation()
	if err != nil {
		return in, err
	}
	in.NextWork = workflow.NextWork(sit)
	if store.MainWorktree(s.Dir) == s.Dir {
		in.Tracked, _ = gitops.Tracked(s.Dir, stateFiles)
	}
	if r := st.app.repo(); r != nil {
		in.BranchExists = func(b string) bool { _, err := r.Branch(b); return err == nil }
	}
	in.Leftovers = leftoversIn(s.Dir)
	if scriptsDir != "" {
		for _, p := range scripts.Foreign(scriptsDir) {
			if rel, err := filepath.Rel(s.Dir, p); err == nil {
				p = rel
			}
			in.Scripts = append(in.Scripts, p)
		}
	}
	return in, nil
}

// leftoversIn lists the predecessor's own files found in dir.
func leftoversIn(dir string) []migrate.Leftover {
	var out []migrate.Leftover
	for _, name := range predecessorLeftovers {
		path := filepath.Join(dir, strings.TrimSuffix(name, "/"))
		fi, err := os.Lstat(path)
		if err != nil || fi.IsDir() != strings.HasSuffix(name, "/") {
			continue
		}
		l := migrate.Leftover{Path: name}
		if fi.IsDir() {
			_ = filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					l.Files++
				}
				return nil
			})
		}
		out = append(out, l)
	}
	return out
}

// logHistory stages the predecessor's records as audit entries before the
// init event, each marked imported and keyed as init's own entry is.
func (st *state) logHistory(history []migrate.Entry, counts map[string]int) {
	who, _ := st.resolveActor()
	auth, key := st.app.signer(who)
	plural := map[string]string{"session": "sessions", "review": "reviews", "fix": "fixes"}
	for i, e := range history {
		if i%1000 == 0 {
			st.tellProgress("adopting the predecessor's state: importing its history, %d of %d records", i, len(history))
		}
		counts[plural[e.Kind]]++
		ac := &actor{Role: e.Role, Source: "imported"}
		if e.Session > 0 {
			n := e.Session
			ac.Session = &n
		}
		ts := e.Time
		if ts == "" {
			ts = st.stamp()
		}
		role := e.Role
		st.tx.LogBefore(store.Event{
			TaskID: joinedIDs(e.Features), StageID: &role, Type: "imported", Timestamp: ts,
			Payload: eventPayload{Command: "import " + e.Source(), Actor: ac, Summary: e.Summary, Record: e.Record}.raw(),
		}, auth, key)
	}
}

// tellProgress tells the front end what the transaction is doing, when it
// listens.
func (st *state) tellProgress(format string, args ...any) {
	if p := st.app.env.Progress; p != nil {
		p(format, args...)
	}
}

func describeDecision(d workflow.Decision) string {
	s := d.Phase
	if d.Feature != nil {
		s += " of " + *d.Feature
	}
	if d.Branch != nil {
		s += " on " + *d.Branch
	}
	return s + " [" + d.Rule + "]"
}

// migrationNotes are verify's notes on an adopted predecessor state: the
// anomalies init listed, from the entry that adopted it.
func migrationNotes(events []store.Event) []string {
	var out []string
	for _, e := range events {
		var p eventPayload
		if e.Type != "task" || json.Unmarshal(e.Payload, &p) != nil || len(p.Record) == 0 {
			continue
		}
		m := gjson.GetBytes(p.Record, "migrated")
		if !m.Exists() {
			continue
		}
		out = append(out, fmt.Sprintf("seq %d: the predecessor's state was adopted (%s); entries %s are its history, imported", e.Seq,
			m.Get("rule").String(), importedRange(events, e.Seq)))
		m.Get("anomalies").ForEach(func(_, a gjson.Result) bool {
			out = append(out, fmt.Sprintf("seq %d: predecessor anomaly [%s] %s — %s", e.Seq, a.Get("kind").String(), a.Get("found").String(), a.Get("do").String()))
			return true
		})
	}
	return out
}

// importedRange names the imported entries before seq.
func importedRange(events []store.Event, seq int) string {
	first, last := 0, 0
	for _, e := range events {
		if e.Type == "imported" && e.Seq < seq {
			if first == 0 {
				first = e.Seq
			}
			last = e.Seq
		}
	}
	if first == 0 {
		return "(none)"
	}
	return fmt.Sprintf("seq %d to %d", first, last)
}

// pendingAdoption is the plan 'baton init' would apply to a predecessor's
// state it has not adopted yet (no audit log, and no anchor of one: not
// baton's state with its log deleted), so that next and status show the
// recorded phase and the true counters before init as after it; nil when
// there is nothing to adopt.
func (sn *snapshot) pendingAdoption() *migrate.Plan {
	if sn.adoption != nil {
		return *sn.adoption
	}
	var plan *migrate.Plan
	if sn.prog != nil && !gjson.GetBytes(sn.prog.StatusRaw(), "decision.rule").Exists() && sn.unlogged() {
		lim := sn.cfg.Limits()
		p := migrate.Adopt(migrate.Input{Progress: sn.prog, Reviews: sn.rev, Features: sn.feat, Limits: lim, NoHistory: true,
			Counters: countersOf(sn.prog, sn.feat, sn.rev),
			NextWork: workflow.NextWork(workflow.Situation{Limits: lim, Backlog: backlogOf(sn.feat)})})
		plan = &p
	}
	sn.adoption = &plan
	return plan
}

// unlogged says whether the state directory has never had baton's audit
// log: none there, and no anchor naming one.
func (sn *snapshot) unlogged() bool {
	if fi, err := os.Stat(sn.s.EventsPath()); err == nil && fi.Size() > 0 {
		return false
	}
	anchors, broken := sn.s.Anchors()
	return len(anchors) == 0 && len(broken) == 0
}

// Before init adopts a predecessor's state, next and status show the
// decision init would adopt under this rule, saying so.
const (
	ruleNotAdopted = "not-adopted"
	notAdopted     = "; not adopted yet: 'baton init' adopts the predecessor's state and starts the audit log"
)
