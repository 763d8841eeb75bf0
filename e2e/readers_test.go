package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofrs/flock"
)

// readerCommands read the state; none may wait for the lock.
var readerCommands = [][]string{
	{"status"}, {"next"}, {"verify"}, {"log"}, {"progress", "get-status"}, {"progress", "list"},
	{"progress", "get-session", "-1"}, {"features", "list"}, {"features", "next"}, {"features", "stats"},
	{"reviews", "list"}, {"reviews", "get-last"},
}

func readerProject(t *testing.T) string {
	dir := newProject(t)
	appendFeatures(t, dir, 3, 10)
	mustBaton(t, dir, "progress", "add-session", "-a", "IMPLEMENT", "-s", "work", "-o", "READY_FOR_REVIEW", "--features", featureID(1))
	mustBaton(t, dir, "reviews", "add-review", "-a", "REVIEW", "--feature-id", featureID(1), "-b", "feature/x", "-v", "REQUEST_CHANGES", "-s", "changes")
	return dir
}

// Behind a writer that holds the lock and never lets go, every reader
// answers at once, and a writer gets exit 5 after its deadline.
func TestReadersNeverWait(t *testing.T) {
	dir := readerProject(t)
	fl := flock.New(filepath.Join(dir, ".baton", "lock"))
	if ok, err := fl.TryLock(); !ok || err != nil {
		t.Fatalf("taking the lock: %v", err)
	}
	defer fl.Unlock()
	for _, args := range readerCommands {
		c := batonCmd(dir, args...)
		c.Env = append(c.Env, "BATON_LOCK_TIMEOUT=0.2")
		out, err := c.CombinedOutput()
		if err != nil {
			t.Errorf("baton %v behind a stuck writer: %v\n%s", args, err, out)
		}
	}
	c := batonCmd(dir, "progress", "add-session", "-a", "IMPLEMENT", "-s", "blocked", "-o", "SUCCESS")
	c.Env = append(c.Env, "BATON_LOCK_TIMEOUT=0.2")
	if err := c.Run(); exitCode(err) != 5 {
		t.Errorf("a writer behind a stuck writer: %v, want exit 5", err)
	}
}

// A user who may not write the state directory can read it: the same
// state, mounted read-only.
func TestReadersOnReadOnlyState(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: a read-only bind mount needs root (CI runs as root)")
	}
	dir := readerProject(t)
	ro := t.TempDir()
	if out, err := exec.Command("mount", "--bind", dir, ro).CombinedOutput(); err != nil {
		t.Skipf("skipped: cannot bind-mount %s: %v %s", dir, err, out)
	}
	defer exec.Command("umount", "-l", ro).Run()
	if out, err := exec.Command("mount", "-o", "remount,bind,ro", ro).CombinedOutput(); err != nil {
		t.Skipf("skipped: cannot remount %s read-only: %v %s", ro, err, out)
	}
	if err := os.WriteFile(filepath.Join(ro, "probe"), nil, 0o644); err == nil {
		t.Skip("skipped: the read-only mount is writable")
	}
	for _, args := range readerCommands {
		if out, err := batonCmd(ro, args...).CombinedOutput(); err != nil {
			t.Errorf("baton %v on a read-only state: %v\n%s", args, err, out)
		}
	}
	c := batonCmd(ro, "progress", "add-session", "-a", "IMPLEMENT", "-s", "x", "-o", "SUCCESS")
	if out, err := c.CombinedOutput(); err == nil {
		t.Errorf("a writer on a read-only state succeeded:\n%s", out)
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// A committed journal left while a writer holds the lock (or a user may
// not write) is read through, its staged file and its audit entry:
// readers see the committed state without waiting for the lock to finish
// it.
func TestReadersReadThroughAJournal(t *testing.T) {
	dir := readerProject(t)
	old := readState(t, dir, featuresName)
	staged := bytes.Replace(old, []byte(`"passes": false`), []byte(`"passes": true`), 1)
	f, err := os.CreateTemp(dir, "."+featuresName+".*.baton-tx")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(staged); err != nil {
		t.Fatal(err)
	}
	f.Close()
	journal, _ := json.Marshal(journalDoc{Files: []journalEntry{{Tmp: f.Name(), Dst: filepath.Join(dir, featuresName)}}, Append: nextEntry(t, dir, featuresName, staged)})
	fl := flock.New(filepath.Join(dir, ".baton", "lock"))
	if ok, err := fl.TryLock(); !ok || err != nil {
		t.Fatalf("taking the lock: %v", err)
	}
	defer fl.Unlock()
	if err := os.WriteFile(filepath.Join(dir, ".baton", "journal"), journal, 0o644); err != nil {
		t.Fatal(err)
	}
	c := batonCmd(dir, "features", "get", featureID(1), "--field", "passes")
	c.Env = append(c.Env, "BATON_LOCK_TIMEOUT=0.2")
	out, err := c.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "true" {
		t.Fatalf("features get through a pending journal: %v\n%s (want true: the committed state)", err, out)
	}
	if got := readState(t, dir, featuresName); !bytes.Equal(got, old) {
		t.Fatal("a reader applied the journal without the lock")
	}
}

// nextEntry is the journal's record of appending an entry after the log's
// last that records name with content data: what a writer stopped after
// its commit point leaves.
func nextEntry(t *testing.T, dir, name string, data []byte) *appendDoc {
	t.Helper()
	path := filepath.Join(dir, ".baton", "events.jsonl")
	log := readState(t, dir, ".baton/events.jsonl")
	lines := bytes.Split(bytes.TrimRight(log, "\n"), []byte("\n"))
	var e map[string]any
	if err := json.Unmarshal(lines[len(lines)-1], &e); err != nil {
		t.Fatal(err)
	}
	e["seq"] = e["seq"].(float64) + 1
	e["metadata"].(map[string]any)["files"].(map[string]any)[name] = contentHash(data)
	line, _ := json.Marshal(e)
	return &appendDoc{Path: path, Offset: int64(len(log)), Data: append(line, '\n')}
}
