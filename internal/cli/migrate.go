package cli

import (
	"io"

	"github.com/baton-cli/baton/internal/app"
)

// writeMigrated prints what adopting a predecessor's state did.
func writeMigrated(w io.Writer, m *app.Migrated) {
	printf(w, "ADOPTED: the predecessor's state (no baton audit log was here); its files' hashes are the log's starting point")
	next := m.Phase
	if m.Feature != nil {
		next += " of " + *m.Feature
	}
	if m.Branch != nil {
		next += " on " + *m.Branch
	}
	printf(w, "  next     %s [%s]", next, m.Rule)
	printf(w, "  why      %s", m.Reason)
	for _, c := range m.Changes {
		printf(w, "  changed  %s: %s -> %s (%s)", c.Field, c.Old, c.New, c.Why)
	}
	printf(w, "  imported %d sessions, %d reviews, %d fixes into the audit log as history ('baton log')", m.Imported["sessions"], m.Imported["reviews"], m.Imported["fixes"])
	for _, a := range m.Anomalies {
		printf(w, "ANOMALY: [%s] %s", a.Kind, a.Found)
		printf(w, "  do:      %s", a.Do)
	}
}
