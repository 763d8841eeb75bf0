package cli

import (
	"fmt"
	"time"

	"github.com/baton-cli/baton/internal/app"
)

// The text forms of the application's results that only people read.

func durationText(s *int64) string {
	if s == nil {
		return "-"
	}
	return (time.Duration(*s) * time.Second).String()
}

// kindName names a work-item kind for people.
func kindName(kind string) string {
	switch kind {
	case "BUG":
		return "bug"
	case "DEBT":
		return "tech debt"
	}
	return "feature"
}

func int64Of(v any) *int64 {
	switch n := v.(type) {
	case *int64:
		return n
	case float64:
		i := int64(n)
		return &i
	}
	return nil
}

// logText is a log line as text: id, time, who, command, what.
func logText(l app.LogLine) string {
	return fmt.Sprintf("%s %s %-14s %-28s %s", l.EventID, l.Timestamp, app.LogWho(l), l.Command, app.LogWhat(l))
}
