package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"
)

// sessionCmd runs baton bound to an open session by its credential.
func sessionCmd(dir, cred string, args ...string) *exec.Cmd {
	c := exec.Command(batonBin, args...)
	c.Dir = dir
	c.Env = append(batonEnv(dir), "BATON_SESSION="+cred)
	return c
}

// TestConcurrentSessions runs agents at once, each a sequence of real
// processes bound to its own session: open it, write as its role, close it.
// Afterwards every session is recorded once with its id, none is left open,
// each write is logged under the session that made it, and the audit
// chain is intact.
func TestConcurrentSessions(t *testing.T) {
	const agents = 12
	dir := newProject(t)
	appendFeatures(t, dir, agents, 10)

	type agentRun struct {
		role    string
		feature string
		session int
		err     error
	}
	runs := make([]agentRun, agents)
	var wg sync.WaitGroup
	for i := range runs {
		runs[i].role = map[bool]string{true: "IMPLEMENT", false: "REVIEW"}[i%2 == 0]
		runs[i].feature = featureID(i + 1)
		wg.Add(1)
		go func(r *agentRun) {
			defer wg.Done()
			r.err = runAgent(dir, r.role, r.feature, &r.session)
		}(&runs[i])
	}
	wg.Wait()
	seen := map[int]bool{}
	for _, r := range runs {
		if r.err != nil {
			t.Fatalf("%s on %s: %v", r.role, r.feature, r.err)
		}
		if seen[r.session] {
			t.Fatalf("session id %d given twice", r.session)
		}
		seen[r.session] = true
	}

	var prog struct {
		Sessions []struct {
			SessionID int    `json:"session_id"`
			AgentType string `json:"agent_type"`
			Outcome   string `json:"outcome"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal(readState(t, dir, "progress.json"), &prog); err != nil {
		t.Fatal(err)
	}
	recorded := map[int]string{}
	for _, s := range prog.Sessions {
		if _, dup := recorded[s.SessionID]; dup {
			t.Fatalf("session %d recorded twice", s.SessionID)
		}
		recorded[s.SessionID] = s.AgentType
	}
	for _, r := range runs {
		if recorded[r.session] != r.role {
			t.Errorf("session %d: recorded as %q, want %s", r.session, recorded[r.session], r.role)
		}
	}
	if len(prog.Sessions) != agents {
		t.Errorf("%d sessions recorded, want %d", len(prog.Sessions), agents)
	}
	open, err := os.ReadFile(filepath.Join(dir, ".baton", "sessions.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(open), `"open": []`) {
		t.Errorf("sessions left open:\n%s", open)
	}

	// each write is logged under the session that made it
	writes := map[int]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(readState(t, dir, ".baton/events.jsonl"))), "\n") {
		var e struct {
			Payload struct {
				Command string `json:"command"`
				Actor   *struct {
					Role    string `json:"role"`
					Session *int   `json:"session"`
				} `json:"actor"`
			} `json:"payload"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		if a := e.Payload.Actor; a != nil && a.Session != nil && (strings.HasSuffix(e.Payload.Command, "features fail") || strings.HasSuffix(e.Payload.Command, "features pass")) {
			writes[*a.Session]++
			if recorded[*a.Session] != a.Role {
				t.Errorf("event by session %d logged as %s, but it ran as %s", *a.Session, a.Role, recorded[*a.Session])
			}
		}
	}
	for _, r := range runs {
		if writes[r.session] != 1 {
			t.Errorf("session %d: %d feature writes logged, want 1", r.session, writes[r.session])
		}
	}
	out := mustBaton(t, dir, "verify")
	if !strings.HasPrefix(out, "OK: ") {
		t.Fatalf("verify: %s", out)
	}
}

// runAgent is one agent: session start, one write as its role (IMPLEMENT
// marks a regression, REVIEW reviews and passes), session end.
func runAgent(dir, role, feature string, session *int) error {
	// a person opens each agent's session with their key (on purpose: the
	// roles run at once, whatever the computed phase)
	start := exec.Command(batonBin, "--as", "HUMAN", "--reason", "e2e", "--json", "--state-dir", dir, "session", "start", "--agent", role, "--feature", feature)
	start.Env = batonEnv(dir)
	out, err := start.CombinedOutput()
	if err != nil {
		return fmt.Errorf("session start: %v\n%s", err, out)
	}
	*session = int(gjson.GetBytes(out, "session_id").Int())
	cred := gjson.GetBytes(out, "env.BATON_SESSION").String()
	if cred == "" {
		return fmt.Errorf("session start printed no credential:\n%s", out)
	}
	steps := [][]string{{"features", "fail", feature, "-r", "regression seen"}}
	if role == "REVIEW" {
		steps = [][]string{
			{"reviews", "add-review", "-a", "REVIEW", "--feature-id", feature, "-b", "feature/" + feature, "-v", "PASS", "-s", "ok"},
			{"features", "pass", feature},
		}
	}
	steps = append(steps, []string{"session", "end", "-o", map[string]string{"IMPLEMENT": "READY_FOR_REVIEW", "REVIEW": "SUCCESS"}[role], "-s", "done"})
	for _, args := range steps {
		if out, err := sessionCmd(dir, cred, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("session %d: baton %s: %v\n%s", *session, strings.Join(args, " "), err, out)
		}
	}
	return nil
}
