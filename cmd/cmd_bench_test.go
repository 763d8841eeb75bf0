package cmd_test

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"baton/bench/gen"
	"baton/cmd"
)

// large is the generated 10,000-session state, made once per test binary.
var large = sync.OnceValues(func() (*gen.State, error) { return gen.Generate(gen.Large, 1) })

// BenchmarkMain runs whole commands in process on a copy of the large
// state, without the process start that bench/cmdbench also counts: the
// place to take a profile of one command
// (go test -run='^$' -bench='Main/add-session' -cpuprofile cpu.out ./cmd).
// Writes grow the state by one record per iteration.
func BenchmarkMain(b *testing.B) {
	st, err := large()
	if err != nil {
		b.Fatal(err)
	}
	id := st.FeatureIDs[len(st.FeatureIDs)-1]
	for _, c := range []struct {
		name, role string // role: BATON_ROLE, which writes need
		args       []string
	}{
		{"version", "", []string{"--version"}},
		{"get-status-field", "", []string{"progress", "get-status", "--field", "current_branch"}},
		{"get-session-field", "", []string{"progress", "get-session", "-1", "--field", "agent_type"}},
		{"get-last-field", "", []string{"reviews", "get-last", "--field", "verdict"}},
		{"features-next", "", []string{"features", "next"}},
		{"add-session", "IMPLEMENT", []string{"progress", "add-session", "-a", "IMPLEMENT", "-o", "READY_FOR_REVIEW", "-s", "Implemented " + id,
			"--features", id, "--commit-from", "a1b2c3d", "--commits", "d4e5f6a:Implement the handler"}},
		{"features-pass", "REVIEW", []string{"features", "pass", id}},
		{"add-review", "REVIEW", []string{"reviews", "add-review", "-a", "REVIEW", "--feature-id", id, "-b", "feature/" + id, "-v", "REQUEST_CHANGES",
			"-s", "Missing error handling", "--issues", `{"major":[{"description":"Missing error handling","location":"a.go:1"}]}`}},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			if err := st.WriteDir(dir); err != nil {
				b.Fatal(err)
			}
			var stderr bytes.Buffer
			env := cmd.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Cwd: dir, Now: time.Now,
				Getenv: func(k string) string {
					switch k {
					case "BATON_STATE_DIR":
						return dir
					case "BATON_ROLE":
						return c.role
					}
					return ""
				}}
			b.ReportAllocs()
			for b.Loop() {
				if code := cmd.Main(c.args, env); code != 0 {
					b.Fatal(fmt.Sprintf("exit %d: %s", code, stderr.String()))
				}
				stderr.Reset()
			}
		})
	}
}
