package migrate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/features"
)

// anomalies lists the predecessor's defects found in the state, once each,
// with what to do about it.
func anomalies(in Input, changes []Change) []Anomaly {
	out := []Anomaly{}
	for _, name := range sortedNames(in.Raw) {
		if paths := nullStrings(in.Raw[name]); len(paths) > 0 {
			out = append(out, Anomaly{Kind: "null-strings", Found: fmt.Sprintf("%s holds the string \"null\" (or \"\") where no value is meant: %s", name, listSome(paths, 6)),
				Do: "nothing: the status's were adopted as no value; the old records are history and are kept as written (baton writes JSON null)"})
		}
	}
	var stale []string
	for _, c := range changes {
		if strings.HasPrefix(c.Why, "recounted: ") {
			stale = append(stale, fmt.Sprintf("%s %s (truly %s)", c.Field, c.Old, c.New))
		}
	}
	if len(stale) > 0 {
		out = append(out, Anomaly{Kind: "stale-counters", Found: "the counters the predecessor's agents typed in were stale: " + strings.Join(stale, ", "),
			Do: "nothing: recounted now; baton computes them from feature_list.json and reviews.json at every write (update-status --features-passing is accepted and ignored)"})
	}
	switch {
	case len(in.Untracked) > 0:
		out = append(out, Anomaly{Kind: "tracked", Found: fmt.Sprintf("the state files were tracked by git on %s: a checkout or merge rewound them (the predecessor committed its state on whatever branch was checked out)", strings.Join(in.Untracked, ", ")),
			Do: "nothing: baton init stopped tracking them on those branches, one commit each, recorded in its log entry; the files' current contents are kept, and .git/info/exclude keeps them out of later commits"})
	case len(in.Tracked) > 0:
		out = append(out, Anomaly{Kind: "tracked", Found: fmt.Sprintf("%s tracked by git: a checkout or merge rewinds them (the predecessor committed its state on whatever branch was checked out)", strings.Join(in.Tracked, ", ")),
			Do: "run 'baton init' in the main worktree: it stops tracking them on every branch that carries them, keeping their contents"})
	}
	for _, l := range in.Leftovers {
		out = append(out, leftoverAnomaly(l))
	}
	if len(in.Scripts) > 0 {
		out = append(out, Anomaly{Kind: "scripts", Found: fmt.Sprintf("%s are the predecessor's own scripts, which write the state files directly", strings.Join(in.Scripts, ", ")),
			Do: "baton init --scripts installs baton's drop-in scripts there (prompts calling python3 scripts/*.py then reach baton) and keeps these as *.predecessor"})
	}
	out = append(out, fixLimitAnomalies(in)...)
	out = append(out, unreviewedPasses(in)...)
	if n := abbreviatedHashes(in.Raw); n > 0 {
		out = append(out, Anomaly{Kind: "abbreviated-hashes", Found: fmt.Sprintf("%d commit hashes are recorded abbreviated or as \"unknown\" (the predecessor wrote git's short form)", n),
			Do: "nothing: verify resolves them in the repository and reports any that names no commit; baton records full hashes"})
	}
	return out
}

func leftoverAnomaly(l Leftover) Anomaly {
	if strings.HasSuffix(l.Path, "/") {
		return Anomaly{Kind: "backups", Found: fmt.Sprintf("%s holds the predecessor's copies of earlier versions (%d files)", l.Path, l.Files),
			Do: fmt.Sprintf("baton never reads %s and keeps its own copies: move it out of the project (or delete it) once you no longer need it", l.Path)}
	}
	return Anomaly{Kind: "leftover", Found: fmt.Sprintf("%s is the predecessor orchestrator's own state", l.Path),
		Do: fmt.Sprintf("baton never reads %s (the next step is computed from the three files): delete it once you no longer run the predecessor", l.Path)}
}

// fixLimitAnomalies lists features with more fixes than the limit allows
// (the predecessor counted but never stopped).
func fixLimitAnomalies(in Input) []Anomaly {
	if in.Reviews == nil || in.Limits.MaxFixCycles <= 0 {
		return nil
	}
	counts := map[string]int{}
	var ids []string
	for _, x := range in.Reviews.Fixes() {
		id := strings.TrimSpace(x.Get("feature_id").String())
		if cleanRef(&id) == nil {
			continue
		}
		if counts[id] == 0 {
			ids = append(ids, id)
		}
		counts[id]++
	}
	var out []Anomaly
	for _, id := range ids {
		if n := counts[id]; n > in.Limits.MaxFixCycles {
			out = append(out, Anomaly{Kind: "fix-limit", Found: fmt.Sprintf("%s has %d fixes, over max_fix_cycles %d", id, n, in.Limits.MaxFixCycles),
				Do: "nothing to repair: get-fix-count reports the limit, and the next review of it is decided at the limit (merge with the leftovers as tech debt, or REJECT)"})
		}
	}
	return out
}

// unreviewedPasses lists passing features no passing review names.
func unreviewedPasses(in Input) []Anomaly {
	if in.Features == nil {
		return nil
	}
	passed := map[string]bool{}
	if in.Reviews != nil {
		passed = in.Reviews.PassedFeatures()
	}
	var ids []string
	for _, id := range in.Features.Passing() {
		if !passed[id] {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return []Anomaly{{Kind: "unreviewed-pass", Found: fmt.Sprintf("%s marked passing with no passing review naming it", strings.Join(ids, ", ")),
		Do: "verify reports each as a problem until it is settled: a person marks it failing ('baton features fail ID -r REASON'), so that it is implemented and reviewed again"}}
}

// nullStrings lists the JSON paths of string values "null", "None" or ""
// in fields that name a feature, branch or commit.
func nullStrings(data []byte) []string {
	var out []string
	var walk func(path string, v gjson.Result)
	walk = func(path string, v gjson.Result) {
		switch {
		case v.IsObject() || v.IsArray():
			v.ForEach(func(k, x gjson.Result) bool {
				walk(strings.TrimPrefix(path+"."+k.String(), "."), x)
				return true
			})
		case v.Type == gjson.String && refField(path) && cleanRef(&v.Str) == nil:
			out = append(out, path)
		}
	}
	walk("", gjson.ParseBytes(data))
	return out
}

// refField says whether a path names a field whose "null" string means none.
func refField(path string) bool {
	last := path[strings.LastIndexByte(path, '.')+1:]
	switch last {
	case "current_feature", "current_branch", "feature_id", "branch", "from", "to", "head_commit":
		return true
	}
	return false
}

// abbreviatedHashes counts commit hashes that are not full object ids.
func abbreviatedHashes(raw map[string][]byte) int {
	n := 0
	count := func(v gjson.Result) {
		if s := v.String(); v.Type == gjson.String && s != "" && cleanRef(&s) != nil && len(s) < 40 {
			n++
		}
	}
	for _, name := range []string{"progress.json", "reviews.json"} {
		r := gjson.ParseBytes(raw[name])
		count(r.Get("status.head_commit"))
		for _, path := range []string{"sessions.#.commits.#.hash", "sessions.#.commit_range.from", "sessions.#.commit_range.to", "reviews.#.commit_range.from", "reviews.#.commit_range.to", "fixes.#.issues_fixed.#.commit"} {
			r.Get(path).ForEach(func(_, v gjson.Result) bool {
				if v.IsArray() {
					v.ForEach(func(_, w gjson.Result) bool { count(w); return true })
				} else {
					count(v)
				}
				return true
			})
		}
	}
	return n
}

func listSome(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:max], ", "), len(items)-max)
}

func sortedNames(m map[string][]byte) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// featureIDs reads a record's feature ids ("F001", "F001,F002", a list, or
// none).
func featureIDs(v gjson.Result) []string {
	if v.IsArray() {
		var out []string
		v.ForEach(func(_, x gjson.Result) bool {
			if s := x.String(); cleanRef(&s) != nil {
				out = append(out, s)
			}
			return true
		})
		return out
	}
	s := v.String()
	if cleanRef(&s) == nil {
		return nil
	}
	return features.SplitIDs(s)
}
