package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/bench/gen"
	"github.com/baton-cli/baton/bench/stat"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
)

// The parts of the report beyond the command table: the predecessor's
// scripts, growth with history, and throughput.

const (
	minTxSmall         = 300 // transactions a second, 8 writers, 10 sessions
	minTxLarge         = 200 // the same on the large state
	throughputTotal    = 48  // transactions per throughput point (divides 1, 2, 4, 8, 16 writers)
	throughputMaxProcs = 16
)

// ---- the floor: a Go hello-world, built here with the same toolchain

const helloSource = "package main\n\nimport \"os\"\n\nfunc main() { os.Stdout.WriteString(\"hello\\n\") }\n"

// buildHello builds a static Go hello-world in dir and returns its path.
func buildHello(dir string) (string, error) {
	src := filepath.Join(dir, "hello")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(helloSource), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module hello\n\ngo 1.21\n"), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(src, "hello")
	c := exec.Command("go", "build", "-o", bin, ".")
	c.Dir = src
	c.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
	if out, err := c.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the hello-world floor: %v\n%s", err, out)
	}
	return copied(bin, bin)
}

// copied writes the program at path to a new file at to (replacing it)
// and returns to. Both programs timed run from such a copy: a file the
// linker wrote (through a memory mapping) sits in the page cache as single
// 4 KiB pages, a copy in large folios, which every exec maps far more
// cheaply (a quarter of baton's start-up on Linux 6.18, a tenth of the
// hello-world's): the ratios would otherwise depend on how each binary was
// built.
func copied(path, to string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	tmp := to + ".copy"
	if err := os.WriteFile(tmp, b, 0o755); err != nil {
		return "", err
	}
	return to, os.Rename(tmp, to)
}

// ---- the predecessor's scripts

// predecessorArgs maps the commands the predecessor's scripts also have to
// their command lines there.
func predecessorArgs(dir string, c command, st *state, i int) []string {
	script := func(name string) string { return filepath.Join(dir, "scripts", name) }
	switch c.label {
	case "progress get-status --field current_branch":
		return []string{script("progress.py"), "get-status", "--field", "current_branch"}
	case "progress get-session -1 --field agent_type":
		return []string{script("progress.py"), "get-session", "-1", "--field", "agent_type"}
	case "reviews get-last --field verdict":
		return []string{script("reviews.py"), "get-last", "--field", "verdict"}
	case "progress add-session":
		id := feature(st, i)
		return []string{script("progress.py"), "add-session", "-a", "IMPLEMENT", "-o", "READY_FOR_REVIEW",
			"-s", "Implemented " + id + ": handler, validation and tests", "--features", id,
			"--next-phase", "REVIEW", "--current-feature", id, "--current-branch", "feature/" + id + "-bench",
			"--commit-from", st.commits[0], "--commits", st.commits[1] + ":Implement the handler"}
	}
	return nil
}

// measurePredecessor times the predecessor's scripts (python3) on copies
// of the states (its writes would be changes outside baton in baton's own).
func measurePredecessor(states []*state, o options) (map[key]stats, error) {
	if _, err := os.Stat(filepath.Join(o.predecessor, "scripts", "progress.py")); err != nil {
		return nil, fmt.Errorf("-predecessor %s: no scripts/progress.py there (a checkout of the predecessor's repository)", o.predecessor)
	}
	res := map[key][]sample{}
	for _, st := range states {
		cp := *st
		cp.dir = st.dir + "-predecessor"
		if err := os.MkdirAll(cp.dir, 0o755); err != nil {
			return nil, err
		}
		for _, n := range []string{progress.FileName, reviews.FileName, features.FileName} {
			b, err := os.ReadFile(filepath.Join(st.dir, n))
			if err == nil {
				err = os.WriteFile(filepath.Join(cp.dir, n), b, 0o644)
			}
			if err != nil {
				return nil, err
			}
		}
		for round := 0; round < o.warmup+o.runs; round++ {
			for i, c := range commands {
				args := predecessorArgs(o.predecessor, c, &cp, round)
				if args == nil {
					continue
				}
				s, err := timeProcess(exec.Command("python3", args...), cp.dir, append(os.Environ(), "AGENT_STATE_DIR="+cp.dir))
				if err != nil {
					return nil, fmt.Errorf("predecessor %s (%s state): %w", c.label, st.name, err)
				}
				if round >= o.warmup {
					res[key{i, st.name}] = append(res[key{i, st.name}], s)
				}
			}
		}
	}
	return summarize(res), nil
}

// timeProcess runs c in dir with env and returns its wall and CPU time.
func timeProcess(c *exec.Cmd, dir string, env []string) (sample, error) {
	c.Dir, c.Env = dir, env
	var errb strings.Builder
	c.Stdout, c.Stderr = io.Discard, &errb
	start := time.Now()
	if err := c.Run(); err != nil {
		return sample{}, fmt.Errorf("%v: %s", err, strings.TrimSpace(errb.String()))
	}
	return sample{time.Since(start), c.ProcessState.UserTime() + c.ProcessState.SystemTime()}, nil
}

func reportPredecessor(w io.Writer, pred, baton map[key]stats) {
	fmt.Fprintf(w, "\n(e) against the predecessor's scripts (python3), medians: baton's time as a fraction of theirs (lower is faster)\n")
	fmt.Fprintf(w, "  %-44s %-6s %10s %18s\n", "command", "state", "scripts", "baton")
	for i, c := range commands {
		for _, name := range []string{"small", "large"} {
			p, ok := pred[key{i, name}]
			if !ok {
				continue
			}
			t := baton[key{i, name}].median
			fmt.Fprintf(w, "  %-44s %-6s %7s ms %9s ms %5.2f×\n", c.label, name, stat.Ms(p.median), stat.Ms(t), stat.Ratio(t, p.median))
		}
	}
}

// ---- throughput

// sessionCount is how many sessions progress.json holds.
func sessionCount(st *state) (int, error) {
	b, err := os.ReadFile(filepath.Join(st.dir, progress.FileName))
	if err != nil {
		return 0, err
	}
	return int(gjson.GetBytes(b, "sessions.#").Int()), nil
}

type throughput struct {
	writers, tx, lost int
	perSecond         float64
}

// measureThroughput runs throughputTotal add-sessions split over n
// concurrent writers (each a sequence of baton processes) and counts the
// sessions that arrived.
func measureThroughput(r *runner, st *state, n int) (throughput, error) {
	if _, err := r.credential(st, "IMPLEMENT"); err != nil {
		return throughput{}, err
	}
	before, err := sessionCount(st)
	if err != nil {
		return throughput{}, err
	}
	per := throughputTotal / n
	errc := make(chan error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if _, _, err := r.run(st, "IMPLEMENT", addSessionArgs(st, w*per+i)); err != nil {
					errc <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errc)
	if err := <-errc; err != nil {
		return throughput{}, err
	}
	after, err := sessionCount(st)
	if err != nil {
		return throughput{}, err
	}
	tx := per * n
	return throughput{writers: n, tx: tx, lost: tx - (after - before), perSecond: float64(tx) / elapsed.Seconds()}, nil
}

func benchThroughput(w io.Writer, r *runner, states []*state) error {
	fmt.Fprintf(w, "\n(f) throughput: %d progress add-session calls split over N concurrent writers, each a sequence of baton processes\n", throughputTotal)
	fmt.Fprintf(w, "  %-6s %8s %10s %6s\n", "state", "writers", "tx/s", "lost")
	at8 := map[string]float64{}
	for _, st := range states {
		for n := 1; n <= throughputMaxProcs; n *= 2 {
			t, err := measureThroughput(r, st, n)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "  %-6s %8d %10.1f %6d\n", st.name, n, t.perSecond, t.lost)
			if t.lost != 0 {
				return fmt.Errorf("%d of %d writes lost with %d writers on the %s state", t.lost, t.tx, n, st.name)
			}
			if n == 8 {
				at8[st.name] = t.perSecond
			}
		}
	}
	fmt.Fprintf(w, "  8 writers: small %.0f tx/s (target ≥ %d) %s, large %.0f tx/s (target ≥ %d) %s\n",
		at8["small"], minTxSmall, stat.Verdict(at8["small"] >= minTxSmall), at8["large"], minTxLarge, stat.Verdict(at8["large"] >= minTxLarge))
	return nil
}

// ---- growth with history

// growthSizes are the histories the writes are timed on, 10 to 5,000
// sessions, reviews and fixes in the large state's proportions.
var growthSizes = []gen.Size{
	gen.Small,
	{Sessions: 1000, Reviews: 200, Fixes: 100, Features: 1000},
	{Sessions: 5000, Reviews: 1000, Fixes: 500, Features: 1000},
}

// growthCommand is a write timed on every history size; prep runs first,
// untimed, and returns the role's credential to use and the arguments.
type growthCommand struct {
	label string
	prep  func(r *runner, st *state, i int) (cred string, args []string, err error)
}

var growthCommands = []growthCommand{
	{"progress add-session", func(r *runner, st *state, i int) (string, []string, error) {
		c, err := r.credential(st, "IMPLEMENT")
		return c, addSessionArgs(st, i), err
	}},
	{"reviews add-review", func(r *runner, st *state, i int) (string, []string, error) {
		c, err := r.credential(st, "REVIEW")
		return c, addReviewArgs(st, i), err
	}},
	{"reviews add-fix", prepAddFix},
	{"session end", func(r *runner, st *state, i int) (string, []string, error) {
		c, err := r.startSession(st, "IMPLEMENT")
		return c, []string{"session", "end", "-o", "ERROR", "-s", "the test suite would not start", "--failure", "tool_failure"}, err
	}},
}

// prepAddFix records a review asking for changes, untimed, and returns the
// fix that answers it. A feature at its fix-cycle limit turns the review
// into a rejection (which no fix answers): the next feature is tried.
func prepAddFix(r *runner, st *state, i int) (string, []string, error) {
	rc, err := r.credential(st, "REVIEW")
	if err != nil {
		return "", nil, err
	}
	for try := 0; try < 50; try++ {
		id := feature(st, i*7+try)
		_, out, err := r.runAs(st, rc, []string{"--json", "reviews", "add-review", "-a", "REVIEW", "--feature-id", id,
			"-b", "feature/" + id + "-fix", "-v", "REQUEST_CHANGES", "-s", "Error handling is missing on the database path.",
			"--issues", `{"major":[{"description":"No error handling when the database is down"}]}`,
			"--commit-from", st.commits[0], "--commit-to", st.commits[2]})
		if err != nil {
			return "", nil, err
		}
		if gjson.GetBytes(out, "verdict").String() != "REQUEST_CHANGES" || gjson.GetBytes(out, "decision.reject").Bool() {
			continue
		}
		rid := gjson.GetBytes(out, "review_id").Int()
		fc, err := r.credential(st, "FIX")
		return fc, []string{"reviews", "add-fix", "-r", fmt.Sprint(rid), "--issues-fixed", fmt.Sprintf(`["R%d-M1"]`, rid)}, err
	}
	return "", nil, fmt.Errorf("no feature left below its fix-cycle limit to record a fix for")
}

// startSession opens a new session for role and returns its credential.
func (r *runner) startSession(st *state, role string) (string, error) {
	_, out, err := r.runAs(st, "", []string{"--as", "HUMAN", "--reason", "bench", "--json", "session", "start", "--agent", role})
	if err != nil {
		return "", err
	}
	var started struct {
		Env map[string]string `json:"env"`
	}
	if err := json.Unmarshal(out, &started); err != nil {
		return "", err
	}
	return started.Env["BATON_SESSION"], nil
}

// unlimitedFixCycles raises the fix-cycle limit of a generated state, so
// that every add-review timed is the same decision at every size: a
// review asking for changes. The longer histories give each feature more
// reviews, and at the default limit (3) most reviews of the longest
// would be rejections, which delete the branch and rewrite the feature list
// — a heavier write at any size, not a cost of the history.
func unlimitedFixCycles(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, ".baton"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ".baton", "config"), []byte(`{"max_fix_cycles": 1000000}`+"\n"), 0o644)
}

func benchGrowth(w io.Writer, r *runner, o options) error {
	root, err := os.MkdirTemp(o.dir, "baton-growth-")
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(root)
	}
	res := map[key][]sample{} // key.cmd: growth command, key.state: size index
	rng := rand.New(rand.NewPCG(o.seed, 11))
	states := make([]*state, len(growthSizes))
	for si, sz := range growthSizes {
		st := &state{name: fmt.Sprint(si), dir: filepath.Join(root, fmt.Sprint(sz.Sessions))}
		if st.gen, err = gen.Write(st.dir, sz, o.seed); err != nil {
			return err
		}
		if err := unlimitedFixCycles(st.dir); err != nil {
			return err
		}
		if st.commits, err = gitInit(st.dir); err != nil {
			return err
		}
		states[si] = st
	}
	// every size in each round, in a shuffled order, so that a machine
	// that speeds up or slows down during the table moves every column
	// alike and the ratios hold
	for round := 0; round < 1+o.growthRuns; round++ {
		for _, si := range rng.Perm(len(states)) {
			st, sessions := states[si], growthSizes[si].Sessions
			for _, ci := range rng.Perm(len(growthCommands)) {
				cred, args, err := growthCommands[ci].prep(r, st, round)
				if err != nil {
					return fmt.Errorf("%s at %d sessions: %w", growthCommands[ci].label, sessions, err)
				}
				s, _, err := r.runAs(st, cred, args)
				if err != nil {
					return fmt.Errorf("%s at %d sessions: %w", growthCommands[ci].label, sessions, err)
				}
				if round > 0 {
					res[key{ci, st.name}] = append(res[key{ci, st.name}], s)
				}
			}
		}
	}
	reportGrowth(w, summarize(res), o)
	return nil
}

func reportGrowth(w io.Writer, s map[key]stats, o options) {
	fmt.Fprintf(w, "\n(g) writes as history grows, medians of %d runs (ms), and the largest against the smallest\n", o.growthRuns)
	fmt.Fprintf(w, "  %-24s", "sessions:")
	for _, sz := range growthSizes {
		fmt.Fprintf(w, " %9d", sz.Sessions)
	}
	fmt.Fprintln(w)
	last := fmt.Sprint(len(growthSizes) - 1)
	for ci, c := range growthCommands {
		fmt.Fprintf(w, "  %-24s", c.label)
		for si := range growthSizes {
			fmt.Fprintf(w, " %9s", stat.Ms(s[key{ci, fmt.Sprint(si)}].median))
		}
		fmt.Fprintf(w, "   %6.2f×\n", stat.Ratio(s[key{ci, last}].median, s[key{ci, "0"}].median))
	}
	fmt.Fprintf(w, "  the same writes' CPU time (user+sys of the process, medians, ms), steadier than the wall clock on a busy machine\n")
	for ci, c := range growthCommands {
		fmt.Fprintf(w, "  %-24s", c.label)
		for si := range growthSizes {
			fmt.Fprintf(w, " %9s", stat.Ms(s[key{ci, fmt.Sprint(si)}].cpu))
		}
		fmt.Fprintf(w, "   %6.2f×\n", stat.Ratio(s[key{ci, last}].cpu, s[key{ci, "0"}].cpu))
	}
}

// runAs runs baton in st bound to the credential cred ("" for none).
func (r *runner) runAs(st *state, cred string, args []string) (sample, []byte, error) {
	env := append(slices.Clip(r.env), "BATON_STATE_DIR="+st.dir)
	if cred != "" {
		env = append(env, "BATON_SESSION="+cred)
	}
	return r.exec(st, env, args)
}
