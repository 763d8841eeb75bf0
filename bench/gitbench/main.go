// Command gitbench compares the git operations baton runs with the git
// commands doing the same, on two repositories it generates with
// `git fast-import`: a small one (about 1,000 commits) and a large one
// (about 100,000). Both have a main line with feature branches forking and
// merging back, churn in a few hundred files, an open branch
// feature/session-work of 20 commits (checked out in a linked worktree, as
// an agent works) whose session started 10 commits back, and a diverged
// branch feature/merge-work with a PASS review, to merge.
//
// Each operation is timed three ways, against the git process doing it:
//
//   - proc: a process that opens the repository with baton's gitops and runs
//     the one operation (this program, re-executed with the hidden -op flag)
//     — like for like with git, process start-up included;
//   - in: gitops.Open and the operation inside this process — what a baton
//     command pays for the git part;
//   - git: the git command (rev-parse, rev-list, merge-base, merge --no-ff).
//
// and the baton commands that run them are timed whole: session start
// (open), session end and progress add-session (range), reviews add-review
// (merge base), reviews add-fix (ancestry) and reviews merge (merge). The
// targets, reported and never enforced through the exit status:
//
//   - on the small repository each operation is within 2× of git (proc/git);
//   - on the large repository every baton command takes under 50 ms
//     (median), the budget of a command a user runs.
//
// Everything runs round-robin in a new random order each round, after
// warm-up rounds, so machine noise falls on all alike; compare the ratios
// within one run. Writes are undone between runs (refs reset, state files
// restored) so that every run sees the same repository. The exit status is
// non-zero only when the harness itself fails.
//
//	go run ./bench/gitbench -baton bin/baton [-runs 15] [-runs-large 7] [-small 1000] [-large 100000] [-repos DIR] [-keep]
//
// With -repos DIR the repositories are generated there once and reused by
// later runs (generating the large one takes a while); the gitops Go
// benchmarks run on one with BATON_GITBENCH_REPO=DIR/large-100000-s1/main.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/baton-cli/baton/bench/gen"
	"github.com/baton-cli/baton/bench/stat"
	"github.com/baton-cli/baton/internal/gitops"
)

// The targets, reported (never enforced through the exit status).
const (
	maxVsGit    = 2.0                   // each operation on the small repository
	largeBudget = 50 * time.Millisecond // each baton command on the large one
)

// The branches every generated repository has.
const (
	mainBranch    = "main"
	sessionBranch = "feature/session-work" // open, checked out in the linked worktree
	mergeBranch   = "feature/merge-work"   // diverged from main, reviewed PASS
	branchLen     = 20                     // commits on each of them
	sessionBack   = 10                     // the session started this many commits back
)

type options struct {
	baton        string
	runs, warmup int
	runsLarge    int
	small, large int
	dir, repos   string
	keep         bool
	seed         uint64
	commitGraph  bool
	// the hidden helper mode: run one gitops operation and exit
	op, opRepo string
	opArgs     []string
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return 2
	}
	if o.op != "" {
		out, err := runOp(o.op, o.opRepo, o.opArgs)
		if err != nil {
			fmt.Fprintf(stderr, "gitbench -op %s: %v\n", o.op, err)
			return 1
		}
		fmt.Fprintln(stdout, out)
		return 0
	}
	if err := bench(o, stdout); err != nil {
		fmt.Fprintf(stderr, "gitbench: %v\n", err)
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("gitbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.baton, "baton", "bin/baton", "the baton binary to time")
	fs.IntVar(&o.runs, "runs", 15, "timed runs of each operation and command on the small repository")
	fs.IntVar(&o.runsLarge, "runs-large", 7, "timed runs of each operation and command on the large repository")
	fs.IntVar(&o.warmup, "warmup", 2, "untimed rounds first (at least 1)")
	fs.IntVar(&o.small, "small", 1000, "commits in the small repository (0 skips it)")
	fs.IntVar(&o.large, "large", 100000, "commits in the large repository (0 skips it)")
	fs.StringVar(&o.dir, "dir", "", "where to make the per-run temp directory (default: the system temp dir)")
	fs.StringVar(&o.repos, "repos", "", "keep the generated repositories in this directory and reuse them in later runs")
	fs.BoolVar(&o.keep, "keep", false, "keep the per-run temp directory")
	fs.Uint64Var(&o.seed, "seed", 1, "generator seed")
	fs.BoolVar(&o.commitGraph, "commit-graph", true, "write a commit-graph file, as git gc does in a repository in use")
	fs.StringVar(&o.op, "op", "", "internal: run one gitops operation in -repo and print its result")
	fs.StringVar(&o.opRepo, "repo", "", "internal: the repository of -op")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.op != "" {
		o.opArgs = fs.Args()
		return o, nil
	}
	if o.runs < 1 || o.runsLarge < 1 || o.warmup < 1 {
		fmt.Fprintln(stderr, "gitbench: -runs, -runs-large and -warmup must be at least 1")
		return o, errors.New("bad flags")
	}
	if o.small < 0 || o.large < 0 || (o.small == 0 && o.large == 0) || (o.small > 0 && o.small < 200) || (o.large > 0 && o.large < 200) {
		fmt.Fprintln(stderr, "gitbench: -small and -large are commit counts of at least 200 (0 skips one, not both)")
		return o, errors.New("bad flags")
	}
	return o, nil
}

// ---- generating a repository

// repoInfo describes a generated repository; it is saved beside it so that
// -repos can reuse it.
type repoInfo struct {
	Name        string `json:"name"`
	Commits     int    `json:"commits"`
	Files       int    `json:"files"`
	Objects     int    `json:"objects"`
	PackBytes   int64  `json:"pack_bytes"`
	CommitGraph bool   `json:"commit_graph"`
	GenMillis   int64  `json:"generated_in_ms"`
	// Main is the main worktree (main checked out, baton's state here);
	// Session the linked worktree with the session branch checked out.
	Main        string `json:"main"`
	Session     string `json:"session"`
	MainHead    string `json:"main_head"`
	SessionHead string `json:"session_head"`
	SessionBase string `json:"session_base"` // sessionBack commits below SessionHead
	FixCommit   string `json:"fix_commit"`   // 3 commits below SessionHead: a fix's commit
	MergeHead   string `json:"merge_head"`
	ForkPoint   string `json:"fork_point"` // merge base of main and the session branch
	// baton state made at setup
	FeatureMerge  string `json:"feature_merge"`
	FeatureReview string `json:"feature_review"`
	MergeReview   int    `json:"merge_review"`   // the PASS review of the merge branch
	ChangesReview int    `json:"changes_review"` // a REQUEST_CHANGES review of the session branch
	Snapshot      string `json:"snapshot"`       // copy of the state files after setup
}

const infoName = "gitbench.json"

// history writes a fast-import stream: a main line on which feature
// branches (kept in a few reusable refs/heads/wip/N) fork and are merged
// back with merge commits, each commit editing a few lines of a few files
// (a handful of hot files change far more often than the rest), files
// added and removed now and then.
type history struct {
	w       *bufio.Writer
	r       *rand.Rand
	mark    int
	when    int64
	commits int
	main    int // main's tip mark
	files   map[string]blob
	paths   []string // main's paths, in pick order (hot first)
	index   map[string]int
	newFile int
}

type blob struct {
	mark  int
	lines []string
}

type topic struct {
	ref   string
	fork  int
	tip   int
	left  int
	name  string
	over  map[string]*blob // nil: deleted on the branch
	order []string         // paths of over, in the order first changed
}

type change struct {
	path string
	b    *blob // nil: delete
}

var (
	dirs = []string{"cmd/server", "cmd/worker", "internal/api", "internal/handlers", "internal/store", "internal/migrations",
		"internal/auth", "internal/jobs", "internal/billing", "internal/search", "pkg/client", "pkg/util", "pkg/metrics",
		"web/components", "web/pages", "web/lib", "docs", "docs/adr", "tests/integration", "tests/e2e", "scripts", "config", "deploy"}
	words = []string{"account", "handler", "request", "session", "token", "invoice", "cache", "index", "query", "result", "worker", "queue",
		"config", "client", "server", "router", "schema", "record", "entry", "batch", "limit", "retry", "timeout", "payload", "status",
		"user", "order", "event", "metric", "report", "filter", "cursor", "page", "column", "tenant", "webhook", "export", "import"}
	verbs = []string{"Add", "Fix", "Refactor", "Update", "Handle", "Validate", "Cache", "Rename", "Test", "Document", "Remove", "Simplify", "Log", "Guard"}
	who   = []string{"Ada Builder <ada@example.test>", "Bo Reviewer <bo@example.test>", "Cy Fixer <cy@example.test>", "Di Architect <di@example.test>"}
)

func newHistory(w io.Writer, seed uint64) *history {
	return &history{w: bufio.NewWriterSize(w, 1<<20), r: rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc908)),
		when: time.Date(2021, 3, 1, 9, 0, 0, 0, time.UTC).Unix(), files: map[string]blob{}, index: map[string]int{}}
}

func (h *history) word() string { return words[h.r.IntN(len(words))] }

func (h *history) line() string {
	switch h.r.IntN(6) {
	case 0:
		return "\tif " + h.word() + " == nil {"
	case 1:
		return "\treturn " + h.word() + "(" + strconv.Itoa(h.r.IntN(1000)) + ")"
	case 2:
		return "\t" + h.word() + "s = append(" + h.word() + "s, " + h.word() + ")"
	case 3:
		return "\t// " + h.word() + " the " + h.word()
	case 4:
		return "}"
	}
	return "\t" + h.word() + " := " + h.word() + "." + title(h.word()) + "(" + h.word() + ")"
}

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

func (h *history) content(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = h.line()
	}
	return lines
}

// edit returns lines with a few lines replaced, inserted or removed.
func (h *history) edit(old []string) []string {
	lines := slices.Clone(old)
	for k := 1 + h.r.IntN(2); k > 0; k-- {
		i := h.r.IntN(len(lines) + 1)
		switch x := h.r.IntN(10); {
		case x < 5 && i < len(lines):
			lines[i] = h.line()
		case x < 8 || len(lines) < 12:
			lines = slices.Insert(lines, i, h.content(1+h.r.IntN(3))...)
		default:
			if i >= len(lines) {
				i = len(lines) - 1
			}
			lines = slices.Delete(lines, i, i+1)
		}
	}
	if len(lines) > 36 {
		lines = lines[:24]
	}
	return lines
}

// writeBlob stores lines as a blob and returns it with its mark.
func (h *history) writeBlob(lines []string) *blob {
	h.mark++
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	fmt.Fprintf(h.w, "blob\nmark :%d\ndata %d\n", h.mark, n)
	for _, l := range lines {
		h.w.WriteString(l)
		h.w.WriteByte('\n')
	}
	h.w.WriteByte('\n')
	return &blob{mark: h.mark, lines: lines}
}

func (h *history) newPath() string {
	h.newFile++
	d := dirs[h.r.IntN(len(dirs))]
	ext := ".go"
	switch {
	case strings.HasPrefix(d, "web/"):
		ext = ".ts"
	case strings.HasPrefix(d, "docs"):
		ext = ".md"
	case d == "scripts":
		ext = ".sh"
	case d == "config" || d == "deploy":
		ext = ".yaml"
	}
	return fmt.Sprintf("%s/%s_%s_%d%s", d, h.word(), h.word(), h.newFile, ext)
}

// pick chooses one of main's paths, hot ones far more often, never one of
// avoid.
func (h *history) pick(avoid map[string]bool) string {
	for {
		p := h.paths[int(float64(len(h.paths))*math.Pow(h.r.Float64(), 2.5))]
		if !avoid[p] {
			return p
		}
	}
}

func (h *history) setMain(p string, b *blob) {
	if b == nil {
		if i, ok := h.index[p]; ok {
			last := h.paths[len(h.paths)-1]
			h.paths[i], h.index[last] = last, i
			h.paths = h.paths[:len(h.paths)-1]
			delete(h.index, p)
			delete(h.files, p)
		}
		return
	}
	if _, ok := h.index[p]; !ok {
		h.index[p] = len(h.paths)
		h.paths = append(h.paths, p)
	}
	h.files[p] = *b
}

func (h *history) subject() string {
	return fmt.Sprintf("%s %s %s in the %s %s", verbs[h.r.IntN(len(verbs))], h.word(), h.word(), h.word(), h.word())
}

// commit writes a commit on ref; from and merge are marks (0: none).
func (h *history) commit(ref string, from, merge int, msg string, changes []change) int {
	if h.r.IntN(30) != 0 { // now and then two commits share a second, as after a rebase
		h.when += 20 + int64(h.r.IntN(1200))
	}
	h.mark++
	h.commits++
	id := who[h.r.IntN(len(who))]
	fmt.Fprintf(h.w, "commit %s\nmark :%d\nauthor %s %d +0000\ncommitter %s %d +0000\ndata %d\n%s\n", ref, h.mark, id, h.when, id, h.when, len(msg), msg)
	if from > 0 {
		fmt.Fprintf(h.w, "from :%d\n", from)
	}
	if merge > 0 {
		fmt.Fprintf(h.w, "merge :%d\n", merge)
	}
	for _, c := range changes {
		if c.b == nil {
			fmt.Fprintf(h.w, "D %s\n", c.path)
		} else {
			fmt.Fprintf(h.w, "M 100644 :%d %s\n", c.b.mark, c.path)
		}
	}
	h.w.WriteByte('\n')
	return h.mark
}

// changes makes the edits of one commit: base gives a path's current
// content (nil: not there), avoid the paths not to touch.
func (h *history) changes(base func(string) *blob, avoid map[string]bool, deletes bool) []change {
	var out []change
	seen := map[string]bool{}
	n := 1
	for h.r.IntN(100) < 30 && n < 5 {
		n++
	}
	for range n {
		p := h.pick(avoid)
		if seen[p] {
			continue
		}
		seen[p] = true
		cur := base(p)
		if cur == nil {
			continue
		}
		if deletes && h.r.IntN(700) == 0 && len(h.paths) > 150 {
			out = append(out, change{p, nil})
			continue
		}
		out = append(out, change{p, h.writeBlob(h.edit(cur.lines))})
	}
	if h.r.IntN(250) == 0 {
		p := h.newPath()
		out = append(out, change{p, h.writeBlob(h.content(6 + h.r.IntN(20)))})
	}
	return out
}

func (h *history) mainBase(p string) *blob {
	if b, ok := h.files[p]; ok {
		return &b
	}
	return nil
}

// commitMain commits on main directly.
func (h *history) commitMain(avoid map[string]bool) {
	ch := h.changes(h.mainBase, avoid, true)
	h.main = h.commit("refs/heads/"+mainBranch, 0, 0, h.subject(), ch)
	for _, c := range ch {
		h.setMain(c.path, c.b)
	}
}

// commitTopic commits on a feature branch.
func (h *history) commitTopic(t *topic, avoid map[string]bool) {
	base := func(p string) *blob {
		if b, ok := t.over[p]; ok {
			return b
		}
		return h.mainBase(p)
	}
	ch := h.changes(base, avoid, t.ref != "refs/heads/"+mergeBranch)
	from := 0
	if t.tip == 0 {
		from = t.fork
	}
	msg := h.subject()
	if h.r.IntN(4) == 0 {
		msg += "\n\n" + strings.Join(h.content(2+h.r.IntN(4)), "\n")
	}
	t.tip = h.commit(t.ref, from, 0, msg, ch)
	for _, c := range ch {
		if _, ok := t.over[c.path]; !ok {
			t.order = append(t.order, c.path)
		}
		t.over[c.path] = c.b
	}
	t.left--
}

// mergeTopic merges a feature branch into main; where both changed a file
// the branch's version wins, as a resolved conflict would.
func (h *history) mergeTopic(t *topic) {
	var ch []change
	for _, p := range t.order {
		b := t.over[p]
		if b == nil {
			if _, ok := h.files[p]; !ok {
				continue
			}
		}
		ch = append(ch, change{p, b})
	}
	msg := fmt.Sprintf("Merge branch '%s' into %s", t.name, mainBranch)
	h.main = h.commit("refs/heads/"+mainBranch, 0, t.tip, msg, ch)
	for _, c := range ch {
		h.setMain(c.path, c.b)
	}
}

// generate writes the whole stream for a repository of about n commits.
func (h *history) generate(n int) error {
	// the initial import
	nFiles := 220 + h.r.IntN(60)
	var ch []change
	for range nFiles {
		p := h.newPath()
		ch = append(ch, change{p, h.writeBlob(h.content(6 + h.r.IntN(24)))})
	}
	h.main = h.commit("refs/heads/"+mainBranch, 0, 0, "Initial import", ch)
	for _, c := range ch {
		h.setMain(c.path, c.b)
	}
	h.r.Shuffle(len(h.paths), func(i, j int) {
		h.paths[i], h.paths[j] = h.paths[j], h.paths[i]
		h.index[h.paths[i]], h.index[h.paths[j]] = i, j
	})

	reserve := 2*branchLen + 2 + 5
	slots := make([]*topic, 3)
	topics := 0
	for h.commits < n-reserve {
		if s := slices.Index(slots, nil); s >= 0 && h.r.IntN(100) < 14 {
			topics++
			slots[s] = &topic{ref: fmt.Sprintf("refs/heads/wip/%d", s), fork: h.main, left: 1 + h.r.IntN(8),
				name: fmt.Sprintf("feature/%s-%s-%d", h.word(), h.word(), topics), over: map[string]*blob{}}
		}
		var ready, active []int
		for i, t := range slots {
			switch {
			case t == nil:
			case t.left == 0:
				ready = append(ready, i)
			default:
				active = append(active, i)
			}
		}
		switch x := h.r.IntN(100); {
		case len(ready) > 0 && x < 50:
			i := ready[h.r.IntN(len(ready))]
			h.mergeTopic(slots[i])
			slots[i] = nil
		case len(active) > 0 && x < 85:
			h.commitTopic(slots[active[h.r.IntN(len(active))]], nil)
		default:
			h.commitMain(nil)
		}
	}
	for i, t := range slots { // merge what is still open
		if t != nil && t.tip != 0 {
			h.mergeTopic(t)
		}
		slots[i] = nil
	}

	// the benchmark's branches: feature/merge-work edits files main leaves
	// alone from its fork on (so it merges cleanly, three-way), and
	// feature/session-work forks two commits later
	mergeFork := h.main
	avoid := map[string]bool{}
	for len(avoid) < 12 {
		avoid[h.pick(nil)] = true
	}
	for range 2 {
		h.commitMain(avoid)
	}
	sess := &topic{ref: "refs/heads/" + sessionBranch, fork: h.main, left: branchLen, name: sessionBranch, over: map[string]*blob{}}
	for range branchLen {
		h.commitTopic(sess, nil)
	}
	mt := &topic{ref: "refs/heads/" + mergeBranch, fork: mergeFork, left: branchLen, name: mergeBranch, over: map[string]*blob{}}
	notMerge := map[string]bool{}
	for _, p := range h.paths {
		notMerge[p] = !avoid[p]
	}
	for range branchLen {
		h.commitTopic(mt, notMerge)
	}
	for range 5 {
		h.commitMain(avoid)
	}
	h.w.WriteString("done\n")
	return h.w.Flush()
}

// gitEnv is the environment of every process the benchmark runs: no
// system or global git configuration, a fixed identity, no baton binding.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "BATON_") || strings.HasPrefix(k, "GIT_") || k == "AGENT_STATE_DIR" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=gitbench", "GIT_AUTHOR_EMAIL=gitbench@example.test",
		"GIT_COMMITTER_NAME=gitbench", "GIT_COMMITTER_EMAIL=gitbench@example.test")
}

// git runs git in dir and returns its trimmed output.
func git(dir string, args ...string) (string, error) {
	c := exec.Command("git", args...)
	c.Dir = dir
	c.Env = gitEnv()
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		return "", fmt.Errorf("git %s (in %s): %v: %s", strings.Join(args, " "), dir, err, bytes.TrimSpace(errb.Bytes()))
	}
	return strings.TrimSpace(out.String()), nil
}

// generateRepo makes the repository name of about n commits under root:
// root/name/main (main checked out) and root/name/session (a linked
// worktree on the session branch).
func generateRepo(root, name string, n int, seed uint64, commitGraph bool) (*repoInfo, error) {
	t0 := time.Now()
	base := filepath.Join(root, name)
	info := &repoInfo{Name: name, Main: filepath.Join(base, "main"), Session: filepath.Join(base, "session"), CommitGraph: commitGraph}
	if err := os.MkdirAll(info.Main, 0o755); err != nil {
		return nil, err
	}
	if _, err := git(info.Main, "init", "-q", "-b", mainBranch); err != nil {
		return nil, err
	}
	for _, kv := range [][2]string{{"gc.auto", "0"}, {"maintenance.auto", "false"}, {"user.name", "gitbench"}, {"user.email", "gitbench@example.test"}} {
		if _, err := git(info.Main, "config", kv[0], kv[1]); err != nil {
			return nil, err
		}
	}
	c := exec.Command("git", "fast-import", "--quiet", "--done")
	c.Dir = info.Main
	// glibc's malloc would map and unmap zlib's state for every object
	c.Env = append(gitEnv(), "GLIBC_TUNABLES=glibc.malloc.mmap_threshold=8388608:glibc.malloc.trim_threshold=67108864")
	var errb bytes.Buffer
	c.Stderr = &errb
	in, err := c.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := c.Start(); err != nil {
		return nil, err
	}
	h := newHistory(in, seed)
	genErr := h.generate(n)
	in.Close()
	if err := c.Wait(); err != nil {
		return nil, fmt.Errorf("git fast-import: %v: %s", err, bytes.TrimSpace(errb.Bytes()))
	}
	if genErr != nil {
		return nil, fmt.Errorf("writing the fast-import stream: %w", genErr)
	}
	info.Commits = h.commits
	steps := [][]string{
		{"for-each-ref", "--format=delete %(refname)", "refs/heads/wip"},
		{"reset", "-q", "--hard"},
		{"worktree", "add", "-q", info.Session, sessionBranch},
	}
	for _, args := range steps {
		out, err := git(info.Main, args...)
		if err != nil {
			return nil, err
		}
		if args[0] == "for-each-ref" && out != "" {
			c := exec.Command("git", "update-ref", "--stdin")
			c.Dir, c.Env, c.Stdin = info.Main, gitEnv(), strings.NewReader(out+"\n")
			if b, err := c.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("git update-ref --stdin: %v: %s", err, b)
			}
		}
	}
	if commitGraph {
		if _, err := git(info.Main, "commit-graph", "write", "--reachable"); err != nil {
			return nil, err
		}
	}
	revs := []struct {
		dst *string
		rev string
	}{{&info.MainHead, mainBranch}, {&info.SessionHead, sessionBranch}, {&info.SessionBase, fmt.Sprintf("%s~%d", sessionBranch, sessionBack)},
		{&info.FixCommit, sessionBranch + "~3"}, {&info.MergeHead, mergeBranch}}
	for _, r := range revs {
		if *r.dst, err = git(info.Main, "rev-parse", "--verify", r.rev+"^{commit}"); err != nil {
			return nil, err
		}
	}
	if info.ForkPoint, err = git(info.Main, "merge-base", mainBranch, sessionBranch); err != nil {
		return nil, err
	}
	if out, err := git(info.Main, "ls-files"); err == nil {
		info.Files = strings.Count(out, "\n") + 1
	}
	if out, err := git(info.Main, "count-objects", "-v"); err == nil {
		for _, l := range strings.Split(out, "\n") {
			k, v, _ := strings.Cut(l, ": ")
			switch k {
			case "in-pack":
				info.Objects, _ = strconv.Atoi(v)
			case "size-pack":
				kb, _ := strconv.ParseInt(v, 10, 64)
				info.PackBytes = kb << 10
			}
		}
	}
	info.GenMillis = time.Since(t0).Milliseconds()
	return info, nil
}

// ---- baton's state in a generated repository

// setupState gives the repository baton state: a small generated history
// of sessions, reviews and features, `baton init`, a PASS review of the
// merge branch and a REQUEST_CHANGES review of the session branch, then
// keeps a copy of the state files to restore between runs.
func setupState(r *runner, info *repoInfo, seed uint64) error {
	st, err := gen.Write(info.Main, gen.Small, seed)
	if err != nil {
		return err
	}
	if len(st.Pending) < 2 {
		return fmt.Errorf("generated state has %d pending features, want 2", len(st.Pending))
	}
	info.FeatureMerge, info.FeatureReview = st.Pending[0], st.Pending[1]
	if _, err := r.batonOut(info, info.Main, nil, "init"); err != nil {
		return err
	}
	var rv struct {
		ReviewID int `json:"review_id"`
	}
	out, err := r.batonOut(info, info.Main, []string{"BATON_ROLE=REVIEW"}, "--json", "reviews", "add-review", "-a", "REVIEW",
		"--feature-id", info.FeatureMerge, "-b", mergeBranch, "-v", "PASS", "-s", "Complete, tested and documented.")
	if err != nil {
		return err
	}
	if err := json.Unmarshal(out, &rv); err != nil || rv.ReviewID == 0 {
		return fmt.Errorf("reviews add-review --json: no review_id in %q", out)
	}
	info.MergeReview = rv.ReviewID
	// The session branch's review saw it before the fix's commit (a fix is
	// a commit after the one the review saw): the branch is moved back for
	// the review, then to its head again.
	if _, err := git(info.Main, "update-ref", "refs/heads/"+sessionBranch, info.FixCommit+"~1"); err != nil {
		return err
	}
	out, err = r.batonOut(info, info.Main, []string{"BATON_ROLE=REVIEW"}, append([]string{"--json"}, addReviewArgs(info)...)...)
	if _, gerr := git(info.Main, "update-ref", "refs/heads/"+sessionBranch, info.SessionHead); err == nil {
		err = gerr
	}
	if err != nil {
		return err
	}
	rv.ReviewID = 0
	if err := json.Unmarshal(out, &rv); err != nil || rv.ReviewID == 0 {
		return fmt.Errorf("reviews add-review --json: no review_id in %q", out)
	}
	info.ChangesReview = rv.ReviewID
	info.Snapshot = filepath.Join(filepath.Dir(info.Main), "state-snapshot")
	if err := copyState(info.Main, info.Snapshot); err != nil {
		return err
	}
	return copyEntries(stateHome(info), info.Snapshot+"-home", stateHomeEntries)
}

// stateHome is the XDG_STATE_HOME (and HOME) baton runs with, beside the
// repository:
// the log's anchors outside the project are part of the state a restore
// puts back (else the anchors of the undone writes would be ahead of the
// log put back, and baton rightly refuses a log whose entries are gone).
func stateHome(info *repoInfo) string { return filepath.Join(filepath.Dir(info.Main), "state-home") }

// stateHomeEntries are where baton writes anchors under the state home,
// which is also HOME (git's own configuration is kept out by gitEnv).
var stateHomeEntries = []string{"baton", ".local"}

// stateEntries are baton's files in the state directory.
var stateEntries = []string{"progress.json", "reviews.json", "feature_list.json", ".baton"}

// copyState copies baton's state files from one directory to another,
// replacing what is there.
func copyState(from, to string) error { return copyEntries(from, to, stateEntries) }

// copyEntries copies the named files and directories from one directory to
// another, replacing what is there.
func copyEntries(from, to string, entries []string) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(to, e)); err != nil {
			return err
		}
		src := filepath.Join(from, e)
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(from, p)
			dst := filepath.Join(to, rel)
			if d.IsDir() {
				return os.MkdirAll(dst, 0o755)
			}
			if !d.Type().IsRegular() {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, b, 0o644)
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// restore undoes every write: main and the merge branch back where they
// were generated, main's checkout clean, the state files as after setup.
func restore(info *repoInfo, state bool) error {
	if _, err := git(info.Main, "reset", "-q", "--hard", info.MainHead); err != nil {
		return err
	}
	if _, err := git(info.Main, "update-ref", "refs/heads/"+mergeBranch, info.MergeHead); err != nil {
		return err
	}
	if state {
		if err := copyState(info.Snapshot, info.Main); err != nil {
			return err
		}
		return copyEntries(info.Snapshot+"-home", stateHome(info), stateHomeEntries)
	}
	return nil
}

// prepare generates (or, with -repos, reuses) the repositories.
func prepare(o options, r *runner, root string) ([]*repoInfo, error) {
	var out []*repoInfo
	for _, s := range []struct {
		name string
		n    int
	}{{"small", o.small}, {"large", o.large}} {
		if s.n == 0 {
			continue
		}
		name := fmt.Sprintf("%s-%d-s%d", s.name, s.n, o.seed)
		if !o.commitGraph {
			name += "-nocg"
		}
		infoPath := filepath.Join(root, name, infoName)
		if b, err := os.ReadFile(infoPath); err == nil && o.repos != "" {
			var info repoInfo
			if err := json.Unmarshal(b, &info); err == nil {
				info.Name = s.name
				if err := restore(&info, true); err == nil {
					out = append(out, &info)
					continue
				}
			}
		}
		if err := os.RemoveAll(filepath.Join(root, name)); err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "gitbench: generating the %s repository (%d commits)...\n", s.name, s.n)
		info, err := generateRepo(root, name, s.n, o.seed, o.commitGraph)
		if err != nil {
			return nil, fmt.Errorf("%s repository: %w", s.name, err)
		}
		if err := setupState(r, info, o.seed); err != nil {
			return nil, fmt.Errorf("%s repository: baton state: %w", s.name, err)
		}
		b, _ := json.MarshalIndent(info, "", "  ")
		if err := os.WriteFile(infoPath, b, 0o644); err != nil {
			return nil, err
		}
		info.Name = s.name
		out = append(out, info)
	}
	return out, nil
}

// ---- the operations

// runOp runs one gitops operation on a freshly opened repository, as a
// baton command does once per process.
func runOp(op, dir string, args []string) (string, error) {
	if op == "ancestor-yes" || op == "ancestor-no" {
		op = "ancestor"
	}
	need := map[string]int{"start": 0, "open": 0, "resolve": 1, "range": 2, "ancestor": 2, "merge-base": 2, "merge": 2}
	n, ok := need[op]
	if !ok {
		return "", fmt.Errorf("unknown operation %q", op)
	}
	if len(args) != n {
		return "", fmt.Errorf("%s takes %d arguments, got %d", op, n, len(args))
	}
	if op == "start" {
		return "", nil
	}
	r, err := gitops.Open(dir)
	if err != nil {
		return "", err
	}
	switch op {
	case "open":
		return r.Head()
	case "resolve":
		return gitops.ResolveCommit(r, args[0])
	case "range":
		cs, err := r.Range(args[0], args[1])
		return strconv.Itoa(len(cs)), err
	case "ancestor":
		ok, err := r.IsAncestor(args[0], args[1])
		return strconv.FormatBool(ok), err
	case "merge-base":
		return r.MergeBase(args[0], args[1])
	}
	res, err := r.Merge(gitops.MergeOptions{Branch: args[0], Into: args[1], Message: "Merge branch '" + args[0] + "'\n",
		Signature: gitops.Signature{Name: "gitbench", Email: "gitbench@example.test", When: time.Now()}})
	return res.Commit, err
}

// operation is one git operation baton runs, with the git command doing
// the same and what both must answer.
type operation struct {
	name string
	what string // what baton does it for
	dir  func(*repoInfo) string
	args func(*repoInfo) []string // gitops arguments
	git  func(*repoInfo) []string // the git command's arguments
	// want is the answer both give (checked once, before timing), from the
	// gitops result and from git's output and exit code; "" skips the check
	want    func(*repoInfo) string
	gitExit int  // the exit status git answers with (1: merge-base --is-ancestor's "no")
	writes  bool // undo with restore after each run
	// floor is the process start alone (no repository opened): not an
	// operation, so no in-process time and no target
	floor bool
}

func inMain(i *repoInfo) string    { return i.Main }
func inSession(i *repoInfo) string { return i.Session }

var operations = []operation{
	{name: "start", what: "process start and exit", dir: inSession, floor: true,
		args: func(*repoInfo) []string { return nil },
		git:  func(*repoInfo) []string { return []string{"--version"} }},
	{name: "open", what: "every command: open, read HEAD", dir: inSession,
		args: func(*repoInfo) []string { return nil },
		git:  func(*repoInfo) []string { return []string{"rev-parse", "HEAD"} },
		want: func(i *repoInfo) string { return i.SessionHead }},
	{name: "resolve", what: "recorded short hashes to commits", dir: inSession,
		args: func(i *repoInfo) []string { return []string{gitops.Short(i.SessionBase)} },
		git: func(i *repoInfo) []string {
			return []string{"rev-parse", "--verify", "--quiet", gitops.Short(i.SessionBase) + "^{commit}"}
		},
		want: func(i *repoInfo) string { return i.SessionBase }},
	{name: "range", what: "session end, add-session: base..HEAD", dir: inSession,
		args: func(i *repoInfo) []string { return []string{i.SessionBase, i.SessionHead} },
		git: func(i *repoInfo) []string {
			return []string{"rev-list", "--reverse", "--parents", "--format=%s", i.SessionBase + ".." + i.SessionHead}
		},
		want: func(*repoInfo) string { return strconv.Itoa(sessionBack) }},
	{name: "ancestor-yes", what: "add-fix: the commit is on the branch", dir: inSession,
		args: func(i *repoInfo) []string { return []string{i.SessionBase, i.SessionHead} },
		git: func(i *repoInfo) []string {
			return []string{"merge-base", "--is-ancestor", i.SessionBase, i.SessionHead}
		},
		want: func(*repoInfo) string { return "true" }},
	{name: "ancestor-no", what: "merge, add-fix: not on main", dir: inMain,
		args:    func(i *repoInfo) []string { return []string{i.MergeHead, i.MainHead} },
		git:     func(i *repoInfo) []string { return []string{"merge-base", "--is-ancestor", i.MergeHead, i.MainHead} },
		want:    func(*repoInfo) string { return "false" },
		gitExit: 1},
	{name: "merge-base", what: "add-review: main's merge base", dir: inMain,
		args: func(i *repoInfo) []string { return []string{i.MainHead, i.SessionHead} },
		git:  func(i *repoInfo) []string { return []string{"merge-base", i.MainHead, i.SessionHead} },
		want: func(i *repoInfo) string { return i.ForkPoint }},
	{name: "merge", what: "reviews merge: three-way, main's checkout updated", dir: inMain,
		args: func(*repoInfo) []string { return []string{mergeBranch, mainBranch} },
		git: func(*repoInfo) []string {
			return []string{"merge", "--no-ff", "-q", "-m", "Merge branch '" + mergeBranch + "'", mergeBranch}
		},
		writes: true},
}

// command is a baton command timed whole, with the operation whose git
// command it is compared with.
type command struct {
	label string
	op    string // the operation it runs ("" for the floor)
	dir   func(*repoInfo) string
	role  string
	args  func(*repoInfo) []string
	// restoreFirst resets the state files before the run (a command that
	// would be refused after a few runs); writes undoes git changes after
	writes, restoreFirst bool
}

const benchIssues = `{"critical":[],"major":[{"description":"Missing error handling for database connection failure in the health handler","location":"internal/api/health.go:15","suggestion":"Return 503 when the ping fails"}],"minor":[{"description":"Magic number for the timeout","location":"config/app.yaml:40","suggestion":"Move it to settings"}],"suggestions":[]}`

func addReviewArgs(i *repoInfo) []string {
	return []string{"reviews", "add-review", "-a", "REVIEW", "--feature-id", i.FeatureReview, "-b", sessionBranch,
		"-v", "REQUEST_CHANGES", "-s", "Functional, but error handling is missing on the database path.", "--issues", benchIssues}
}

var commands = []command{
	{label: "--version", dir: inSession, args: func(*repoInfo) []string { return []string{"--version"} }},
	{label: "get-status --field", dir: inSession, args: func(*repoInfo) []string {
		return []string{"progress", "get-status", "--field", "current_branch"}
	}},
	{label: "session start", op: "open", dir: inSession, args: func(*repoInfo) []string { return []string{"session", "start", "--agent", "IMPLEMENT"} }},
	{label: "session end", op: "range", dir: inSession, args: func(i *repoInfo) []string {
		return []string{"session", "end", "-o", "READY_FOR_REVIEW", "-s", "Implemented the handler with validation and tests", "--commit-from", gitops.Short(i.SessionBase)}
	}},
	{label: "progress add-session", op: "range", dir: inSession, role: "IMPLEMENT", args: func(i *repoInfo) []string {
		return []string{"progress", "add-session", "-a", "IMPLEMENT", "-o", "READY_FOR_REVIEW", "-s", "Implemented the handler with validation and tests",
			"--features", i.FeatureReview, "--commit-from", gitops.Short(i.SessionBase)}
	}},
	{label: "reviews add-review", op: "merge-base", dir: inMain, role: "REVIEW", args: addReviewArgs},
	{label: "reviews add-fix", op: "ancestor-no", dir: inSession, role: "FIX", restoreFirst: true, args: func(i *repoInfo) []string {
		fixed := fmt.Sprintf(`[{"issue_id":"R%d-M1","fix_description":"Return 503 when the ping fails","commit":"%s"}]`, i.ChangesReview, gitops.Short(i.FixCommit))
		return []string{"reviews", "add-fix", "-r", strconv.Itoa(i.ChangesReview), "--issues-fixed", fixed}
	}},
	{label: "reviews merge", op: "merge", dir: inMain, role: "REVIEW", writes: true, restoreFirst: true, args: func(i *repoInfo) []string {
		return []string{"reviews", "merge", "--review", strconv.Itoa(i.MergeReview)}
	}},
}

// ---- running

type runner struct {
	baton, self string
	keyDir      string // XDG_CONFIG_HOME holding the bench's person key
}

func newRunner(baton string) (*runner, error) {
	abs, err := filepath.Abs(baton)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil || fi.IsDir() {
		return nil, fmt.Errorf("%s: not a baton binary (build it with 'make build')", baton)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, errors.New("git is not installed")
	}
	// a person's key of the bench's own: its writes are a person's, and it
	// opens the sessions it times with the key
	cfg, err := gen.PersonKey(abs, os.Environ())
	if err != nil {
		return nil, err
	}
	return &runner{baton: abs, self: self, keyDir: cfg}, nil
}

// timed runs a process and returns its wall-clock time and output; exit
// status want is success.
func timed(c *exec.Cmd, want int) (time.Duration, []byte, error) {
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	start := time.Now()
	err := c.Run()
	d := time.Since(start)
	var ee *exec.ExitError
	if want != 0 && errors.As(err, &ee) && ee.ExitCode() == want {
		err = nil
	} else if err == nil && want != 0 {
		err = fmt.Errorf("exit status 0, want %d", want)
	}
	if err != nil {
		return d, nil, fmt.Errorf("%s (in %s): %v\n%s", strings.Join(c.Args, " "), c.Dir, err, bytes.TrimSpace(errb.Bytes()))
	}
	return d, out.Bytes(), nil
}

func (r *runner) batonCmd(info *repoInfo, dir string, env []string, args ...string) *exec.Cmd {
	var rest []string
	for _, kv := range env {
		if role, ok := strings.CutPrefix(kv, "BATON_ROLE="); ok {
			// the role's work, done by the person with their key
			args = append([]string{"--as", "HUMAN", "--reason", "bench: " + role}, args...)
			continue
		}
		rest = append(rest, kv)
	}
	if len(args) > 1 && args[0] == "session" && args[1] == "start" {
		args = append([]string{"--as", "HUMAN", "--reason", "bench"}, args...)
	}
	c := exec.Command(r.baton, args...)
	c.Dir = dir
	c.Env = append(append(gitEnv(), "BATON_STATE_DIR="+info.Main, "XDG_CONFIG_HOME="+r.keyDir, "XDG_STATE_HOME="+stateHome(info), "HOME="+stateHome(info)), rest...)
	return c
}

func (r *runner) batonOut(info *repoInfo, dir string, env []string, args ...string) ([]byte, error) {
	_, out, err := timed(r.batonCmd(info, dir, env, args...), 0)
	return out, err
}

// key names what one sample measures.
type key struct {
	repo  string
	kind  string // "git", "proc", "in", or "baton"
	label string // operation or command label
}

// job is one entry of a round.
type job struct {
	info *repoInfo
	run  func(rec func(key, time.Duration)) error
}

func (r *runner) jobs(infos []*repoInfo) []job {
	var out []job
	for _, info := range infos {
		info := info
		for _, op := range operations {
			op := op
			after := func() error {
				if op.writes {
					return restore(info, false)
				}
				return nil
			}
			out = append(out,
				job{info, func(rec func(key, time.Duration)) error {
					c := exec.Command("git", op.git(info)...)
					c.Dir, c.Env = op.dir(info), gitEnv()
					d, _, err := timed(c, op.gitExit)
					if err != nil {
						return err
					}
					rec(key{info.Name, "git", op.name}, d)
					return after()
				}},
				job{info, func(rec func(key, time.Duration)) error {
					c := exec.Command(r.self, append([]string{"-op", op.name, "-repo", op.dir(info), "--"}, op.args(info)...)...)
					c.Dir, c.Env = op.dir(info), gitEnv()
					d, _, err := timed(c, 0)
					if err != nil {
						return err
					}
					rec(key{info.Name, "proc", op.name}, d)
					return after()
				}},
			)
			if op.floor {
				continue
			}
			out = append(out,
				job{info, func(rec func(key, time.Duration)) error {
					start := time.Now()
					if _, err := runOp(op.name, op.dir(info), op.args(info)); err != nil {
						return fmt.Errorf("in-process %s on the %s repository: %w", op.name, info.Name, err)
					}
					rec(key{info.Name, "in", op.name}, time.Since(start))
					return after()
				}})
		}
		for _, c := range commands {
			c := c
			out = append(out, job{info, func(rec func(key, time.Duration)) error {
				if c.restoreFirst {
					if err := restore(info, true); err != nil {
						return err
					}
				}
				var env []string
				if c.role != "" {
					env = append(env, "BATON_ROLE="+c.role)
				}
				if c.label == "session end" { // its own session, started first
					// sessionBack commits ago: the branch is moved back for
					// the start, then to its head again
					if _, err := git(info.Main, "update-ref", "refs/heads/"+sessionBranch, info.SessionBase); err != nil {
						return err
					}
					d, out, err := timed(r.batonCmd(info, c.dir(info), nil, "session", "start", "--agent", "IMPLEMENT"), 0)
					if _, gerr := git(info.Main, "update-ref", "refs/heads/"+sessionBranch, info.SessionHead); err == nil {
						err = gerr
					}
					if err != nil {
						return err
					}
					_, id, ok := strings.Cut(string(out), "export BATON_SESSION=")
					if !ok {
						return fmt.Errorf("session start printed no BATON_SESSION: %q", out)
					}
					rec(key{info.Name, "baton", "session start"}, d)
					env = append(env, "BATON_SESSION="+strings.TrimSpace(id))
				} else if c.label == "session start" {
					return nil // timed with session end
				}
				d, _, err := timed(r.batonCmd(info, c.dir(info), env, c.args(info)...), 0)
				if err != nil {
					return err
				}
				rec(key{info.Name, "baton", c.label}, d)
				if c.writes {
					return restore(info, true)
				}
				return nil
			}})
		}
	}
	return out
}

// check compares each operation's answer in gitops with git's, once.
func (r *runner) check(infos []*repoInfo) []string {
	var bad []string
	for _, info := range infos {
		for _, op := range operations {
			if op.want == nil {
				continue
			}
			want := op.want(info)
			got, err := runOp(op.name, op.dir(info), op.args(info))
			if err != nil || got != want {
				bad = append(bad, fmt.Sprintf("%s repository: gitops %s = %q (%v), want %q (git)", info.Name, op.name, got, err, want))
			}
			c := exec.Command("git", op.git(info)...)
			c.Dir, c.Env = op.dir(info), gitEnv()
			_, out, err := timed(c, op.gitExit)
			gotGit := strings.TrimSpace(string(out))
			switch op.name {
			case "range": // rev-list --format prints "commit <hash> <parents>" before each subject
				n := 0
				for _, l := range strings.Split(gotGit, "\n") {
					if strings.HasPrefix(l, "commit ") {
						n++
					}
				}
				gotGit = strconv.Itoa(n)
			case "ancestor-yes", "ancestor-no":
				gotGit = strconv.FormatBool(op.gitExit == 0)
			}
			if err != nil || gotGit != want {
				bad = append(bad, fmt.Sprintf("%s repository: git %s = %q (%v), want %q", info.Name, op.name, gotGit, err, want))
			}
		}
	}
	return bad
}

func measure(r *runner, infos []*repoInfo, o options, progress io.Writer) (map[key][]time.Duration, error) {
	jobs := r.jobs(infos)
	rng := rand.New(rand.NewPCG(o.seed, 11))
	res := map[key][]time.Duration{}
	rounds := o.warmup + max(o.runs, o.runsLarge)
	for round := 0; round < rounds; round++ {
		rng.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
		for _, j := range jobs {
			limit := o.runs
			if j.info.Name == "large" {
				limit = o.runsLarge
			}
			if round >= o.warmup+limit {
				continue
			}
			err := j.run(func(k key, d time.Duration) {
				if round >= o.warmup {
					res[k] = append(res[k], d)
				}
			})
			if err != nil {
				return nil, err
			}
		}
		if progress != nil {
			fmt.Fprintf(progress, "\rround %d/%d", round+1, rounds)
		}
	}
	if progress != nil {
		fmt.Fprint(progress, "\r\033[K")
	}
	return res, nil
}

func bench(o options, stdout io.Writer) error {
	r, err := newRunner(o.baton)
	if err != nil {
		return err
	}
	defer os.RemoveAll(r.keyDir)
	root := o.repos
	if root == "" {
		tmp, err := os.MkdirTemp(o.dir, "baton-gitbench-")
		if err != nil {
			return err
		}
		if !o.keep {
			defer os.RemoveAll(tmp)
		}
		root = tmp
	}
	t0 := time.Now()
	infos, err := prepare(o, r, root)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "git operations and baton commands (%s): %d timed runs each (%d on the large repository) after %d warm-up rounds, shuffled round-robin\n",
		r.baton, o.runs, o.runsLarge, o.warmup)
	for _, i := range infos {
		graph := ""
		if i.CommitGraph {
			graph = ", commit-graph"
		}
		fmt.Fprintf(stdout, "  %-6s %s commits, %d files, %s objects in a %s pack%s (generated in %.1fs)\n", i.Name+":", thousands(i.Commits), i.Files,
			thousands(i.Objects), stat.Human(i.PackBytes), graph, float64(i.GenMillis)/1000)
	}
	fmt.Fprintf(stdout, "  repositories ready in %s under %s\n", time.Since(t0).Round(time.Millisecond), root)
	for _, b := range r.check(infos) {
		fmt.Fprintf(stdout, "  MISMATCH: %s\n", b)
	}
	load0 := stat.LoadAvg()
	res, err := measure(r, infos, o, stat.Terminal(os.Stderr))
	if err != nil {
		return err
	}
	report(stdout, infos, summarize(res))
	if load0 != "" {
		fmt.Fprintf(stdout, "\nload average before / after: %s / %s (on %d CPUs)\n", load0, stat.LoadAvg(), runtime.NumCPU())
	}
	if o.keep || o.repos != "" {
		fmt.Fprintf(stdout, "repositories kept in %s (gitops benchmarks on the large one: BATON_GITBENCH_REPO=%s go test -run='^$' -bench=GitOps ./gitops)\n",
			root, infos[len(infos)-1].Main)
	}
	return nil
}

// ---- statistics and the report

type stats struct {
	median, p90 time.Duration
	n           int
}

func summarize(res map[key][]time.Duration) map[key]stats {
	out := map[key]stats{}
	for k, ds := range res {
		out[k] = stats{median: stat.Quantile(ds, 0.5), p90: stat.Quantile(ds, 0.9), n: len(ds)}
	}
	return out
}

func report(w io.Writer, infos []*repoInfo, s map[key]stats) {
	med := func(repo, kind, label string) time.Duration { return s[key{repo, kind, label}].median }
	fmt.Fprintf(w, "\n(1) git operations, median ms: git = the git command; proc = a Go process that opens the repository with gitops and runs the\n")
	fmt.Fprintf(w, "    operation; in = gitops.Open and the operation inside a running process (what a baton command pays for it)\n")
	for _, op := range operations {
		fmt.Fprintf(w, "      %-13s %s\n", op.name, op.what)
	}
	for _, i := range infos {
		fmt.Fprintf(w, "\n%-6s %-13s %8s %8s %8s %9s %9s   %s\n", i.Name, "operation", "git", "proc", "in", "proc/git", "in/git", "git command")
		for _, op := range operations {
			g, p, in := med(i.Name, "git", op.name), med(i.Name, "proc", op.name), med(i.Name, "in", op.name)
			if op.floor {
				fmt.Fprintf(w, "%-6s %-13s %8s %8s %8s %8.2f× %9s   git %s (both: process start only)\n", "", op.name, stat.Ms(g), stat.Ms(p), "-", stat.Ratio(p, g), "-", shortArgs(op.git(i)))
				continue
			}
			fmt.Fprintf(w, "%-6s %-13s %8s %8s %8s %8.2f× %8.2f×   git %s\n", "", op.name, stat.Ms(g), stat.Ms(p), stat.Ms(in), stat.Ratio(p, g), stat.Ratio(in, g), shortArgs(op.git(i)))
		}
	}
	fmt.Fprintf(w, "\n(2) baton commands, wall ms (process start to exit), vs the git command of the operation they run\n")
	fmt.Fprintf(w, "\n%-6s %-22s %-13s %8s %8s %8s %9s\n", "", "command", "operation", "median", "p90", "git", "vs git")
	for _, i := range infos {
		for _, c := range commands {
			st := s[key{i.Name, "baton", c.label}]
			g := med(i.Name, "git", c.op)
			vs := "-"
			if c.op != "" {
				vs = fmt.Sprintf("%8.2f×", stat.Ratio(st.median, g))
			}
			fmt.Fprintf(w, "%-6s %-22s %-13s %8s %8s %8s %9s\n", i.Name, c.label, orDash(c.op), stat.Ms(st.median), stat.Ms(st.p90), stat.Ms(g), vs)
		}
	}
	fmt.Fprintf(w, "(every command also takes baton's state lock and writes its state files and audit log; --version is the process floor)\n")

	fmt.Fprintf(w, "\ntargets\n")
	for _, i := range infos {
		if i.Name != "small" {
			continue
		}
		fmt.Fprintf(w, "(a) small repository, each operation within %.0f× of git (proc/git, like for like; in/git for the part inside baton):\n", maxVsGit)
		fs, fg := med(i.Name, "proc", "start"), med(i.Name, "git", "start")
		fmt.Fprintf(w, "    (process start alone is %.2f×: %s ms for a Go process linking gitops, %s ms for git)\n", stat.Ratio(fs, fg), stat.Ms(fs), stat.Ms(fg))
		for _, op := range operations {
			if op.floor {
				continue
			}
			g := med(i.Name, "git", op.name)
			pr, in := stat.Ratio(med(i.Name, "proc", op.name), g), stat.Ratio(med(i.Name, "in", op.name), g)
			fmt.Fprintf(w, "    %-13s proc %5.2f× %-6s  in %5.2f×\n", op.name, pr, stat.Verdict(pr <= maxVsGit), in)
		}
	}
	for _, i := range infos {
		if i.Name != "large" {
			continue
		}
		fmt.Fprintf(w, "(b) large repository, under %d ms (median):\n", largeBudget.Milliseconds())
		for _, c := range commands {
			st := s[key{i.Name, "baton", c.label}]
			fmt.Fprintf(w, "    %-22s median %8s ms, p90 %8s ms: %s\n", c.label, stat.Ms(st.median), stat.Ms(st.p90), stat.Verdict(st.median < largeBudget))
		}
	}
}

func shortArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		for _, f := range strings.FieldsFunc(a, func(r rune) bool { return r == '.' || r == '^' }) {
			if len(f) == 40 {
				a = strings.ReplaceAll(a, f, f[:7])
			}
		}
		if strings.ContainsAny(a, " '") {
			a = strconv.Quote(a)
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
