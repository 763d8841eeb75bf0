// Command lanebench measures what running agents at once buys: a generated
// project of independent features, a scripted agent whose every session
// takes a fixed time, and a gate of fixed time, driven to DONE by
// `baton run --agents K` for each K. It reports the wall time to DONE, the
// speed-up against K = 1, the time landings wait in the queue (a REVIEW's
// end to its landing) and the share of lane time that sits idle. The
// agents wait, they do not compute: the target is a speed-up of 3 or more
// at K = 4 on a 2-core machine. A conflict-heavy variant then has every
// feature edit one shared file, so that most landings conflict: each is
// sent back to FIX, which merges main, and reviewed again. It reports the
// same figures and the sends-back per feature.
//
//	go run ./bench/lanebench -baton bin/baton [-features 16] [-session 1s] [-gate 0.5s] [-agents 1,2,4,8] [-conflict-agents 1,4]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/baton-cli/baton/bench/gen"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

type opts struct {
	keyDir        string // XDG_CONFIG_HOME holding the benchmark's person key
	baton         string
	features      int
	session, gate time.Duration
	agents        []int
	keep          bool
	shared        bool // every feature edits shared.txt
}

func run(args []string, stdout, stderr io.Writer) int {
	var o opts
	var agents, conflictAgents string
	fs := flag.NewFlagSet("lanebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.baton, "baton", "bin/baton", "the baton binary")
	fs.IntVar(&o.features, "features", 16, "independent features in the project")
	fs.DurationVar(&o.session, "session", time.Second, "how long each agent session takes")
	fs.DurationVar(&o.gate, "gate", 500*time.Millisecond, "how long the gate takes")
	fs.StringVar(&agents, "agents", "1,2,4,8", "the numbers of agents at once to measure")
	fs.StringVar(&conflictAgents, "conflict-agents", "1,4", "the numbers of agents at once to measure with conflicting features (none: \"\")")
	fs.BoolVar(&o.keep, "keep", false, "keep the generated projects")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var err error
	if o.agents, err = agentCounts("-agents", agents); err != nil {
		fmt.Fprintln(stderr, "lanebench:", err)
		return 2
	}
	conflicting, err := agentCounts("-conflict-agents", conflictAgents)
	if err != nil {
		fmt.Fprintln(stderr, "lanebench:", err)
		return 2
	}
	bin, err := filepath.Abs(o.baton)
	if err != nil {
		fmt.Fprintln(stderr, "lanebench:", err)
		return 1
	}
	o.baton = bin
	// a person's key of the benchmark's own: it sets the project up, and
	// the run (a launcher) signs with it
	if o.keyDir, err = gen.PersonKey(bin, env(o)); err != nil {
		fmt.Fprintln(stderr, "lanebench:", err)
		return 1
	}
	defer os.RemoveAll(o.keyDir)
	fmt.Fprintf(stdout, "lanes: %d independent features, sessions of %s, a gate of %s\n", o.features, o.session, o.gate)
	if err := table(o, o.agents, stdout); err != nil {
		fmt.Fprintln(stderr, "lanebench:", err)
		return 1
	}
	if len(conflicting) == 0 {
		return 0
	}
	o.shared = true
	fmt.Fprintf(stdout, "lanes, conflict-heavy: %d features all editing shared.txt, sessions of %s, a gate of %s\n", o.features, o.session, o.gate)
	if err := table(o, conflicting, stdout); err != nil {
		fmt.Fprintln(stderr, "lanebench:", err)
		return 1
	}
	return 0
}

// agentCounts parses a flag's list of numbers of agents.
func agentCounts(flag, list string) ([]int, error) {
	var out []int
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || k < 1 {
			return nil, fmt.Errorf("%s: %q is not a number of agents", flag, s)
		}
		out = append(out, k)
	}
	return out, nil
}

// table measures a run to DONE for each number of agents and prints a
// line for each.
func table(o opts, agents []int, stdout io.Writer) error {
	fmt.Fprintf(stdout, "%-7s %10s %9s %16s %10s %18s\n", "agents", "to DONE", "speed-up", "queue wait (avg)", "lane idle", "sent back/feature")
	var base time.Duration
	for _, k := range agents {
		m, err := measure(o, k)
		if err != nil {
			return fmt.Errorf("%d agents: %v", k, err)
		}
		if base == 0 {
			base = m.wall
		}
		fmt.Fprintf(stdout, "%-7d %10s %8.2fx %16s %9.0f%% %18.2f\n", k, m.wall.Round(10*time.Millisecond), float64(base)/float64(m.wall), m.queueWait.Round(10*time.Millisecond), 100*m.idle, float64(m.sentBack)/float64(o.features))
	}
	return nil
}

// measurement is one run to DONE.
type measurement struct {
	wall, queueWait time.Duration
	idle            float64 // the share of lane time no session ran
	sentBack        int     // landings sent back (conflicts)
}

// measure runs a fresh project to DONE with k agents at once.
func measure(o opts, k int) (measurement, error) {
	dir, err := project(o)
	if err != nil {
		return measurement{}, err
	}
	if !o.keep {
		defer os.RemoveAll(dir)
	}
	args := []string{"--json", "run", "--agent-cmd", "sh " + filepath.Join(dir, "..", "agent.sh"), "--max-sessions", strconv.Itoa(12 * o.features), "--agents", strconv.Itoa(k), "--timeout", "10m",
		"--sandbox=off"} // the lanes' own cost: the sandbox's is its own benchmark
	cmd := exec.Command(o.baton, args...)
	cmd.Dir, cmd.Env = dir, env(o)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return measurement{}, err
	}
	var errBuf strings.Builder
	cmd.Stderr = &errBuf
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return measurement{}, err
	}
	ev := events(out, start)
	if err := cmd.Wait(); err != nil {
		return measurement{}, fmt.Errorf("baton run: %v\n%s", err, errBuf.String())
	}
	m := measurement{wall: time.Since(start), sentBack: ev.count("sent_back")}
	if k > 1 {
		m.queueWait, m.idle = ev.queueWait(), ev.idle(k, m.wall)
	}
	return m, nil
}

// project makes a git repository holding a baton project of independent
// features, with the gate configured, and the agent beside it.
func project(o opts) (string, error) {
	root, err := os.MkdirTemp("", "lanebench-")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "p")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(root, "agent.sh"), []byte(gen.LaneAgent), 0o755); err != nil {
		return "", err
	}
	var feats []map[string]string
	for i := 1; i <= o.features; i++ {
		feats = append(feats, map[string]string{"id": fmt.Sprintf("F%03d", i), "name": fmt.Sprintf("feature %d", i)})
	}
	fj, _ := json.Marshal(feats)
	cfg := fmt.Sprintf(`{"architecture_interval": 1000, "max_fix_cycles": 100, "gate": {"command": "sleep %g", "timeout": "10m"}}`, o.gate.Seconds())
	steps := [][]string{
		{"git", "init", "-q", "-b", "main"},
		{"git", "commit", "-q", "--allow-empty", "-m", "initial commit"},
		{o.baton, "init", "--name", "lanebench"},
		{"cp", "/dev/stdin", ".baton/config"},
		{o.baton, "--as", "HUMAN", "--reason", "lanebench", "reconcile"},
		{o.baton, "--as", "HUMAN", "--reason", "lanebench", "features", "append", "-s", "spec", "-e", string(fj)},
	}
	for _, s := range steps {
		c := exec.Command(s[0], s[1:]...)
		c.Dir, c.Env = dir, env(o)
		c.Stdin = strings.NewReader(cfg)
		if b, err := c.CombinedOutput(); err != nil {
			return "", fmt.Errorf("%s: %v\n%s", strings.Join(s, " "), err, b)
		}
	}
	return dir, nil
}

// env is the environment every process of the benchmark runs with: baton
// on PATH, an identity to commit as, and the agent's session time.
func env(o opts) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BATON_") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			out = append(out, kv)
		}
	}
	if o.keyDir != "" {
		out = append(out, "XDG_CONFIG_HOME="+o.keyDir)
	}
	return append(out, "PATH="+filepath.Dir(o.baton)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GIT_AUTHOR_NAME=lanebench", "GIT_AUTHOR_EMAIL=lanebench@example.test", "GIT_COMMITTER_NAME=lanebench", "GIT_COMMITTER_EMAIL=lanebench@example.test",
		fmt.Sprintf("LANE_AGENT_SLEEP=%g", o.session.Seconds()), "LANE_AGENT_SHARED="+map[bool]string{true: "1"}[o.shared])
}

// event is one JSON event of a run of lanes, stamped as it arrived.
type event struct {
	at      time.Duration
	Event   string `json:"event"`
	Role    string `json:"role"`
	Feature string `json:"feature"`
	Item    string `json:"item"`
}

type eventLog []event

// events reads the run's JSON events as they come.
func events(r io.Reader, start time.Time) eventLog {
	var out eventLog
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Event != "" {
			e.at = time.Since(start)
			out = append(out, e)
		}
	}
	return out
}

// count is how many events of kind the run reported.
func (l eventLog) count(kind string) int {
	n := 0
	for _, e := range l {
		if e.Event == kind {
			n++
		}
	}
	return n
}

// queueWait is the mean time from a REVIEW's end to its feature's landing.
func (l eventLog) queueWait() time.Duration {
	reviewed := map[string]time.Duration{}
	var sum time.Duration
	n := 0
	for _, e := range l {
		switch {
		case e.Event == "ended" && e.Role == "REVIEW":
			reviewed[e.Feature] = e.at
		case e.Event == "landed":
			if t, ok := reviewed[e.Item]; ok {
				sum += e.at - t
				n++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return sum / time.Duration(n)
}

// idle is the share of the k lanes' time, over the run, with no session.
func (l eventLog) idle(k int, wall time.Duration) float64 {
	busy, last := 0, time.Duration(0)
	var used time.Duration
	for _, e := range l {
		used += time.Duration(busy) * (e.at - last)
		last = e.at
		switch e.Event {
		case "opened":
			busy++
		case "ended":
			busy--
		}
	}
	used += time.Duration(busy) * (wall - last)
	return 1 - float64(used)/float64(time.Duration(k)*wall)
}
