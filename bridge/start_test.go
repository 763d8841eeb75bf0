package bridge

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestStartCostsNoSchemaCompile: starting a program that links the bridge
// compiles no JSON Schema — baton's packages do no work at init, and the
// schemas are compiled the first time a document is checked. Measured in
// allocations (deterministic), not time.
func TestStartCostsNoSchemaCompile(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "BRIDGE_TEST_START_ONLY=1", "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	line := regexp.MustCompile(`init (github\.com/baton-cli/baton/[a-z/]+) @[^,]+, [^,]+, (\d+) bytes, (\d+) allocs`)
	seen := map[string]bool{}
	for _, m := range line.FindAllStringSubmatch(string(out), -1) {
		seen[m[1]] = true
		if allocs, _ := strconv.Atoi(m[3]); allocs > 100 {
			t.Errorf("init of %s makes %s allocations (%s bytes): work done at every start", m[1], m[3], m[2])
		}
	}
	// the schema validator's package does no work at init at all (its
	// tables are lazy.Values), so it has no line of its own: the trace must
	// still be one, with the bridge's own line
	if !seen["github.com/baton-cli/baton/bridge"] || len(regexp.MustCompile(`(?m)^init `).FindAllString(string(out), -1)) < 20 {
		t.Fatalf("not an init trace of a program that links the bridge:\n%s", out)
	}
	if ps := Diagnose(KindRequest, []byte(`{}`)); len(ps) == 0 {
		t.Fatal("the validator must still check a schema once asked")
	}
}

// TestBatonLinksNoGeneralSchemaValidator: the baton binary checks bridge
// documents with its own validator; a general one (whose init compiles
// every draft's metaschema) is for tests only. The MCP SDK's schema package
// (github.com/google/jsonschema-go) is linked for the MCP server's tool
// schemas: it compiles nothing at init, which TestStartCostsNoSchemaCompile's
// allocation bound checks for baton's own packages and
// TestMCPSchemaPackageInitIsSmall for it.
func TestBatonLinksNoGeneralSchemaValidator(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(gobin, "list", "-deps", "github.com/baton-cli/baton/cmd/baton").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "github.com/baton-cli/baton/bridge/schemacheck\n") {
		t.Fatalf("baton does not link its schema validator:\n%s", out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "jsonschema") && !strings.HasPrefix(dep, mcpSchemaPackage) {
			t.Errorf("baton links %s", dep)
		}
	}
}

const mcpSchemaPackage = "github.com/google/jsonschema-go/jsonschema"

// TestMCPSchemaPackageInitIsSmall: the schema package the MCP SDK brings
// does no compiling at start — its init, traced in a built baton, stays
// within a small number of allocations (deterministic, not a timing).
func TestMCPSchemaPackageInitIsSmall(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	bin := t.TempDir() + "/baton"
	if out, err := exec.Command(gobin, "build", "-o", bin, "github.com/baton-cli/baton/cmd/baton").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	line := regexp.MustCompile(`init ` + regexp.QuoteMeta(mcpSchemaPackage) + ` @[^,]+, [^,]+, (\d+) bytes, (\d+) allocs`)
	m := line.FindStringSubmatch(string(out))
	if m == nil {
		return // not linked, or nothing to initialise
	}
	if allocs, _ := strconv.Atoi(m[2]); allocs > 1000 {
		t.Errorf("init of %s makes %s allocations (%s bytes): a schema compiled at every start", mcpSchemaPackage, m[2], m[1])
	}
}
