// Command cmdbench times whole baton commands — process start to exit, as an
// agent pays for them — on a small and a large generated state, and prints
// the medians and 90th percentiles with the ratios the performance targets
// are stated in:
//
//   - every command on the large state (1,000 sessions by default, the
//     size real projects reach; -sessions for more) takes under 50 ms
//     (median), add-session reported on its own;
//   - --version against a Go hello-world (built here, the floor any Go
//     process pays), reported as a ratio with no target: most of the
//     difference is the initialisation of the JSON Schema library;
//   - add-session, add-review, add-fix and session end on 10, 1,000 and
//     5,000 sessions, to show how writes grow with the files (-growth);
//   - 8 concurrent writers get ≥ 300 transactions/s through on 10 sessions
//     and ≥ 200/s on the large state, losing none (-throughput, 1 to 16 writers);
//   - with -predecessor DIR (a checkout of the predecessor's repository),
//     the same reads and add-session by its Python scripts, for the ratio;
//   - baton init adopts a predecessor's 50,000 sessions in under 30 s
//     (-init, at -init-sizes 3,000, 12,000 and 50,000 sessions).
//
// Commands run round-robin, in a new random order every round, so that
// machine noise falls on all of them alike; compare ratios within one run.
// The exit status is non-zero only when the harness itself fails (a command
// exits non-zero, a state cannot be made), never because a target is missed.
//
//	go run ./bench/cmdbench -baton bin/baton [-runs 40] [-keep] [-predecessor DIR] [-growth=false] [-growth-only] [-throughput=false] [-init=false] [-init-only]
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/baton-cli/baton/bench/gen"
	"github.com/baton-cli/baton/bench/stat"
	"github.com/baton-cli/baton/internal/features"
	"github.com/baton-cli/baton/internal/progress"
	"github.com/baton-cli/baton/internal/reviews"
)

// The target, reported (never enforced through the exit status).
const addSessionBudget = 50 * time.Millisecond

type options struct {
	baton        string
	runs, warmup int
	dir          string
	keep, git    bool
	seed         uint64
	large        gen.Size
	predecessor  string // a checkout of the predecessor's scripts ("" to skip)
	growth       bool
	growthOnly   bool
	growthRuns   int
	throughput   bool
	adopt        bool // time init adopting a predecessor's state (adopt.go)
	adoptOnly    bool
	initSizes    string
	initRuns     int
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return 2
	}
	if err := bench(o, stdout); err != nil {
		fmt.Fprintf(stderr, "cmdbench: %v\n", err)
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	o := options{large: gen.Size{Sessions: 1000, Reviews: 200, Fixes: 100, Features: 100}}
	fs := flag.NewFlagSet("cmdbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.baton, "baton", "bin/baton", "the baton binary to time")
	fs.IntVar(&o.runs, "runs", 40, "timed runs of each command on each state")
	fs.IntVar(&o.warmup, "warmup", 3, "untimed rounds first (at least 1: they also leave every file written by baton, as in use)")
	fs.StringVar(&o.dir, "dir", "", "where to make the state directories (default: the system temp dir)")
	fs.BoolVar(&o.keep, "keep", false, "keep the state directories")
	fs.BoolVar(&o.git, "git", true, "make each state directory a git repository with one commit (add-session reads HEAD)")
	fs.Uint64Var(&o.seed, "seed", 1, "generator seed")
	fs.IntVar(&o.large.Sessions, "sessions", o.large.Sessions, "sessions in the large state")
	fs.IntVar(&o.large.Reviews, "reviews", o.large.Reviews, "reviews in the large state")
	fs.IntVar(&o.large.Fixes, "fixes", o.large.Fixes, "fixes in the large state")
	fs.IntVar(&o.large.Features, "features", o.large.Features, "features in the large state")
	fs.StringVar(&o.predecessor, "predecessor", os.Getenv("BATON_PREDECESSOR"), "a checkout of the predecessor's repository (its scripts/*.py) to time against (default $BATON_PREDECESSOR; none: skipped)")
	fs.BoolVar(&o.growth, "growth", true, "time the writes on 10 to 5,000 sessions")
	fs.IntVar(&o.growthRuns, "growth-runs", 5, "timed runs of each write on each history size")
	fs.BoolVar(&o.growthOnly, "growth-only", false, "time only the writes as history grows (g), nothing else")
	fs.BoolVar(&o.throughput, "throughput", true, "measure transactions a second with 1 to 16 concurrent writers")
	fs.BoolVar(&o.adopt, "init", true, "time baton init adopting a predecessor's state of each -init-sizes")
	fs.BoolVar(&o.adoptOnly, "init-only", false, "time only baton init adopting a predecessor's state, nothing else")
	fs.StringVar(&o.initSizes, "init-sizes", "3000,12000,50000", "the predecessor's sessions in each state -init adopts")
	fs.IntVar(&o.initRuns, "init-runs", 1, "timed runs of init on each size")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.runs < 1 || o.warmup < 1 || o.growthRuns < 1 || o.initRuns < 1 {
		fmt.Fprintln(stderr, "cmdbench: -runs, -warmup, -growth-runs and -init-runs must be at least 1")
		return o, errors.New("bad flags")
	}
	return o, nil
}

// ---- states

// state is one generated state directory under test.
type state struct {
	name string
	dir  string
	gen  *gen.State
	// commits are the hashes writes name: the repository's three commits
	// (baton checks them) or, without -git, made-up ones.
	commits [3]string
}

func makeStates(o options) ([]*state, func(), error) {
	root, err := os.MkdirTemp(o.dir, "baton-cmdbench-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() {
		if !o.keep {
			os.RemoveAll(root)
		}
	}
	var out []*state
	for _, s := range []struct {
		name string
		size gen.Size
	}{{"small", gen.Small}, {"large", o.large}} {
		st := &state{name: s.name, dir: filepath.Join(root, s.name), commits: [3]string{"a1b2c3d", "d4e5f6a", "b7c8d9e"}}
		if st.gen, err = gen.Write(st.dir, s.size, o.seed); err != nil {
			cleanup()
			return nil, nil, fmt.Errorf("%s state: %w", s.name, err)
		}
		if o.git {
			if st.commits, err = gitInit(st.dir); err != nil {
				cleanup()
				return nil, nil, fmt.Errorf("%s state: %w", s.name, err)
			}
		}
		out = append(out, st)
	}
	return out, cleanup, nil
}

// gitInit makes dir a repository with three commits, as the project an
// agent works in, and returns their short hashes, oldest first. The state
// files stay untracked.
func gitInit(dir string) ([3]string, error) {
	var hashes [3]string
	git := func(args ...string) ([]byte, error) {
		c := exec.Command("git", append([]string{"-c", "user.name=cmdbench", "-c", "user.email=cmdbench@example.test", "-c", "commit.gpgsign=false"}, args...)...)
		c.Dir = dir
		c.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
		out, err := c.CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("git %s: %v: %s (run with -git=false to skip)", args[0], err, bytes.TrimSpace(out))
		}
		return out, nil
	}
	if _, err := git("init", "-q"); err != nil {
		return hashes, err
	}
	for _, msg := range []string{"Initial project setup", "Implement the handler", "Add tests for the handler"} {
		if _, err := git("commit", "-q", "--allow-empty", "-m", msg); err != nil {
			return hashes, err
		}
	}
	out, err := git("log", "--reverse", "--format=%h")
	if err != nil {
		return hashes, err
	}
	f := strings.Fields(string(out))
	if len(f) != 3 {
		return hashes, fmt.Errorf("git log: want 3 commits, got %q", out)
	}
	copy(hashes[:], f)
	return hashes, nil
}

func fileSizes(st *state) string {
	var parts []string
	for _, n := range []string{progress.FileName, reviews.FileName, features.FileName} {
		if fi, err := os.Stat(filepath.Join(st.dir, n)); err == nil {
			parts = append(parts, fmt.Sprintf("%s %s", n, stat.Human(fi.Size())))
		}
	}
	return strings.Join(parts, ", ")
}

// ---- commands

// command is one baton invocation to time; args gets the run number so
// that mutating commands can vary their input.
type command struct {
	label string
	kind  kind
	role  string // for a write: the role of the session an agent's call is bound to
	args  func(st *state, i int) []string
}

type kind int

const (
	floor kind = iota // the Go hello-world
	baseline
	fieldRead
	read
	write
)

func fixed(args ...string) func(*state, int) []string {
	return func(*state, int) []string { return args }
}

var commands = []command{
	{"Go hello-world (the floor)", floor, "", fixed()},
	{"--version", baseline, "", fixed("--version")},
	{"progress get-status --field current_branch", fieldRead, "", fixed("progress", "get-status", "--field", "current_branch")},
	{"progress get-session -1 --field agent_type", fieldRead, "", fixed("progress", "get-session", "-1", "--field", "agent_type")},
	{"reviews get-last --field verdict", fieldRead, "", fixed("reviews", "get-last", "--field", "verdict")},
	{"features next", read, "", fixed("features", "next")},
	{"next", read, "", fixed("next")},
	{"status", read, "", fixed("status")},
	{"log --feature", read, "", func(st *state, i int) []string { return []string{"log", "--feature", feature(st, i)} }},
	{"show", read, "", func(st *state, i int) []string { return []string{"show", feature(st, i)} }},
	{"progress add-session", write, "IMPLEMENT", addSessionArgs},
	{"features pass", write, "", passArgs}, // as a person: see passArgs
	{"reviews add-review", write, "REVIEW", addReviewArgs},
}

// Where the floor and --version are in commands.
const (
	helloIdx   = 0
	versionIdx = 1
)

func feature(st *state, i int) string {
	ids := st.gen.FeatureIDs
	return ids[i%len(ids)]
}

func addSessionArgs(st *state, i int) []string {
	id := feature(st, i)
	return []string{"progress", "add-session", "-a", "IMPLEMENT", "-o", "READY_FOR_REVIEW",
		"-s", fmt.Sprintf("Implemented %s: handler, validation and tests; wired the endpoint into the router", id),
		"--features", id, "--next-phase", "REVIEW", "--current-feature", id, "--current-branch", "feature/" + id + "-bench",
		"--commit-from", st.commits[0], "--commits", st.commits[1] + ":Implement the handler", st.commits[2] + ":Add tests for the handler"}
}

// passArgs marks pending features passing in turn, never the first pending
// one, so that `features next` keeps finding work on the small state. An
// agent may mark passing only what a PASS review names, so a person does
// it here (the same write).
func passArgs(st *state, i int) []string {
	p := st.gen.Pending
	id := feature(st, i)
	if len(p) >= 2 {
		id = p[1+i%(len(p)-1)]
	}
	return []string{"--as", "HUMAN", "--reason", "bench", "features", "pass", id}
}

const benchIssues = `{"critical":[],"major":[{"description":"Missing error handling for database connection failure in the health handler","location":"backend/app/routes/health.py:15","suggestion":"Add a try/except block with a 503 response"}],"minor":[{"description":"Response schema is not documented","location":"backend/app/routes/health.py:3","suggestion":"Add the schema to the OpenAPI spec"},{"description":"Magic number for the timeout","location":"backend/app/config.py:40","suggestion":"Move it to settings"}],"suggestions":[]}`

func addReviewArgs(st *state, i int) []string {
	id := feature(st, i)
	return []string{"reviews", "add-review", "-a", "REVIEW", "--feature-id", id, "-b", "feature/" + id + "-bench",
		"-v", "REQUEST_CHANGES", "-s", "Functional, but error handling is missing on the database path.",
		"--issues", benchIssues, "--commit-from", st.commits[0], "--commit-to", st.commits[2]}
}

// ---- running

// runner runs baton in a state directory.
type runner struct {
	baton  string
	hello  string // the Go hello-world floor
	env    []string
	creds  map[string]string // state dir + role -> the credential of its session
	keyDir string            // XDG_CONFIG_HOME holding the bench's person key
}

func newRunner(baton string) (*runner, error) {
	abs, err := filepath.Abs(baton)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil || fi.IsDir() {
		return nil, fmt.Errorf("%s: not a baton binary (build it with 'make build')", baton)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BATON_") && !strings.HasPrefix(kv, "AGENT_STATE_DIR=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	// a person's key of the bench's own, so that it opens the sessions
	// its writes are bound to (as a launcher would)
	cfg, err := gen.PersonKey(abs, env)
	if err != nil {
		return nil, err
	}
	env = append(env, "XDG_CONFIG_HOME="+cfg)
	return &runner{baton: abs, env: env, creds: map[string]string{}, keyDir: cfg}, nil
}

// credential opens (once) a session for role in the state and returns its
// credential: the bench times agents' bound calls, credential check included.
func (r *runner) credential(st *state, role string) (string, error) {
	if c, ok := r.creds[st.dir+"\x00"+role]; ok {
		return c, nil
	}
	c := exec.Command(r.baton, "--as", "HUMAN", "--reason", "bench", "--json", "session", "start", "--agent", role)
	c.Dir = st.dir
	c.Env = append(slices.Clip(r.env), "BATON_STATE_DIR="+st.dir)
	out, err := c.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("opening a %s session (in the %s state): %v\n%s", role, st.name, err, out)
	}
	var started struct {
		Env map[string]string `json:"env"`
	}
	if err := json.Unmarshal(out, &started); err != nil {
		return "", err
	}
	r.creds[st.dir+"\x00"+role] = started.Env["BATON_SESSION"]
	return started.Env["BATON_SESSION"], nil
}

// sample is one timed run: wall-clock and CPU (user+system) time.
type sample struct{ wall, cpu time.Duration }

func (r *runner) run(st *state, role string, args []string) (sample, []byte, error) {
	cred := ""
	if role != "" {
		var err error
		if cred, err = r.credential(st, role); err != nil {
			return sample{}, nil, err
		}
	}
	return r.runAs(st, cred, args)
}

// exec runs baton (the floor when args is empty) in st with env.
func (r *runner) exec(st *state, env, args []string) (sample, []byte, error) {
	bin := r.baton
	if len(args) == 0 {
		bin = r.hello
	}
	c := exec.Command(bin, args...)
	c.Dir = st.dir
	c.Env = env
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	start := time.Now()
	err := c.Run()
	wall := time.Since(start)
	if err != nil {
		return sample{}, nil, fmt.Errorf("baton %s (in the %s state): %v\n%s", strings.Join(args, " "), st.name, err, bytes.TrimSpace(errb.Bytes()))
	}
	cpu := c.ProcessState.UserTime() + c.ProcessState.SystemTime()
	return sample{wall, cpu}, out.Bytes(), nil
}

// accept checks that baton reads the generated files whole before anything
// is timed.
func (r *runner) accept(st *state) error {
	for _, args := range [][]string{{"progress", "list"}, {"reviews", "list"}, {"features", "list"}, {"features", "stats"}, {"progress", "get-review-type"}} {
		if _, _, err := r.run(st, "", args); err != nil {
			return fmt.Errorf("generated state not accepted: %w", err)
		}
	}
	_, out, err := r.run(st, "", []string{"progress", "get-session", "-1", "--field", "agent_type"})
	if err == nil && len(bytes.TrimSpace(out)) == 0 {
		err = fmt.Errorf("%s state: get-session -1 --field agent_type printed nothing", st.name)
	}
	return err
}

// key names one command on one state.
type key struct {
	cmd   int
	state string
}

// measure runs every command on every state warmup+runs times, round by
// round in a shuffled order, and keeps the timed samples. Each round writes
// all three files, so after the warm-up every file is one baton wrote (and
// recorded), as in use, rather than the generator's.
func measure(r *runner, states []*state, o options, progressOut io.Writer) (map[key][]sample, error) {
	type job struct {
		st  *state
		cmd int
	}
	var jobs []job
	for _, st := range states {
		for i := range commands {
			jobs = append(jobs, job{st, i})
		}
	}
	rng := rand.New(rand.NewPCG(o.seed, 7))
	res := map[key][]sample{}
	for round := 0; round < o.warmup+o.runs; round++ {
		rng.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
		for _, j := range jobs {
			c := commands[j.cmd]
			s, _, err := r.run(j.st, c.role, c.args(j.st, round))
			if err != nil {
				return nil, err
			}
			if round >= o.warmup {
				k := key{j.cmd, j.st.name}
				res[k] = append(res[k], s)
			}
		}
		if progressOut != nil {
			fmt.Fprintf(progressOut, "\rround %d/%d", round+1, o.warmup+o.runs)
		}
	}
	if progressOut != nil {
		fmt.Fprint(progressOut, "\r\033[K")
	}
	return res, nil
}

func bench(o options, stdout io.Writer) error {
	r, err := newRunner(o.baton)
	if err != nil {
		return err
	}
	defer os.RemoveAll(r.keyDir)
	if o.adoptOnly {
		return benchAdopt(stdout, r, o)
	}
	if o.growthOnly {
		load0 := stat.LoadAvg()
		if err := benchGrowth(stdout, r, o); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nload average before / after: %s / %s (on %d CPUs)\n", load0, stat.LoadAvg(), runtime.NumCPU())
		return nil
	}
	t0 := time.Now()
	states, cleanup, err := makeStates(o)
	if err != nil {
		return err
	}
	defer cleanup()
	if r.hello, err = buildHello(filepath.Dir(states[0].dir)); err != nil {
		return err
	}
	given := r.baton
	if r.baton, err = copied(given, filepath.Join(filepath.Dir(states[0].dir), "baton")); err != nil {
		return err
	}
	for _, st := range states {
		if err := r.accept(st); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "baton command timings (%s, run from a copy, as the hello-world): %d timed runs per command and state after %d warm-up rounds, shuffled round-robin\n", given, o.runs, o.warmup)
	for _, st := range states {
		fmt.Fprintf(stdout, "  %-5s %s\n        %s\n", st.name+":", st.gen.Size, fileSizes(st))
	}
	fmt.Fprintf(stdout, "  states generated in %s under %s\n", time.Since(t0).Round(time.Millisecond), filepath.Dir(states[0].dir))
	load0 := stat.LoadAvg()
	res, err := measure(r, states, o, stat.Terminal(os.Stderr))
	if err != nil {
		return err
	}
	timed := summarize(res)
	report(stdout, timed)
	if err := benchMore(stdout, r, states, o, timed); err != nil {
		return err
	}
	if load0 != "" {
		fmt.Fprintf(stdout, "\nload average before / after: %s / %s (on %d CPUs)\n", load0, stat.LoadAvg(), runtime.NumCPU())
	}
	if o.keep {
		fmt.Fprintf(stdout, "\nstates kept in %s\n", filepath.Dir(states[0].dir))
	}
	return nil
}

// benchMore runs and reports the parts after the command table.
func benchMore(w io.Writer, r *runner, states []*state, o options, timed map[key]stats) error {
	if o.predecessor != "" {
		pred, err := measurePredecessor(states, o)
		if err != nil {
			return err
		}
		reportPredecessor(w, pred, timed)
	} else {
		fmt.Fprintf(w, "\n(e) the predecessor's scripts: not timed (give -predecessor DIR or BATON_PREDECESSOR, a checkout of them)\n")
	}
	if o.throughput {
		if err := benchThroughput(w, r, states); err != nil {
			return err
		}
	}
	if o.growth {
		if err := benchGrowth(w, r, o); err != nil {
			return err
		}
	}
	if o.adopt {
		return benchAdopt(w, r, o)
	}
	return nil
}

// ---- statistics and the report

type stats struct {
	median, p90, cpu time.Duration
	n                int
}

func summarize(res map[key][]sample) map[key]stats {
	out := map[key]stats{}
	for k, ss := range res {
		walls := make([]time.Duration, len(ss))
		cpus := make([]time.Duration, len(ss))
		for i, s := range ss {
			walls[i], cpus[i] = s.wall, s.cpu
		}
		out[k] = stats{median: stat.Quantile(walls, 0.5), p90: stat.Quantile(walls, 0.9), cpu: stat.Quantile(cpus, 0.5), n: len(ss)}
	}
	return out
}

func report(w io.Writer, s map[key]stats) {
	fmt.Fprintf(w, "\n%-44s %26s   %26s   %s\n", "", "small state (ms)", "large state (ms)", "large/")
	fmt.Fprintf(w, "%-44s %8s %8s %8s   %8s %8s %8s   %s\n", "command", "median", "p90", "cpu", "median", "p90", "cpu", "small")
	for i, c := range commands {
		sm, lg := s[key{i, "small"}], s[key{i, "large"}]
		fmt.Fprintf(w, "%-44s %8s %8s %8s   %8s %8s %8s   %5.2f×\n", c.label,
			stat.Ms(sm.median), stat.Ms(sm.p90), stat.Ms(sm.cpu), stat.Ms(lg.median), stat.Ms(lg.p90), stat.Ms(lg.cpu), stat.Ratio(lg.median, sm.median))
	}
	fmt.Fprintf(w, "(cpu is the median user+system time of the process)\n")
	reportTargets(w, s)
}

func reportTargets(w io.Writer, s map[key]stats) {
	fmt.Fprintln(w)
	fmt.Fprintf(w, "(c) start-up against a Go hello-world, medians (no target: most of it is the JSON Schema library's initialisation)\n")
	for i, c := range commands {
		if c.kind != baseline {
			continue
		}
		fmt.Fprintf(w, "  %-44s", c.label)
		for _, name := range []string{"small", "large"} {
			ratio := stat.Ratio(s[key{i, name}].median, s[key{helloIdx, name}].median)
			fmt.Fprintf(w, "  %s %5.2f×", name, ratio)
		}
		fmt.Fprintln(w)
	}
	for i, c := range commands {
		if c.label == "progress add-session" {
			lg := s[key{i, "large"}]
			fmt.Fprintf(w, "(b) progress add-session on the large state: median %s ms, p90 %s ms vs %d ms: %s\n",
				stat.Ms(lg.median), stat.Ms(lg.p90), addSessionBudget.Milliseconds(), stat.Verdict(lg.median < addSessionBudget))
		}
	}
	fmt.Fprintf(w, "other commands on the large state, median (vs --version, vs the small state; under %d ms):\n", addSessionBudget.Milliseconds())
	for i, c := range commands {
		if c.kind == read || (c.kind == write && c.label != "progress add-session") {
			lg := s[key{i, "large"}].median
			fmt.Fprintf(w, "  %-44s %8s ms  (%5.1f×, %5.1f×)  %s\n", c.label, stat.Ms(lg), stat.Ratio(lg, s[key{versionIdx, "large"}].median), stat.Ratio(lg, s[key{i, "small"}].median), stat.Verdict(lg < addSessionBudget))
		}
	}
}
