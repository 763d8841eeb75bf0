package cli_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/cli"
	"github.com/baton-cli/baton/internal/reviews"
	"github.com/baton-cli/baton/internal/store"
)

// indexProject is a state directory driven in process at a fixed clock.
type indexProject struct {
	t     *testing.T
	dir   string
	now   time.Time
	creds map[string]string // role -> its session's credential
}

func newIndexProject(t *testing.T) *indexProject {
	p := &indexProject{t: t, dir: t.TempDir(), now: time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC), creds: map[string]string{}}
	if err := os.MkdirAll(filepath.Join(p.dir+".config", "baton"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir+".config", "baton", "key"), []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs baton bound to role's session ("" for none) and returns the
// exit code and what it printed.
func (p *indexProject) run(role string, args ...string) (int, string) {
	var out bytes.Buffer
	env := map[string]string{"BATON_STATE_DIR": p.dir, "HOME": p.dir, "XDG_CONFIG_HOME": p.dir + ".config", "BATON_SESSION": p.creds[role]}
	p.now = p.now.Add(time.Minute)
	now := p.now
	e := cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Cwd: p.dir, Now: func() time.Time { return now },
		Getenv: func(k string) string { return env[k] }}
	return cli.Main(args, e), out.String()
}

func (p *indexProject) must(role string, args ...string) string {
	p.t.Helper()
	code, out := p.run(role, args...)
	if code != 0 {
		p.t.Fatalf("baton %v: exit %d\n%s", args, code, out)
	}
	return out
}

func (p *indexProject) bind(role string) {
	p.t.Helper()
	out := p.must("", "--as", "HUMAN", "--reason", "test", "--json", "session", "start", "--agent", role)
	p.creds[role] = gjson.Get(out, "env.BATON_SESSION").String()
}

// indexOp draws the next write: reviews of random features on random
// branches with every verdict, architecture reviews, and fixes answering
// random reviews (many refused: at the fix-cycle limit, of a rejected
// review, naming features their branch's reviews did not).
func indexOp(r *rand.Rand, reviewsSoFar int) (role string, args []string) {
	feats := []string{"F001", "F002", "F003", "F004", "F001,F002", "BUG-001"}
	branches := []string{"feature/f001", "feature/f002", "feature/f003", "feature/batch", "bugfix/bug-001"}
	switch k := r.IntN(10); {
	case k < 5:
		verdict := []string{"PASS", "PASS_WITH_COMMENTS", "REQUEST_CHANGES", "REJECT"}[r.IntN(4)]
		issues := `{"minor":[{"description":"naming"}]}`
		if verdict == "REQUEST_CHANGES" || verdict == "REJECT" {
			issues = `{"major":[{"description":"no error handling"}],"minor":[{"description":"naming"}]}`
		}
		return "REVIEW", []string{"--json", "reviews", "add-review", "-a", "REVIEW", "--feature-id", feats[r.IntN(len(feats))],
			"-b", branches[r.IntN(len(branches))], "-v", verdict, "-s", "review", "--issues", issues}
	case k < 6:
		return "ARCHITECTURE", []string{"--json", "reviews", "add-review", "-a", "ARCHITECTURE", "-v", "PASS", "-s", "architecture"}
	default:
		if reviewsSoFar == 0 {
			return "", nil
		}
		id := max(1, reviewsSoFar-r.IntN(4))
		return "FIX", []string{"--json", "reviews", "add-fix", "-r", fmt.Sprint(id)}
	}
}

// TestReviewRulesSameWithoutIndex: the same writes, at the same clock, on
// two projects — one keeping its index of reviews.json, one whose index is
// deleted before every write (so that every rule reads the records) — are
// decided alike: the same exit codes and output, and the same files. It
// fails when the index tells a rule something the records do not.
func TestReviewRulesSameWithoutIndex(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			with, without := newIndexProject(t), newIndexProject(t)
			for _, p := range []*indexProject{with, without} {
				p.must("", "init")
				p.must("", "--as", "HUMAN", "--reason", "test", "features", "append", "-e",
					`[{"id":"F001","name":"A"},{"id":"F002","name":"B"},{"id":"F003","name":"C"},{"id":"F004","name":"D"},{"id":"BUG-001","name":"E","type":"bug"}]`, "-s", "spec")
				for _, role := range []string{"REVIEW", "FIX", "ARCHITECTURE"} {
					p.bind(role)
				}
			}
			r := rand.New(rand.NewPCG(seed, 5))
			reviewsSoFar, decided := 0, map[int]int{}
			for step := 0; step < 60; step++ {
				role, args := indexOp(r, reviewsSoFar)
				if args == nil {
					continue
				}
				if err := os.Remove(filepath.Join(without.dir, reviews.IndexName)); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
				c1, out1 := with.run(role, args...)
				c2, out2 := without.run(role, args...)
				if c1 != c2 || out1 != out2 {
					t.Fatalf("step %d, baton %v:\nwith the index: exit %d\n%s\nfrom the records: exit %d\n%s", step, args, c1, out1, c2, out2)
				}
				decided[c1]++
				if c1 == 0 && args[2] == "add-review" {
					reviewsSoFar++
				}
			}
			for _, f := range []struct{ name, path string }{{"reviews.json", "@this"}, {"feature_list.json", "@this"}, {"progress.json", "status"}, {"progress.json", "sessions"}} {
				a, _ := os.ReadFile(filepath.Join(with.dir, f.name))
				b, _ := os.ReadFile(filepath.Join(without.dir, f.name)) // the project's name is its directory's
				if x, y := gjson.GetBytes(a, f.path).Raw, gjson.GetBytes(b, f.path).Raw; x == "" || x != y {
					t.Errorf("%s %s differs with and without the index:\n%s\n%s", f.name, f.path, x, y)
				}
			}
			t.Logf("exit codes: %v", decided)
			if decided[0] == 0 || decided[3] == 0 {
				t.Fatalf("exit codes %v: the writes should include both recorded and refused ones", decided)
			}
		})
	}
}

// TestForgedIndexAndStamps: an index edited by hand together with the
// digest its stamp names, the stamps resealed (the seal is no secret), is
// still not believed: the log's last entry records the digest of the stamp
// a write may take facts from, so the rules read the records and the
// fix-cycle limit holds.
func TestForgedIndexAndStamps(t *testing.T) {
	p := newIndexProject(t)
	p.must("", "init")
	p.must("", "--as", "HUMAN", "--reason", "test", "features", "append", "-e", `[{"id":"F001","name":"A"}]`, "-s", "spec")
	p.bind("REVIEW")
	p.bind("FIX")
	p.must("REVIEW", "reviews", "add-review", "-a", "REVIEW", "--feature-id", "F001", "-b", "feature/f001", "-v", "REQUEST_CHANGES",
		"-s", "round 1", "--issues", `{"major":[{"description":"no error handling"}]}`)
	for i := 0; i < 3; i++ {
		p.must("FIX", "reviews", "add-fix", "-r", "1")
	}
	idxPath := filepath.Join(p.dir, reviews.IndexName)
	idx, err := os.ReadFile(idxPath)
	if err != nil {
		t.Fatal(err)
	}
	forged := bytes.Replace(idx, []byte(`"F001":[0,0,1,1,2,1,3,1]`), []byte(`"F001":[0,0]`), 1)
	if bytes.Equal(forged, idx) {
		t.Fatalf("unexpected index:\n%s", idx)
	}
	// and the digest of the features' part in its head
	was, now := bytes.Split(idx, []byte("\n")), bytes.Split(forged, []byte("\n"))
	for i := range was {
		if !bytes.Equal(was[i], now[i]) {
			forged = bytes.Replace(forged, []byte(reviews.Digest(was[i])), []byte(reviews.Digest(now[i])), 1)
		}
	}
	if err := os.WriteFile(idxPath, forged, 0o644); err != nil {
		t.Fatal(err)
	}
	// the stamp of reviews.json names the forged index, resealed
	stampsPath := filepath.Join(p.dir, ".baton", "stamps.json")
	raw, err := os.ReadFile(stampsPath)
	if err != nil {
		t.Fatal(err)
	}
	old := reviews.IndexDigest(idx)
	files := gjson.GetBytes(raw, "files").Raw
	if !strings.Contains(files, old) {
		t.Fatalf("the stamps do not name the index's digest %s:\n%s", old, files)
	}
	files = strings.ReplaceAll(files, old, reviews.IndexDigest(forged))
	event := gjson.GetBytes(raw, "event").String()
	resealed := fmt.Sprintf(`{"event":%q,"seal":%q,"files":%s}`, event, store.HashContent([]byte(event+"\n"+files)), files)
	if err := os.WriteFile(stampsPath, []byte(resealed), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := p.run("FIX", "reviews", "add-fix", "-r", "1")
	if code != 3 || !strings.Contains(out, "fix-cycle limit reached for F001: 3 of 3 fixes recorded") {
		t.Fatalf("a fourth fix with a forged index and stamps: exit %d, want 3 at the limit\n%s", code, out)
	}
}
