package progress

import (
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
)

// Usage is what a session's agent spent, as its CLI reported it: an
// extension field "usage" of the session's record.
type Usage struct {
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64   `json:"cache_write_tokens,omitempty"`
	CostUSD          float64 `json:"cost_usd"`
	// Source says who reported it: claude, codex, or usage-file (an
	// --agent-cmd agent's $BATON_USAGE_FILE).
	Source string `json:"source"`
	// Run is the baton run that drove the session (its start time).
	Run string `json:"run,omitempty"`
}

// SetSessionUsage records u as session id's usage.
func (f *File) SetSessionUsage(id int, u Usage) error {
	arr := f.doc.Array("sessions")
	elems := arr.Elems()
	for i := len(elems) - 1; i >= 0; i-- {
		if gjson.GetBytes(elems[i], "session_id").Int() != int64(id) {
			continue
		}
		rec, err := arr.Record(i)
		if err != nil {
			return err
		}
		if err := rec.Set("usage", u); err != nil {
			return err
		}
		arr.Replace(i, rec)
		return nil
	}
	return errs.New(errs.NotFound, "Session %d not found (see 'baton progress list')", id)
}
