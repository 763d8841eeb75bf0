package bridge

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// TestStartCostsNoSchemaCompile: starting a program that links the bridge
// compiles no JSON Schema — the validator's metaschemas are compiled the
// first time a schema is checked, not at init, which used to cost every
// baton invocation ~6 ms. Measured in allocations (deterministic), not time.
func TestStartCostsNoSchemaCompile(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "BRIDGE_TEST_START_ONLY=1", "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	line := regexp.MustCompile(`init (github\.com/(santhosh-tekuri/jsonschema/v6|baton-cli/baton/[a-z/]+)) @[^,]+, [^,]+, (\d+) bytes, (\d+) allocs`)
	seen := map[string]bool{}
	for _, m := range line.FindAllStringSubmatch(string(out), -1) {
		seen[m[1]] = true
		if allocs, _ := strconv.Atoi(m[4]); allocs > 1000 {
			t.Errorf("init of %s makes %s allocations (%s bytes): work done at every start", m[1], m[4], m[3])
		}
	}
	if !seen["github.com/santhosh-tekuri/jsonschema/v6"] {
		t.Fatalf("no init trace of the schema validator:\n%s", out)
	}
	if ps := Diagnose(KindRequest, []byte(`{}`)); len(ps) == 0 {
		t.Fatal("the validator must still check a schema once asked")
	}
}
