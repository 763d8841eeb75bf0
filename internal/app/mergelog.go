package app

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/baton-cli/baton/internal/gitops"
	"github.com/baton-cli/baton/internal/store"
)

// The audit log and git's history each keep a record of the merges into
// main: every merge commit 'baton reviews merge' writes carries the log's
// head as it stood (a Baton-Log trailer), and the log's entries record
// each merge's commit and main's head after every write. verify holds
// each against the other, so that neither a log truncated, rewritten or
// deleted (anchors and all) nor a merge the log never recorded passes.

// logRecords is what the audit log says about main: each entry's hash by
// sequence number, the merges it records, the heads main moved to by an
// entry that says how (a merge, an adopted move, a person's reconcile),
// the entries whose head of main changed without one, and whether a person
// recorded lost entries (the entries before such a loss cannot be held
// against git).
type logRecords struct {
	read        bool
	hashes      map[int]string
	merges      []logMerge
	movedTo     map[string]bool
	unexplained []logMove
	// reconciled are the moves of main a person's reconcile recorded: the
	// commits they brought are the person's, on the record.
	reconciled []logMove
	gap        bool
	// queuedFrom is the first entry that queued a merge or ran the gate (0:
	// none): from then on every merge lands through the landing queue.
	queuedFrom int
}

// logMerge is a merge into main an entry of the log records.
type logMerge struct {
	seq    int
	commit string
	review int
	gate   *GateRun // the gate run the landing recorded (nil: none)
	// reconciledAfter: a person's reconcile recorded a move of main after
	// it (main moved back on purpose, and said so).
	reconciledAfter bool
	// written: baton wrote the merge commit ('baton reviews merge' or the
	// landing queue, not a fast-forward; a merge an agent made with git and
	// baton adopted is the agent's). auth is the key that signed the entry.
	written bool
	auth    string
}

// logMove is an entry whose head of main differs from the entry before.
type logMove struct {
	seq      int
	from, to string
}

// mergeEntry is the part of an entry's payload that says how main moved.
type mergeEntry struct {
	Command string   `json:"command"`
	Changed []string `json:"changed"`
	Record  struct {
		MergeCommit string   `json:"merge_commit"`
		Into        string   `json:"into"`
		ReviewID    int      `json:"review_id"`
		Queued      bool     `json:"queued"`
		Gate        *GateRun `json:"gate"`
		FastForward bool     `json:"fast_forward"`
	} `json:"record"`
	LogGap *store.LogGap `json:"log_gap"`
}

func logRecordsOf(events []store.Event) logRecords {
	lr := logRecords{read: true, hashes: map[int]string{}, movedTo: map[string]bool{}}
	prev := ""
	for _, e := range events {
		lr.hashes[e.Seq] = e.Hash
		var p mergeEntry
		_ = json.Unmarshal(e.Payload, &p)
		lr.gap = lr.gap || p.LogGap != nil
		merged := p.Record.MergeCommit != "" && p.Record.Into != ""
		if merged {
			lr.merges = append(lr.merges, logMerge{seq: e.Seq, commit: p.Record.MergeCommit, review: p.Record.ReviewID, gate: p.Record.Gate,
				written: (p.Command == "baton reviews merge" || p.Command == "baton land") && !p.Record.FastForward, auth: e.Auth})
		}
		if lr.queuedFrom == 0 && (p.Record.Queued || p.Record.Gate != nil) {
			lr.queuedFrom = e.Seq
		}
		head := e.Metadata.Files[mainRef]
		if head == "" || head == prev {
			continue
		}
		switch {
		case prev == "": // main's first record
		case merged && p.Record.MergeCommit == head, slices.Contains(p.Changed, mainRef):
			lr.movedTo[head] = true
		default:
			lr.unexplained = append(lr.unexplained, logMove{e.Seq, prev, head})
		}
		if e.Type == "reconcile" {
			for i := range lr.merges {
				lr.merges[i].reconciledAfter = true
			}
			if prev != "" && strings.HasPrefix(e.Auth, "person:") {
				lr.reconciled = append(lr.reconciled, logMove{e.Seq, prev, head})
			}
		}
		prev = head
	}
	return lr
}

// recorded says whether the log records commit as a merge into main or as
// the head an entry moved main to.
func (lr logRecords) recorded(commit string) bool {
	if lr.movedTo[commit] {
		return true
	}
	for _, m := range lr.merges {
		if m.commit == commit {
			return true
		}
	}
	return false
}

// logMergeProblems holds the log's merges, the files' merges and main's
// merge commits (onMain, since the baseline) against each other.
func logMergeProblems(r gitops.Repo, g gitRecords, name, head string, onMain []gitops.Commit, resolved map[string]string) []Problem {
	lr := g.log
	if !lr.read {
		return nil
	}
	var out []Problem
	for _, m := range lr.merges {
		if on, err := r.IsAncestor(m.commit, head); err == nil && !on && !m.reconciledAfter {
			out = append(out, Problem{"git-log", store.EventsName, fmt.Sprintf("entry %d records the merge of review R%d into %s as %s, which is no longer on %s (now at %s): %s was moved back or rewritten past a merge the log records", m.seq, m.review, name, gitops.Short(m.commit), name, gitops.Short(head), name)})
		}
	}
	if lr.gap { // the entries before a recorded loss are gone: nothing older to hold git against
		return out
	}
	for _, m := range lr.unexplained {
		out = append(out, Problem{"git-log", store.EventsName, fmt.Sprintf("entry %d records %s at %s, moved from %s, but records no change of baton's that moved it: an entry was removed from the log, or the entry edited", m.seq, name, gitops.Short(m.to), gitops.Short(m.from))})
	}
	for _, m := range g.merges {
		if mc := resolved[m.Commit]; mc != "" && m.Review && !lr.recorded(mc) {
			out = append(out, Problem{"git-log", store.EventsName, fmt.Sprintf("%s: merge commit %s is in no entry of the audit log: the merge was recorded outside baton, or the log lost the entry that recorded it", m.Where, gitops.Short(mc))})
		}
	}
	since := map[string]bool{}
	for _, c := range onMain {
		since[c.Hash] = true
		if len(c.Parents) >= 2 {
			msg, _ := r.Message(c.Hash)
			out = append(out, trailerProblems(lr, name, c, gitops.Trailers(msg, "Baton-Log"), true)...)
		}
	}
	// The newest trailer before the baseline (a log begun again, anchors
	// and all, starts a new baseline): the log's hash chain makes the entry
	// it names vouch for every entry before it.
	// A clone of the project, or 'baton init' in a repository whose main
	// holds baton's merges, begins a log of its own after them, so what such
	// a trailer names is a note for a person, not a problem that would stop
	// every run of the clone.
	if c, v, ok, err := gitops.NewestTrailer(r, head, "Baton-Log", trailerWalk); err == nil && ok && !since[c.Hash] {
		for _, p := range trailerProblems(lr, name, c, v, false) {
			p.Check = earlierLogCheck
			p.Message += " — or this log was begun after that merge (a clone of the project, or 'baton init' where baton had merged before): if so, nothing is wrong"
			out = append(out, p)
		}
	}
	return out
}

// earlierLogCheck marks what a merge made before this log's baseline says
// about the log: verify reports it as a note.
const earlierLogCheck = "git-log-earlier"

// splitNotes moves the problems that are notes (earlierLogCheck) into notes.
func splitNotes(problems []Problem, notes []string) ([]Problem, []string) {
	out := problems[:0:0]
	for _, p := range problems {
		if p.Check == earlierLogCheck {
			notes = append(notes, p.Message)
			continue
		}
		out = append(out, p)
	}
	return out, notes
}

// trailerWalk bounds the walk back along main for the newest merge baton
// made: a merge is usually among main's last few commits.
const trailerWalk = 2000

// trailerProblems checks a merge commit's Baton-Log trailers: the log's
// entry of that sequence number has that hash, and (mustRecord) the log
// records the merge.
func trailerProblems(lr logRecords, name string, c gitops.Commit, trailers []string, mustRecord bool) []Problem {
	var out []Problem
	for _, v := range trailers {
		var seq int
		var hash string
		if n, _ := fmt.Sscanf(v, "seq %d %s", &seq, &hash); n != 2 {
			continue
		}
		switch have, ok := lr.hashes[seq]; {
		case !ok:
			out = append(out, Problem{"git-log", store.EventsName, fmt.Sprintf("merge commit %s on %s records the audit log's head as entry %d (%s), but the log has no entry %d: the log was truncated or deleted after that merge", gitops.Short(c.Hash), name, seq, Short(hash), seq)})
		case have != hash:
			out = append(out, Problem{"git-log", store.EventsName, fmt.Sprintf("merge commit %s on %s records the audit log's entry %d as %s, but the log's entry %d is %s: the log was rewritten after that merge", gitops.Short(c.Hash), name, seq, Short(hash), seq, Short(have))})
		case mustRecord && !lr.recorded(c.Hash):
			out = append(out, Problem{"git-log", store.EventsName, fmt.Sprintf("merge commit %s on %s was made by baton (after entry %d), but no entry of the audit log records it: the entry that recorded the merge was removed", gitops.Short(c.Hash), name, seq)})
		}
	}
	return out
}

// reconciledCommits adds to ok the commits a person's reconcile brought to
// main (from where main was to where the reconcile found it).
func reconciledCommits(r gitops.Repo, lr logRecords, ok map[string]bool) {
	for _, m := range lr.reconciled {
		if on, err := r.IsAncestor(m.from, m.to); err != nil || !on {
			continue // main moved back or rewritten: nothing brought in
		}
		in, err := r.Range(m.from, m.to)
		if err != nil {
			continue
		}
		for _, c := range in {
			ok[c.Hash] = true
		}
	}
}

// gateProblems holds each merge the log records, from the first use of
// the landing queue on, to a passing gate run on exactly the merge's tree
// (when a gate is configured), or, for a merge of a batch, on exactly the
// tree main reached when the batch had landed (batchCovered).
func gateProblems(r gitops.Repo, lr logRecords, gate string) []Problem {
	if gate == "" || lr.queuedFrom == 0 {
		return nil
	}
	var out []Problem
	for i, m := range lr.merges {
		if m.seq < lr.queuedFrom {
			continue
		}
		tree, err := r.TreeOf(m.commit)
		switch {
		case err != nil:
			continue // a commit gone from git is git-log's to report
		case m.gate == nil:
			out = append(out, Problem{"gate", store.EventsName, fmt.Sprintf("entry %d records the merge of review R%d as %s with no gate run: the gate %q is configured, and every merge lands through it", m.seq, m.review, gitops.Short(m.commit), gate)})
		case !m.gate.Passed():
			out = append(out, Problem{"gate", store.EventsName, fmt.Sprintf("entry %d records the merge of review R%d as %s, but its gate run exited %d: main moved past a failing gate", m.seq, m.review, gitops.Short(m.commit), m.gate.ExitCode)})
		case m.gate.Tree != tree && batchCovered(r, lr, i, tree):
		case m.gate.Tree != tree:
			out = append(out, Problem{"gate", store.EventsName, fmt.Sprintf("entry %d records the merge of review R%d as %s, whose tree %s is not the tree %s its gate run passed", m.seq, m.review, gitops.Short(m.commit), gitops.Short(tree), gitops.Short(m.gate.Tree))})
		}
	}
	return out
}

// batchCovered says whether merge i of the log, with tree, landed in a
// gated batch whose gate run main reached: its gate run names its review
// among several gated together, and a later merge of the log, which main
// reached from it, has exactly the tree that run passed, with a passing
// gate run on that tree of its own.
func batchCovered(r gitops.Repo, lr logRecords, i int, tree string) bool {
	m := lr.merges[i]
	if len(m.gate.Batch) < 2 || !slices.Contains(m.gate.Batch, m.review) || tree == m.gate.Tree {
		return false
	}
	for _, later := range lr.merges[i+1:] {
		if later.gate == nil || !later.gate.Passed() || later.gate.Tree != m.gate.Tree {
			continue
		}
		if t, err := r.TreeOf(later.commit); err != nil || t != m.gate.Tree {
			continue
		}
		if on, err := r.IsAncestor(m.commit, later.commit); err == nil && on {
			return true
		}
	}
	return false
}
