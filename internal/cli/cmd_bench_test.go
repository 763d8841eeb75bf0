package cli_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/bench/gen"
	"github.com/baton-cli/baton/internal/cli"
)

// large is the generated 10,000-session state, made once per test binary.
var large = sync.OnceValues(func() (*gen.State, error) { return gen.Generate(gen.Large, 1) })

// benchCase is one command: role is the role of the session a write is
// bound to (by its credential, as an agent's call is).
type benchCase struct {
	name, role string
	args       []string
}

func benchCases(id string) []benchCase {
	return []benchCase{
		{"version", "", []string{"--version"}},
		{"get-status-field", "", []string{"progress", "get-status", "--field", "current_branch"}},
		{"get-session-field", "", []string{"progress", "get-session", "-1", "--field", "agent_type"}},
		{"get-last-field", "", []string{"reviews", "get-last", "--field", "verdict"}},
		{"features-next", "", []string{"features", "next"}},
		{"add-session", "IMPLEMENT", []string{"progress", "add-session", "-a", "IMPLEMENT", "-o", "READY_FOR_REVIEW", "-s", "Implemented " + id, "--features", id}},
		// as a person: REVIEW marks a feature passing only after a passing review
		{"features-pass", "", []string{"--as", "HUMAN", "--reason", "bench", "features", "pass", id}},
		{"add-review", "REVIEW", []string{"reviews", "add-review", "-a", "REVIEW", "--feature-id", id, "-b", "feature/" + id, "-v", "REQUEST_CHANGES",
			"-s", "Missing error handling", "--issues", `{"major":[{"description":"Missing error handling","location":"a.go:1"}]}`}},
	}
}

// BenchmarkMain runs whole commands in process, without the process start
// that bench/cmdbench also counts, on a copy of the large state that baton
// has written once, as in use. This is
// the place to profile one command:
//
//	go test -run='^$' -bench='Main/add-session$' -cpuprofile cpu.out ./internal/cli
//
// Writes grow the state by one record per iteration. The -untrusted case
// reads the generated file as it is, as after a hand edit.
func BenchmarkMain(b *testing.B) {
	st, err := large()
	if err != nil {
		b.Fatal(err)
	}
	id := st.FeatureIDs[len(st.FeatureIDs)-1]
	cases := benchCases(id)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			dir := newState(b, st)
			for _, w := range cases {
				if w.role != "" { // every file written by baton once
					runMain(b, dir, w)
				}
			}
			benchMain(b, dir, c)
		})
	}
	b.Run("get-session-field-untrusted", func(b *testing.B) { benchMain(b, newState(b, st), cases[2]) })
}

func newState(b *testing.B, st *gen.State) string {
	dir := b.TempDir()
	if err := st.WriteDir(dir); err != nil {
		b.Fatal(err)
	}
	// the person's key, outside the state directory
	if err := os.MkdirAll(filepath.Join(dir+".config", "baton"), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir+".config", "baton", "key"), []byte(testKey+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	return dir
}

var (
	credMu sync.Mutex
	creds  = map[string]string{} // state dir + role -> its session's credential
)

// credential opens (once) a session for role in dir, as a person does,
// and returns its credential.
func credential(b *testing.B, dir, role string) string {
	credMu.Lock()
	defer credMu.Unlock()
	if c, ok := creds[dir+"\x00"+role]; ok {
		return c
	}
	var out, stderr bytes.Buffer
	env := cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &stderr, Cwd: dir, Now: time.Now,
		Getenv: func(k string) string {
			return map[string]string{"BATON_STATE_DIR": dir, "XDG_CONFIG_HOME": dir + ".config"}[k]
		}}
	if code := cli.Main([]string{"--as", "HUMAN", "--reason", "bench", "--json", "session", "start", "--agent", role}, env); code != 0 {
		b.Fatalf("session start %s: exit %d: %s", role, code, stderr.String())
	}
	c := gjson.Get(out.String(), "env.BATON_SESSION").String()
	creds[dir+"\x00"+role] = c
	return c
}

func benchMain(b *testing.B, dir string, c benchCase) {
	b.ReportAllocs()
	for b.Loop() {
		runMain(b, dir, c)
	}
}

func runMain(b *testing.B, dir string, c benchCase) { runMainTo(b, dir, c, io.Discard) }

// runMainOut runs c and returns what it printed.
func runMainOut(b *testing.B, dir string, c benchCase) string {
	var out bytes.Buffer
	runMainTo(b, dir, c, &out)
	return out.String()
}

func runMainTo(b *testing.B, dir string, c benchCase, stdout io.Writer) {
	var stderr bytes.Buffer
	cred := ""
	if c.role != "" {
		cred = credential(b, dir, c.role)
	}
	env := cli.Env{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: &stderr, Cwd: dir, Now: time.Now,
		Getenv: func(k string) string {
			switch k {
			case "BATON_STATE_DIR":
				return dir
			case "BATON_SESSION":
				return cred
			case "XDG_CONFIG_HOME":
				return dir + ".config"
			}
			return ""
		}}
	if code := cli.Main(c.args, env); code != 0 {
		b.Fatalf("baton %s: exit %d: %s", strings.Join(c.args, " "), code, stderr.String())
	}
}

// BenchmarkReviewGrowth runs add-review and add-fix in process on a young
// project (10 sessions) and on a long one (50,000 sessions, 10,000
// reviews, 5,000 fixes, 1,000 features): the two must cost about the same,
// as their rules read only the facts a write needs. Profile one with
//
//	go test -run='^$' -bench='ReviewGrowth/add-review/50000' -cpuprofile cpu.out ./internal/cli
func BenchmarkReviewGrowth(b *testing.B) {
	for _, sz := range []gen.Size{gen.Small, {Sessions: 50000, Reviews: 10000, Fixes: 5000, Features: 1000}} {
		st, err := gen.Generate(sz, 1)
		if err != nil {
			b.Fatal(err)
		}
		id := st.FeatureIDs[len(st.FeatureIDs)-1]
		review := benchCase{"add-review", "REVIEW", []string{"reviews", "add-review", "-a", "REVIEW", "--feature-id", id, "-b", "feature/" + id,
			"-v", "PASS_WITH_COMMENTS", "-s", "Fine", "--issues", `{"minor":[{"description":"A name could be clearer","location":"a.go:1"}]}`}}
		b.Run(fmt.Sprintf("add-review/%d", sz.Sessions), func(b *testing.B) {
			dir := newState(b, st)
			runMain(b, dir, review) // every file written by baton once
			benchCPU(b, dir, review)
		})
		// asking for changes, as bench/cmdbench's add-review does: no tech
		// debt, so progress.json changes only at its end
		changes := benchCase{"add-review", "REVIEW", []string{"reviews", "add-review", "-a", "REVIEW", "--feature-id", id, "-b", "feature/" + id,
			"-v", "REQUEST_CHANGES", "-s", "Needs work", "--issues", `{"major":[{"description":"No error handling","location":"a.go:1"}]}`}}
		b.Run(fmt.Sprintf("add-review-changes/%d", sz.Sessions), func(b *testing.B) {
			dir := newState(b, st)
			runMain(b, dir, changes)
			benchCPU(b, dir, changes)
		})
		b.Run(fmt.Sprintf("add-fix/%d", sz.Sessions), func(b *testing.B) {
			dir := newState(b, st)
			// no fix-cycle limit: every iteration answers the same review
			if err := os.MkdirAll(filepath.Join(dir, ".baton"), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ".baton", "config"), []byte(`{"max_fix_cycles": 1000000000}`), 0o644); err != nil {
				b.Fatal(err)
			}
			ask := benchCase{"ask", "REVIEW", []string{"--json", "reviews", "add-review", "-a", "REVIEW", "--feature-id", id, "-b", "feature/" + id,
				"-v", "REQUEST_CHANGES", "-s", "Needs work", "--issues", `{"major":[{"description":"No error handling","location":"a.go:1"}]}`}}
			out := runMainOut(b, dir, ask)
			rid := gjson.Get(out, "review_id").Int()
			fix := benchCase{"add-fix", "FIX", []string{"reviews", "add-fix", "-r", fmt.Sprint(rid), "--issues-fixed", fmt.Sprintf(`["R%d-M1"]`, rid)}}
			benchCPU(b, dir, fix)
		})
	}
}

// benchCPU is benchMain reporting the CPU time per command too.
func benchCPU(b *testing.B, dir string, c benchCase) {
	before, n := cpuTime(), 0
	for b.Loop() {
		runMain(b, dir, c)
		n++
	}
	b.ReportMetric(float64((cpuTime()-before).Microseconds())/1000/float64(n), "cpu-ms/op")
}
