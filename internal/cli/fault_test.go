package cli_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/cli"
	"github.com/baton-cli/baton/internal/store"
)

// Commit-point semantics under injected faults. Each step of the commit
// path fails in turn (a test hook in store): before the commit point the
// command fails and nothing changed — no file, no audit entry, no backup
// rotated — and a retry adds the record once; after it the command exits
// 0 with a warning, and the next command finishes the change without a
// second record. Then the same with a real full disk (a small tmpfs).

// batonIn runs baton in-process in dir as a person.
func batonIn(dir string, args ...string) (int, string) {
	var out bytes.Buffer
	// the person's key lives beside the project, outside it
	cfg := dir + ".config"
	if err := os.MkdirAll(filepath.Join(cfg, "baton"), 0o700); err == nil {
		_ = os.WriteFile(filepath.Join(cfg, "baton", "key"), []byte(testKey+"\n"), 0o600)
	}
	env := map[string]string{"BATON_STATE_DIR": dir, "HOME": dir, "XDG_CONFIG_HOME": cfg}
	e := cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Cwd: dir, Now: time.Now,
		Getenv: func(k string) string { return env[k] }}
	return cli.Main(args, e), out.String()
}

func asPerson(args ...string) []string {
	return append([]string{"--as", "HUMAN", "--reason", "fault test"}, args...)
}

func mustIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	code, out := batonIn(dir, args...)
	if code != 0 {
		t.Fatalf("baton %v: exit %d\n%s", args, code, out)
	}
	return out
}

// afterCommitPoint are the steps at which the change is already durable.
var afterCommitPoint = map[string]bool{store.StepBackup: true, store.StepRename: true, store.StepAppend: true,
	store.StepApplySync: true, store.StepJournalRemove: true, store.StepAnchor: true}

func readState(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range []string{"progress.json", "reviews.json", "feature_list.json", ".baton/events.jsonl", ".baton/backup/progress.json"} {
		out[f], _ = os.ReadFile(filepath.Join(dir, f))
	}
	return out
}

func sessionsIn(t *testing.T, dir, summary string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "progress.json"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range gjson.GetBytes(b, "sessions").Array() {
		if s.Get("summary").String() == summary {
			n++
		}
	}
	return n
}

func eventsWith(t *testing.T, dir, text string) int {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(dir, ".baton", "events.jsonl"))
	return strings.Count(string(b), text)
}

func TestFaultAtEachCommitStep(t *testing.T) {
	defer store.SetFaultHook(nil)
	for _, step := range store.CommitSteps {
		t.Run(step, func(t *testing.T) {
			dir := t.TempDir()
			mustIn(t, dir, "init")
			mustIn(t, dir, asPerson("progress", "add-session", "-a", "IMPLEMENT", "-s", "first", "-o", "SUCCESS")...)
			before := readState(t, dir)
			fired := failOnce(step, syscall.EIO)
			code, out := batonIn(dir, asPerson("progress", "add-session", "-a", "IMPLEMENT", "-s", "second", "-o", "SUCCESS")...)
			store.SetFaultHook(nil)
			if !*fired {
				t.Fatalf("step %s was never reached", step)
			}
			if afterCommitPoint[step] {
				// the backup and the anchors are best effort: no warning
				warned := strings.Contains(out, "WARNING: the change is committed") || step == store.StepBackup || step == store.StepAnchor
				if code != 0 || !warned {
					t.Fatalf("fault after the commit point: exit %d, want 0 with a warning\n%s", code, out)
				}
			} else {
				if code != 1 || !strings.Contains(out, "injected fault") {
					t.Fatalf("fault before the commit point: exit %d, want 1 naming the fault\n%s", code, out)
				}
				for f, b := range readState(t, dir) {
					if !bytes.Equal(b, before[f]) {
						t.Errorf("%s changed although the command failed before its commit point", f)
					}
				}
				if _, err := os.Stat(filepath.Join(dir, ".baton", "journal")); err == nil {
					t.Error("a journal was left behind")
				}
				// the caller retries a failed command
				mustIn(t, dir, asPerson("progress", "add-session", "-a", "IMPLEMENT", "-s", "second", "-o", "SUCCESS")...)
			}
			mustIn(t, dir, "verify") // the next command finishes a committed change
			if n := sessionsIn(t, dir, "second"); n != 1 {
				t.Errorf("%d sessions recorded, want exactly 1", n)
			}
			if n := eventsWith(t, dir, "added session 2 "); n != 1 {
				t.Errorf("%d audit entries for the session, want exactly 1", n)
			}
			if n := eventsWith(t, dir, "added session 3 "); n != 0 {
				t.Errorf("a third session was logged")
			}
		})
	}
}

// A journal whose temp files are gone never reached its commit point: the
// next command discards it, and its audit entry is never appended.
func TestJournalWithoutTempsIsDiscarded(t *testing.T) {
	defer store.SetFaultHook(nil)
	dir := t.TempDir()
	mustIn(t, dir, "init")
	before := readState(t, dir)
	// the log's anchors as they were: a writer that died before its append
	// never moved them
	anchors, _ := filepath.Glob(filepath.Join(dir, ".local", "state", "baton", "anchors", "*.json"))
	anchors = append(anchors, filepath.Join(dir, ".baton", "head.json"))
	anchorsBefore := map[string][]byte{}
	for _, p := range anchors {
		anchorsBefore[p], _ = os.ReadFile(p)
	}
	var journal []byte
	store.SetFaultHook(func(s string) error {
		if s == store.StepBackup { // just after the commit point: keep a copy of the journal
			journal, _ = os.ReadFile(filepath.Join(dir, ".baton", "journal"))
		}
		return nil
	})
	code, out := batonIn(dir, asPerson("progress", "add-session", "-a", "IMPLEMENT", "-s", "ghost", "-o", "SUCCESS")...)
	store.SetFaultHook(nil)
	if code != 0 || journal == nil {
		t.Fatalf("exit %d, journal %d bytes\n%s", code, len(journal), out)
	}
	// put the state back as it was, and the journal as a writer that died
	// after removing its temps would leave it
	for f, b := range before {
		if b != nil {
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for p, b := range anchorsBefore {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".baton", "journal"), journal, 0o644); err != nil {
		t.Fatal(err)
	}
	mustIn(t, dir, "progress", "list")
	if n := eventsWith(t, dir, "ghost"); n != 0 {
		t.Error("the discarded journal's audit entry was appended")
	}
	if n := sessionsIn(t, dir, "ghost"); n != 0 {
		t.Error("the discarded journal's session was recorded")
	}
	if _, err := os.Stat(filepath.Join(dir, ".baton", "journal")); err == nil {
		t.Error("the journal is still there")
	}
	mustIn(t, dir, "verify")
}

// A real full disk: a small tmpfs is filled at the staging of the files,
// at the journal and at the audit-log append. The feature list appended names so many
// features that its audit entry needs a page of its own, so the append
// cannot fit in the log's last page.
func TestDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: mounting a tmpfs to fill needs root (CI runs as root)")
	}
	defer store.SetFaultHook(nil)
	for _, step := range []string{store.StepTemp, store.StepJournal, store.StepAppend} {
		t.Run(step, func(t *testing.T) {
			dir := t.TempDir()
			if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", dir).CombinedOutput(); err != nil {
				t.Skipf("skipped: cannot mount a tmpfs at %s: %v %s", dir, err, out)
			}
			defer exec.Command("umount", "-l", dir).Run()
			mustIn(t, dir, "init")
			var items []string
			for i := 1; i <= 300; i++ {
				items = append(items, fmt.Sprintf(`{"id":"FEATURE-WITH-A-LONG-ID-%04d","name":"n"}`, i))
			}
			list := "[" + strings.Join(items, ",") + "]"
			filler := filepath.Join(dir, "filler")
			fired := false
			store.SetFaultHook(func(s string) error {
				if s == step && !fired {
					fired = true
					fill(t, filler)
				}
				return nil
			})
			code, out := batonIn(dir, asPerson("features", "append", "-s", "spec", "-e", list)...)
			store.SetFaultHook(nil)
			if !fired {
				t.Fatalf("step %s never reached", step)
			}
			if !strings.Contains(out, "no space left on device") {
				t.Fatalf("the disk was full at %s but nothing failed for it: exit %d\n%s", step, code, out)
			}
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
			if step == store.StepTemp || step == store.StepJournal {
				if code != 1 {
					t.Fatalf("disk full before the commit point: exit %d, want 1\n%s", code, out)
				}
				mustIn(t, dir, asPerson("features", "append", "-s", "spec", "-e", list)...) // the retry
			} else if code != 0 || !strings.Contains(out, "WARNING: the change is committed") {
				t.Fatalf("disk full after the commit point: exit %d, want 0 with a warning\n%s", code, out)
			}
			mustIn(t, dir, "verify")
			if n := eventsWith(t, dir, "FEATURE-WITH-A-LONG-ID-0300"); n != 1 {
				t.Errorf("%d audit entries for the append, want 1", n)
			}
			b, _ := os.ReadFile(filepath.Join(dir, "feature_list.json"))
			if n := strings.Count(string(b), `"FEATURE-WITH-A-LONG-ID-0001"`); n != 1 {
				t.Errorf("feature listed %d times, want 1", n)
			}
		})
	}
}

// fill writes to path until the file system is full.
func fill(t *testing.T, path string) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatalf("filling the disk: %v", err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			return
		}
	}
}

// failOnce makes the next commit fail once, at step, with cause; the flag
// it returns says whether the step was reached.
func failOnce(step string, cause error) *bool {
	fired := new(bool)
	store.SetFaultHook(func(s string) error {
		if s == step && !*fired {
			*fired = true
			return fmt.Errorf("injected fault at %s: %w", s, cause)
		}
		return nil
	})
	return fired
}
