package cli

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzReadRelayConf: the relay takes its configuration from the first
// line of its stdin and leaves every byte after that line to the agent;
// a line that is not a configuration with a token is refused.
func FuzzReadRelayConf(f *testing.F) {
	f.Add([]byte(relayLine(relayConf{Token: "t", Supervise: true, Preset: "claude", Net: netModel, Allow: []string{"api.anthropic.com"}}) + "the prompt\n"))
	f.Add([]byte("{}\nprompt"))
	f.Add([]byte("not json\n"))
	f.Add([]byte(`{"token":"x"`))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		c, err := readRelayConf(r)
		if err != nil {
			return
		}
		i := bytes.IndexByte(in, '\n')
		if c.Token == "" || i < 0 {
			t.Fatalf("took %q as a configuration: %+v", in, c)
		}
		if rest := in[len(in)-r.Len():]; !bytes.Equal(rest, in[i+1:]) {
			t.Fatalf("consumed past the first line: left %q of %q", rest, in)
		}
		if strings.Contains(relayLine(c), "\n\n") || !strings.HasSuffix(relayLine(c), "\n") || strings.Count(relayLine(c), "\n") != 1 {
			t.Fatalf("the configuration's line is not one line: %q", relayLine(c))
		}
	})
}
