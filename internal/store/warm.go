package store

import "encoding/json"

// encoding/json builds its tables for a type (the fields, their encoders)
// by reflection the first time a process encodes or decodes that type, and
// a one-shot baton process meets every type once: a write built the tables
// of the log entry, the journal and the stamps while it held the lock,
// about a fifth of the CPU it spends there. WarmCodecs builds them before.

// WarmCodecs builds encoding/json's tables for the types a commit encodes
// and decodes under the lock: the log entry, the journal, the stamps, the
// backup records, the anchors, the log's first entry as the anchor reads
// it, the facts' records a patch resumes its hash from. A writer calls it before it takes the lock;
// once built, the tables are found again at the cost of a lookup.
func WarmCodecs() {
	WarmJSON(Event{}, journal{}, stampsRaw{}, map[string]stamp{}, backupRecord{}, Anchor{}, LogGap{}, Drift{}, genesisEntry{}, map[string]arrayMarks{})
}

// WarmJSON encodes each value, which builds encoding/json's tables for its
// type and every type its fields reach (the decoder shares those of the
// fields); the output is thrown away.
func WarmJSON(values ...any) {
	for _, v := range values {
		_, _ = json.Marshal(v)
	}
}
