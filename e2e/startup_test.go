package e2e

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Package initialisation runs in every baton process, before any command,
// whatever the command uses: an agent pays it on every call. Its time is
// not asserted (no timing in tests), but the memory it allocates is
// deterministic and follows the work: the packages that built large
// tables at init (gojq's builtins ~220 kB, html/template's ~18 kB, baton's
// own package-level maps ~45 kB) are gone, and this keeps them, and their
// like, out. Kept are the official MCP
// SDK's JSON Schema library (~80 kB), which `baton mcp` is built on, and
// go-git's repository with its transports and OpenPGP (~70 kB), which
// gitops reads git with.
const (
	maxInitBytesPerPackage = 48 << 10  // the largest left: encoding/gob's ~27 kB (the MCP SDK, go-git's config parser)
	maxInitBytesInAll      = 320 << 10 // ~275 kB now: the MCP SDK's and go-git's packages and their dependencies'
	// baton's own packages do no work at init: their tables are
	// lazy.Values (internal/lazy), built on first use and laid out by the
	// linker (cmd's help, completion and schema tables alone were 15 kB)
	maxInitBytesOwnPackage = 0
	ownPackages            = "github.com/baton-cli/baton/"
)

// initExceptions may allocate more than maxInitBytesPerPackage, and why.
var initExceptions = map[string]int{
	"github.com/google/jsonschema-go/jsonschema": 96 << 10, // the MCP SDK's schemas: baton mcp runs on the SDK
}

var initLine = regexp.MustCompile(`(?m)^init (\S+) @[0-9.]+ ms, [0-9.]+ ms clock, (\d+) bytes, (\d+) allocs$`)

// TestStartupInitAllocations runs `baton --version` with the runtime's
// init trace and bounds what each package, and all of them, allocate.
func TestStartupInitAllocations(t *testing.T) {
	cmd := exec.Command(batonBin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("baton --version: %v\n%s", err, out)
	}
	lines := initLine.FindAllStringSubmatch(string(out), -1)
	if len(lines) < 20 {
		t.Fatalf("the init trace lists %d packages: not a trace\n%s", len(lines), out)
	}
	total := 0
	for _, l := range lines {
		n, _ := strconv.Atoi(l[2])
		total += n
		bound := maxInitBytesPerPackage
		if strings.HasPrefix(l[1], ownPackages) {
			bound = maxInitBytesOwnPackage
		}
		if b, ok := initExceptions[l[1]]; ok {
			bound = b
		}
		if n > bound {
			t.Errorf("package %s allocates %d bytes at init (bound %d): build what it builds on first use (a lazy.Value for baton's own), or do not link it", l[1], n, bound)
		}
	}
	if total > maxInitBytesInAll {
		t.Errorf("the packages allocate %d bytes at init in all (bound %d)", total, maxInitBytesInAll)
	}
	t.Logf("%d packages initialised, %d bytes allocated", len(lines), total)
}
