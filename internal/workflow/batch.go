package workflow

import (
	"fmt"
	"slices"
	"strings"

	"github.com/baton-cli/baton/internal/errs"
)

// An IMPLEMENT session is opened for the next pending feature; the
// predecessor's coding prompt lets its agent take one to MaxBatch related
// features. The session may widen its work to such a batch when it
// records it, as long as every feature added is one nothing else holds.

// MaxBatch is the most features one IMPLEMENT session takes.
const MaxBatch = 5

// BatchCandidate is what the files say of a feature a session would add.
type BatchCandidate struct {
	ID      string
	Known   bool // the feature list holds it
	Feature bool // of type feature (not a bug or tech debt)
	Passes  bool
	Held    bool     // another lane or pipeline holds it
	Waiting []string // the ids it depends on that do not pass yet
}

// Widen says whether an IMPLEMENT session opened for given may record
// named: false with nil when named adds nothing; an error naming the first
// feature it may not add, and why.
func Widen(session int, role string, given, named []string, cands []BatchCandidate) (bool, error) {
	c, _ := Canonical(role)
	if c != Implement || len(given) == 0 || role == PhaseBugfix {
		return false, nil
	}
	extra := false
	for _, id := range named {
		extra = extra || !slices.Contains(given, id)
	}
	if !extra {
		return false, nil
	}
	for _, id := range given {
		if !slices.Contains(named, id) {
			return false, nil // not a widening: WithinSession decides
		}
	}
	if len(named) > MaxBatch {
		return false, errs.New(errs.Policy, "session %d: --features names %d features, and an IMPLEMENT session takes at most %d; record at most %d, %s among them", session, len(named), MaxBatch, MaxBatch, strings.Join(given, ","))
	}
	for _, x := range cands {
		why := ""
		switch {
		case !x.Known:
			why = "the feature list has no such feature"
		case !x.Feature:
			why = "it is not a feature (bugs and tech debt have their own sessions)"
		case x.Passes:
			why = "it passes already"
		case x.Held:
			why = "other work holds it"
		case len(x.Waiting) > 0:
			why = "it depends on " + strings.Join(x.Waiting, ", ") + ", which do not pass yet"
		}
		if why != "" {
			return false, errs.New(errs.Policy, "session %d works on %s and may add pending features to its batch, but not %s: %s. Record the batch without %s",
				session, strings.Join(given, ","), x.ID, why, x.ID)
		}
	}
	return true, nil
}

// BatchNote is what the widening of a session's work says.
func BatchNote(session int, given, named []string) string {
	return fmt.Sprintf("session %d was opened for %s and records the batch %s: each is reviewed and passes with it", session, strings.Join(given, ","), strings.Join(named, ","))
}
