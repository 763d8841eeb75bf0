package app

import (
	"fmt"

	"github.com/baton-cli/baton/internal/store"
)

// movedProblems holds the log against the anchors it left under other
// paths (the same first entry): a project moved, or reached by another
// path, keeps its log, and a log truncated or rewritten after the move
// would otherwise meet only the anchors of its new path, which the
// truncated log itself wrote. An anchor whose directory still holds this
// log is a copy's (or the original's), not a move's, and is left alone.
// One whose head this log does not hold, but whose path's history began
// at an entry this log does hold, is a copy that went on on its own and
// was deleted since: a note, not a problem — unless this path's history
// began exactly at that anchor's head (the project came from there), or
// this path's own anchor does not say where its history began.
func movedProblems(s *store.Store, events []store.Event) ([]Problem, []string) {
	var problems []Problem
	var notes []string
	genesis := s.Genesis()
	base := s.PathBase()
	inLog := func(seq int, hash string) bool {
		return seq == 0 || seq <= len(events) && events[seq-1].Hash == hash
	}
	for _, an := range s.StrayAnchors(s.AnchorDirs()) {
		if an.Dir != "" && store.New(an.Dir).Genesis() == genesis {
			continue // the log is still there too: a copy of the project, not a move
		}
		if inLog(an.Seq, an.Hash) {
			continue
		}
		cameFrom := base != nil && base.Seq == an.Seq && base.Hash == an.Hash
		if base != nil && !cameFrom && an.Base != nil && inLog(an.Base.Seq, an.Base.Hash) {
			notes = append(notes, fmt.Sprintf("%s is the anchor of a copy of this project at %s, which holds no such log now: the copy went on from entry %d of this log to entry %d of its own, and nothing of this log is missing. If %s was a copy that is gone, delete %s; if this project was moved from there, the copy's entries after %d are not in this log", an.Path, an.Dir, an.Base.Seq, an.Seq, an.Dir, an.Path, an.Base.Seq))
			continue
		}
		switch {
		case an.Seq > len(events):
			problems = append(problems, Problem{"truncated", store.EventsName, fmt.Sprintf("the log ends at seq %d, but %s, the anchor this log left for %s (where the project was before it moved), records its head at seq %d: entries were removed from its end", len(events), an.Path, an.Dir, an.Seq)})
		default:
			problems = append(problems, Problem{"truncated", store.EventsName, fmt.Sprintf("the log's entry %d is not the one %s, the anchor this log left for %s (where the project was before it moved), records: the log was rewritten", an.Seq, an.Path, an.Dir)})
		}
	}
	return problems, notes
}
