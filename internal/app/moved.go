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
func movedProblems(s *store.Store, events []store.Event) []Problem {
	var out []Problem
	genesis := s.Genesis()
	for _, an := range s.StrayAnchors(s.AnchorDirs()) {
		if an.Dir != "" && store.New(an.Dir).Genesis() == genesis {
			continue // the log is still there too: a copy of the project, not a move
		}
		switch {
		case an.Seq > len(events):
			out = append(out, Problem{"truncated", store.EventsName, fmt.Sprintf("the log ends at seq %d, but %s, the anchor this log left for %s (where the project was before it moved), records its head at seq %d: entries were removed from its end", len(events), an.Path, an.Dir, an.Seq)})
		case an.Seq > 0 && events[an.Seq-1].Hash != an.Hash:
			out = append(out, Problem{"truncated", store.EventsName, fmt.Sprintf("the log's entry %d is not the one %s, the anchor this log left for %s (where the project was before it moved), records: the log was rewritten", an.Seq, an.Path, an.Dir)})
		}
	}
	return out
}
