package agentcli_test

import (
	"testing"

	"github.com/baton-cli/baton/internal/agentcli"
	"github.com/baton-cli/baton/internal/progress"
)

func TestUsage(t *testing.T) {
	cases := []struct {
		name, preset, out string
		want              *progress.Usage
	}{
		{"claude result", "claude", `{"type":"system","subtype":"init"}
{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}
{"type":"result","subtype":"success","total_cost_usd":0.0421,"usage":{"input_tokens":1200,"output_tokens":340,"cache_read_input_tokens":9000,"cache_creation_input_tokens":512}}
`, &progress.Usage{InputTokens: 1200, OutputTokens: 340, CacheReadTokens: 9000, CacheWriteTokens: 512, CostUSD: 0.0421, Source: "claude"}},
		{"claude, the last result counts", "claude-predecessor", `{"type":"result","total_cost_usd":1,"usage":{"input_tokens":1}}
{"type":"result","total_cost_usd":2,"usage":{"input_tokens":2}}`, &progress.Usage{InputTokens: 2, CostUSD: 2, Source: "claude"}},
		{"claude without a result", "claude", `{"type":"assistant"}`, nil},
		{"claude, a negative cost", "claude", `{"type":"result","total_cost_usd":-3,"usage":{}}`, nil},
		{"codex events, turns added up", "codex", `{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":7}}
{"type":"turn.completed","usage":{"input_tokens":50,"cached_input_tokens":0,"output_tokens":3}}`, &progress.Usage{InputTokens: 150, CacheReadTokens: 40, OutputTokens: 10, Source: "codex"}},
		{"codex text: no counts split in and out", "codex", "working\ntokens used\n12,345\n", nil},
		{"codex, a negative count", "codex", `{"type":"turn.completed","usage":{"input_tokens":-5}}`, nil},
		{"another CLI", "", `{"type":"result","total_cost_usd":1}`, nil},
	}
	for _, c := range cases {
		got := agentcli.Usage(c.preset, []byte(c.out))
		if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("%s: Usage = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestUsageFile(t *testing.T) {
	u, err := agentcli.UsageFile([]byte(`{"input_tokens":10,"output_tokens":5,"cost_usd":0.25}` + "\n"))
	if err != nil || *u != (progress.Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.25, Source: "usage-file"}) {
		t.Errorf("UsageFile = %+v, %v", u, err)
	}
	for _, bad := range []string{``, `[]`, `{"input_tokens":"10"}`, `{"tokens":3}`, `{"cost_usd":-1}`, `{"input_tokens":1.5}`, `{} {}`, `{"output_tokens":-2}`} {
		if u, err := agentcli.UsageFile([]byte(bad)); err == nil {
			t.Errorf("UsageFile(%q) = %+v, want an error", bad, u)
		}
	}
}

func FuzzUsage(f *testing.F) {
	f.Add([]byte(`{"type":"result","total_cost_usd":0.5,"usage":{"input_tokens":3}}`))
	f.Add([]byte(`{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":2}}`))
	f.Add([]byte(`{"input_tokens":1,"cost_usd":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range []string{"claude", "codex"} {
			if u := agentcli.Usage(p, data); u != nil && (u.CostUSD < 0 || u.InputTokens < 0 || u.OutputTokens < 0) {
				t.Fatalf("%s: a usage that cannot be added up: %+v", p, u)
			}
		}
		if u, err := agentcli.UsageFile(data); err == nil && (u.CostUSD < 0 || u.InputTokens < 0) {
			t.Fatalf("usage file: %+v", u)
		}
	})
}
