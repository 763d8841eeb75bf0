package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/tidwall/gjson"
)

// batonBin is the binary built once by TestMain.
var batonBin string

// configDir holds the person's key every test uses (XDG_CONFIG_HOME).
var configDir string

const testKey = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "baton-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: finding the module root:", err)
		return 1
	}
	configDir = filepath.Join(tmp, "config")
	if err := os.MkdirAll(filepath.Join(configDir, "baton"), 0o700); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	if err := os.WriteFile(filepath.Join(configDir, "baton", "key"), []byte(testKey+"\n"), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	batonBin = filepath.Join(tmp, "baton")
	build := exec.Command("go", "build", "-o", batonBin, "github.com/baton-cli/baton/cmd/baton")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build -o %s baton/cmd/baton: %v\n%s", batonBin, err, out)
		return 1
	}
	return m.Run()
}

// moduleRoot is the directory of baton's go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside a module")
	}
	return filepath.Dir(gomod), nil
}

// lockTimeout is generous so that a slow, loaded machine waits instead of
// failing a writer with exit 5.
const lockTimeout = "60s"

// batonEnv is the environment of every baton process: the caller's, without
// any baton setting that could point elsewhere, plus the state directory.
func batonEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "BATON_") || strings.HasPrefix(kv, "AGENT_STATE_DIR=") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			continue
		}
		env = append(env, kv)
	}
	// baton run confines its agents by default where it can; these tests
	// are about its processes, and say --sandbox where they mean it
	return append(env, "BATON_STATE_DIR="+dir, "BATON_LOCK_TIMEOUT="+lockTimeout, "XDG_CONFIG_HOME="+configDir, "BATON_SANDBOX_UNAVAILABLE=1")
}

// batonCmd prepares a baton process on the state directory dir (also its
// working directory), acting as the role the command needs.
func batonCmd(dir string, args ...string) *exec.Cmd {
	c := exec.Command(batonBin, args...)
	c.Dir = dir
	c.Env = batonEnv(dir)
	if role := roleFor(args); role != "" {
		// a write by the person (their key is in configDir): these tests
		// are about concurrency and crashes, sessions_test about binding
		c.Args = append([]string{batonBin, "--as", "HUMAN", "--reason", "e2e " + role}, args...)
	}
	return c
}

// roleFor is the role an agent running args has, following DESIGN.md's
// responsibility matrix: a session or review is recorded by the role it
// names (-a), fixes by FIX, passing by REVIEW, failing by IMPLEMENT, the
// feature list by INITIALIZER. Reads need no role.
func roleFor(args []string) string {
	var words []string
	agent := ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-a" || a == "--agent-type":
			if i+1 < len(args) {
				agent = args[i+1]
			}
			i++
		case !strings.HasPrefix(a, "-") && len(words) < 2:
			words = append(words, a)
		}
	}
	switch strings.Join(words, " ") {
	case "progress add-session", "reviews add-review":
		return agent
	case "reviews add-fix":
		return "FIX"
	case "features pass", "features pass-batch", "reviews merge", "reviews reject":
		return "REVIEW"
	case "features fail":
		return "IMPLEMENT"
	case "features append":
		return "INITIALIZER"
	}
	return ""
}

// result is how a baton process ended.
type result struct {
	args           []string
	code           int // exit code; -1 when killed by a signal
	signal         syscall.Signal
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("baton %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// proc is a started baton process whose output is captured.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
}

func startBaton(t testing.TB, dir string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: batonCmd(dir, args...)}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting baton %s: %v", strings.Join(args, " "), err)
	}
	return p
}

// wait reaps the process and reports how it ended.
func (p *proc) wait(t testing.TB) result {
	t.Helper()
	err := p.cmd.Wait()
	r := result{args: p.cmd.Args[1:], stdout: p.stdout.String(), stderr: p.stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.signal = ws.Signal()
		}
	default:
		t.Fatalf("waiting for baton %s: %v", strings.Join(r.args, " "), err)
	}
	return r
}

// baton runs one command to its end.
func baton(t testing.TB, dir string, args ...string) result {
	t.Helper()
	return startBaton(t, dir, args...).wait(t)
}

// mustBaton runs one command that must succeed and returns its stdout.
func mustBaton(t testing.TB, dir string, args ...string) string {
	t.Helper()
	r := baton(t, dir, args...)
	if r.code != 0 {
		t.Fatalf("%v", r)
	}
	return r.stdout
}

// newProject is a fresh state directory after `baton init`.
func newProject(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	mustBaton(t, dir, "init", "--name", "e2e")
	return dir
}

// featureID is the id of the n-th feature (1-based).
func featureID(n int) string { return fmt.Sprintf("F%03d", n) }

// appendFeatures adds features F001..F<n> through `features append`, each
// with a description of descLen bytes (to make the file larger).
func appendFeatures(t testing.TB, dir string, n, descLen int) {
	t.Helper()
	type entry struct {
		ID          string   `json:"id"`
		Name        string   `json:"name"`
		Category    string   `json:"category"`
		Description string   `json:"description"`
		Steps       []string `json:"steps"`
	}
	entries := make([]entry, n)
	for i := range entries {
		desc := fmt.Sprintf("Feature %d. ", i+1)
		for len(desc) < descLen {
			desc += "The system shall do one more thing, precisely specified. "
		}
		entries[i] = entry{ID: featureID(i + 1), Name: fmt.Sprintf("feature %d", i+1), Category: "functional",
			Description: desc, Steps: []string{"step one", "step two"}}
	}
	data, err := json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "entries.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	mustBaton(t, dir, "features", "append", "-e", path, "-s", "spec.md")
}

// ---- reading the state files as the test sees them

type featureRec struct {
	ID     string `json:"id"`
	Passes bool   `json:"passes"`
}

type featureFile struct {
	Features []featureRec `json:"features"`
}

type sessionRec struct {
	SessionID int    `json:"session_id"`
	AgentType string `json:"agent_type"`
	Summary   string `json:"summary"`
}

type statusRec struct {
	FeaturesCompleted int `json:"features_completed"`
	FeaturesPassing   int `json:"features_passing"`
}

type progressFile struct {
	Project struct {
		TotalFeatures int `json:"total_features"`
	} `json:"project"`
	Status   statusRec    `json:"status"`
	Sessions []sessionRec `json:"sessions"`
}

type issueRec struct {
	ID string `json:"id"`
}

type reviewRec struct {
	ReviewID  int     `json:"review_id"`
	FeatureID *string `json:"feature_id"`
	Verdict   string  `json:"verdict"`
	Summary   string  `json:"summary"`
	Issues    struct {
		Critical    []issueRec `json:"critical"`
		Major       []issueRec `json:"major"`
		Minor       []issueRec `json:"minor"`
		Suggestions []issueRec `json:"suggestions"`
	} `json:"issues"`
}

type fixRec struct {
	FixID     int     `json:"fix_id"`
	ReviewID  int     `json:"review_id"`
	FeatureID *string `json:"feature_id"`
}

type reviewsFile struct {
	Reviews []reviewRec `json:"reviews"`
	Fixes   []fixRec    `json:"fixes"`
}

const (
	featuresName = "feature_list.json"
	reviewsName  = "reviews.json"
	progressName = "progress.json"
)

// readState returns a state file's bytes, failing the test when it is
// missing.
func readState(t testing.TB, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return b
}

// decode parses a state file that must be valid JSON.
func decode[T any](t testing.TB, name string, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s is not valid JSON (%v):\n%s", name, err, head(b, 2000))
	}
	return v
}

// The crash test reads large files hundreds of times under -race, where
// encoding/json is slow; these read the same fields with gjson after a full
// validation.

func validState(t testing.TB, name string, b []byte) {
	t.Helper()
	if !gjson.ValidBytes(b) {
		t.Fatalf("%s is not valid JSON (%d bytes):\n%s", name, len(b), head(b, 2000))
	}
}

func parseFeatures(t testing.TB, b []byte) featureFile {
	t.Helper()
	validState(t, featuresName, b)
	var f featureFile
	gjson.GetBytes(b, "features").ForEach(func(_, v gjson.Result) bool {
		f.Features = append(f.Features, featureRec{ID: v.Get("id").String(), Passes: v.Get("passes").Bool()})
		return true
	})
	return f
}

func parseProgress(t testing.TB, b []byte) progressFile {
	t.Helper()
	validState(t, progressName, b)
	var p progressFile
	top := gjson.GetManyBytes(b, "project.total_features", "status.features_completed", "status.features_passing")
	p.Project.TotalFeatures = int(top[0].Int())
	p.Status.FeaturesCompleted = int(top[1].Int())
	p.Status.FeaturesPassing = int(top[2].Int())
	gjson.GetBytes(b, "sessions").ForEach(func(_, v gjson.Result) bool {
		p.Sessions = append(p.Sessions, sessionRec{SessionID: int(v.Get("session_id").Int()), AgentType: v.Get("agent_type").String(), Summary: v.Get("summary").String()})
		return true
	})
	return p
}

func head(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// passing is the set of features marked passing.
func (f featureFile) passing() map[string]bool {
	out := map[string]bool{}
	for _, it := range f.Features {
		if it.Passes {
			out[it.ID] = true
		}
	}
	return out
}

// completedFeatures is what features_completed counts: the features of the
// list that have a PASS review.
func completedFeatures(r reviewsFile, f featureFile) map[string]bool {
	have := map[string]bool{}
	for _, it := range f.Features {
		have[it.ID] = true
	}
	out := map[string]bool{}
	for _, rv := range r.Reviews {
		if rv.Verdict != "PASS" || rv.FeatureID == nil {
			continue
		}
		for _, id := range strings.Split(*rv.FeatureID, ",") {
			if id = strings.TrimSpace(id); have[id] {
				out[id] = true
			}
		}
	}
	return out
}

// checkCounters requires progress.json's computed counters to agree with
// the feature list and the reviews.
func checkCounters(t testing.TB, when string, p progressFile, f featureFile, r reviewsFile) {
	t.Helper()
	if got, want := p.Status.FeaturesPassing, len(f.passing()); got != want {
		t.Fatalf("%s: progress.json status.features_passing = %d, but feature_list.json has %d passing features (a torn transaction?)", when, got, want)
	}
	if got, want := p.Status.FeaturesCompleted, len(completedFeatures(r, f)); got != want {
		t.Fatalf("%s: progress.json status.features_completed = %d, but reviews.json has PASS reviews for %d features (a torn transaction?)", when, got, want)
	}
	if got, want := p.Project.TotalFeatures, len(f.Features); got != want {
		t.Fatalf("%s: progress.json project.total_features = %d, but feature_list.json has %d features", when, got, want)
	}
}

// checkSessionIDs requires session ids 1..N in order.
func checkSessionIDs(t testing.TB, when string, ss []sessionRec) {
	t.Helper()
	for i, s := range ss {
		if s.SessionID != i+1 {
			t.Fatalf("%s: sessions[%d] has session_id %d, want %d (ids must be unique and gap-free 1..N)", when, i, s.SessionID, i+1)
		}
	}
}

// leftovers lists the journal and the staged temp files of a transaction
// that are still on disk.
func leftovers(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{
		filepath.Join(dir, ".baton", "journal"),
		filepath.Join(dir, ".*.baton-tx"),
		filepath.Join(dir, ".baton", ".*.baton-tx"),
		filepath.Join(dir, ".baton", "recorded", ".*.baton-tx"),
		filepath.Join(dir, ".baton", ".journal.*.tmp"),
	} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	return out
}

func journalExists(t testing.TB, dir string) bool {
	t.Helper()
	_, err := os.Stat(filepath.Join(dir, ".baton", "journal"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// envInt reads a positive integer knob from the environment.
func envInt(t testing.TB, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive whole number", name, v)
	}
	return n
}

// ---- the audit log

type eventRec struct {
	Seq      int `json:"seq"`
	Metadata struct {
		Files map[string]string `json:"files"`
	} `json:"metadata"`
}

// auditLog returns the number of entries of .baton/events.jsonl and the
// last one (nil when there is none).
func auditLog(t testing.TB, dir string) (int, *eventRec) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".baton", "events.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.TrimRight(b, "\n")
	if len(b) == 0 {
		return 0, nil
	}
	n := bytes.Count(b, []byte("\n")) + 1
	var e eventRec
	if err := json.Unmarshal(b[bytes.LastIndexByte(b, '\n')+1:], &e); err != nil {
		t.Fatalf("the last entry of the audit log does not parse: %v", err)
	}
	if e.Seq != n {
		t.Fatalf("the audit log has %d lines but its last entry is seq %d", n, e.Seq)
	}
	return n, &e
}

// checkAudit requires the last audit event to record the state files as
// they are: the files and the log are committed in one transaction.
func checkAudit(t testing.TB, when string, last *eventRec, files map[string][]byte) {
	t.Helper()
	if last == nil {
		t.Fatalf("%s: the audit log is empty", when)
	}
	for name, b := range files {
		if got, want := last.Metadata.Files[name], contentHash(b); got != want {
			t.Fatalf("%s: the last audit event (seq %d) records %s as %.12s, the file is %.12s: the log and the files were not committed together", when, last.Seq, name, got, want)
		}
	}
}

// contentHash is the hash the audit log records for a file's content (as
// docs/audit.md defines it, computed here on its own): plain sha256.
func contentHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
