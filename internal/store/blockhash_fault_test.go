package store

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// A mapped base over 4 MiB cut outside baton while the commit hashes it
// whole (checkBase): the fault must become the transaction's error
// (cutWhileMapped), not kill the process — the hash now runs on worker
// goroutines, which do not have SetPanicOnFault.
func TestCutWhileHashedOnWorkers(t *testing.T) {
	if os.Getenv("BATON_TEST_CUT_CHILD") == "1" {
		runtime.GOMAXPROCS(2)
		s := stampTestStore(t)
		content := append([]byte("[\n"), bytes.Repeat([]byte("{\"id\":1},\n"), 5<<20/10)...)
		content = append(content, "{\"id\":2}\n]\n"...)
		last := int64(len(content)) - 11
		stampTestWrite(t, s, func() {}, func([]byte) ([][]byte, int64) { return [][]byte{content}, last })
		stampTestWrite(t, s, func() {}, func(old []byte) ([][]byte, int64) { return [][]byte{old}, last })
		defer SetPatching(SetPatching(false))
		err := s.Update(context.Background(), func(tx *Tx) error {
			if _, err := tx.Drift(); err != nil {
				return err
			}
			if _, _, _, err := tx.ReadTrusted("f.json"); err != nil {
				return err
			}
			os.Truncate(s.Path("f.json"), 0) // cut outside baton
			tx.WriteSegments("f.json", [][]byte{[]byte("[]\n")}, nil)
			tx.Log(Event{Type: "task"})
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), "cut outside baton") {
			t.Fatalf("want the cut reported, got %v", err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCutWhileHashedOnWorkers$", "-test.count=1")
	cmd.Env = append(os.Environ(), "BATON_TEST_CUT_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child died: %v\n%s", err, firstLines(string(out), 8))
	}
}

func firstLines(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	if len(l) > n {
		l = l[:n]
	}
	return strings.Join(l, "\n")
}
