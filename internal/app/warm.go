package app

import (
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/jsondoc"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/store"
	"github.com/baton-cli/baton/internal/workflow"
)

// warmCodecs builds, before a write takes the lock, encoding/json's tables
// for the types its transaction encodes and decodes while it holds it (see
// store.WarmCodecs): the audit entry's payload, the open sessions, the
// status and its decision (as the status records it), the facts, and the records of the group's file
// (fileName; "" for a command of no group).
func warmCodecs(fileName string) {
	store.WarmCodecs()
	store.WarmJSON(eventPayload{}, progress.OpenSessions{}, progress.Status{}, workflow.Decision{}, statusDecision{}, jsondoc.Facts{})
	switch fileName {
	case progress.FileName:
		store.WarmJSON(progress.Session{})
	case reviews.FileName:
		store.WarmJSON(reviews.Review{}, reviews.Fix{})
	case features.FileName:
		store.WarmJSON(features.Feature{})
	}
}
