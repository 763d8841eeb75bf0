package agentcli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/baton-cli/baton/internal/progress"
)

// Usage is the usage an agent CLI reported in its output: Claude Code's
// stream-json result event (tokens and total_cost_usd), Codex's token
// counts (the usage of its --json turn events). nil when the output
// reports none.
func Usage(name string, out []byte) *progress.Usage {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "claude", Predecessor:
		return claudeUsage(out)
	case "codex":
		return codexUsage(out)
	}
	return nil
}

// claudeUsage is the usage of the last result event.
func claudeUsage(out []byte) *progress.Usage {
	var u *progress.Usage
	eachLine(out, func(line []byte) {
		var ev struct {
			Type  string  `json:"type"`
			Cost  float64 `json:"total_cost_usd"`
			Usage struct {
				In         int64 `json:"input_tokens"`
				Out        int64 `json:"output_tokens"`
				CacheRead  int64 `json:"cache_read_input_tokens"`
				CacheWrite int64 `json:"cache_creation_input_tokens"`
			} `json:"usage"`
		}
		if json.Unmarshal(line, &ev) != nil || ev.Type != "result" {
			return
		}
		u = &progress.Usage{InputTokens: ev.Usage.In, OutputTokens: ev.Usage.Out, CacheReadTokens: ev.Usage.CacheRead,
			CacheWriteTokens: ev.Usage.CacheWrite, CostUSD: ev.Cost, Source: "claude"}
	})
	return sane(u)
}

// codexUsage adds up the usage of the turns in Codex's --json events.
func codexUsage(out []byte) *progress.Usage {
	var u *progress.Usage
	eachLine(out, func(line []byte) {
		var ev struct {
			Type  string `json:"type"`
			Usage *struct {
				In     int64 `json:"input_tokens"`
				Cached int64 `json:"cached_input_tokens"`
				Out    int64 `json:"output_tokens"`
			} `json:"usage"`
		}
		if json.Unmarshal(line, &ev) != nil || ev.Usage == nil || ev.Type != "turn.completed" {
			return
		}
		if u == nil {
			u = &progress.Usage{Source: "codex"}
		}
		u.InputTokens += ev.Usage.In
		u.CacheReadTokens += ev.Usage.Cached
		u.OutputTokens += ev.Usage.Out
	})
	return sane(u)
}

// UsageFile reads what an --agent-cmd agent wrote to $BATON_USAGE_FILE:
// one JSON object {"input_tokens": N, "output_tokens": N,
// "cache_read_tokens": N, "cache_write_tokens": N, "cost_usd": X}, every
// field optional, counts whole and none negative.
func UsageFile(data []byte) (*progress.Usage, error) {
	var f struct {
		In         *int64   `json:"input_tokens"`
		Out        *int64   `json:"output_tokens"`
		CacheRead  *int64   `json:"cache_read_tokens"`
		CacheWrite *int64   `json:"cache_write_tokens"`
		Cost       *float64 `json:"cost_usd"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a usage object {\"input_tokens\":N,\"output_tokens\":N,\"cost_usd\":X}: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value: write one usage object")
	}
	u := &progress.Usage{Source: "usage-file"}
	for _, v := range []struct {
		p   *int64
		dst *int64
	}{{f.In, &u.InputTokens}, {f.Out, &u.OutputTokens}, {f.CacheRead, &u.CacheReadTokens}, {f.CacheWrite, &u.CacheWriteTokens}} {
		if v.p != nil {
			*v.dst = *v.p
		}
	}
	if f.Cost != nil {
		u.CostUSD = *f.Cost
	}
	if sane(u) == nil {
		return nil, fmt.Errorf("token counts and cost_usd must be 0 or more and finite")
	}
	return u, nil
}

// sane is u when its counts and cost are not negative and the cost is
// finite, else nil: a usage baton would add up wrongly is not recorded.
func sane(u *progress.Usage) *progress.Usage {
	if u == nil || u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 ||
		u.CostUSD < 0 || math.IsNaN(u.CostUSD) || math.IsInf(u.CostUSD, 0) {
		return nil
	}
	return u
}

func eachLine(out []byte, fn func([]byte)) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		fn(bytes.TrimSpace(sc.Bytes()))
	}
}
