# baton — build, test and run the demo. `make test` is what CI runs.
GO        ?= go
BIN       := bin/baton
FUZZTIME  ?= 10000x
BENCHTIME ?= 1s

.PHONY: build test unit test-slow browser fuzz lint fmt bench demo man clean crash agent-e2e migrate-e2e

VERSION   ?=

# A static binary (CGO_ENABLED=0: Go's own DNS resolver and user lookup, so
# no C toolchain is needed and the binary runs wherever it is copied).
build:
	CGO_ENABLED=0 $(GO) build -buildvcs=auto $(if $(VERSION),-ldflags "-X github.com/baton-cli/baton/internal/cli.Version=$(VERSION)") -o $(BIN) ./cmd/baton

# The test suite CI runs first (make test-slow is the second tier): the
# race-checked unit and end-to-end scripts, the audit report in a browser,
# every fuzz target briefly, the lint checks.
test: unit browser fuzz lint

# Every package under the race detector, but the end-to-end ones: the
# scripts of internal/cli run each command as its own process, so they run
# without it (a race-instrumented process start costs ~0.2 s, times
# thousands of calls), except for the scripts whose commands run
# goroutines: the bridge loop, agent timeouts. -short leaves the scripts
# that drive a whole project to make test-slow.
RACE_SCRIPTS := TestScripts/(smoke|bridge_loop|run_failures|concurrency)$$
SLOW_SCRIPTS := TestScripts/(dropin_replay|dropin_run_prompts|run_demo|migrate_run_prompts)$$

unit:
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v -e '/internal/cli$$' -e '/browser$$' -e '/e2e$$')
	$(GO) test -short -count=1 ./internal/cli
	$(GO) test -race -count=1 -run '$(RACE_SCRIPTS)' ./internal/cli

# The slower tier, which CI runs after make test: e2e (whole baton
# processes: the SIGKILL loops, concurrent writers, signals, readers), the
# scripts that drive a whole project (the predecessor's prompts replayed,
# baton run --prompts, the demo), and every benchmark once (make bench runs
# them all).
test-slow:
	$(GO) test -count=1 ./e2e
	$(GO) test -count=1 -run '$(SLOW_SCRIPTS)' ./internal/cli
	$(GO) test -count=1 -run='^$$' -bench=. -benchtime=1x ./...

# The HTML audit report rendered in headless Chromium: every feature and
# review present, keyboard navigation, printing, a screenshot. Without a
# Chromium it skips, except in CI (CI=true), where it fails (.ci/run
# installs Debian's chromium when it is missing).
browser:
	$(GO) test -count=1 -v ./browser

# The SIGKILL loops (state writers, reviews merge/reject, baton run) with
# many more kills than CI runs.
crash:
	BATON_CRASH_ITERATIONS=1000 BATON_GIT_CRASH_ITERATIONS=300 BATON_RUN_CRASH_ITERATIONS=200 \
	  $(GO) test -count=1 -timeout 60m -run 'TestCrashSafety' -v ./e2e

# Each fuzz target for FUZZTIME executions, its output shown. A count, not a
# duration: Go 1.26's coordinator can fail a duration-limited run with a bare
# "context deadline exceeded" when its deadline races a busy worker
# (go.dev/issue/75804). A failing input is saved under the package's
# testdata/fuzz/<target>/ (commit it as a regression seed) and printed here.
# Run longer by hand: make fuzz FUZZTIME=2m (or FUZZTIME=5000000x).
fuzz:
	@fail=0; for pkg in $$(grep -l '^func Fuzz' $$(git ls-files '*_test.go' 2>/dev/null || find . -name '*_test.go') | xargs -n1 dirname | sort -u); do \
	  for t in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$pkg/*_test.go | sed 's/^func //'); do \
	    echo "fuzz $$pkg $$t"; \
	    if ! $(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) ./$$pkg; then \
	      fail=1; echo "FAIL: fuzz target $$t in $$pkg"; \
	      for c in $$(git ls-files --others --exclude-standard -- $$pkg/testdata/fuzz/$$t 2>/dev/null); do \
	        echo "crasher $$c (a regression seed: fix the cause, then commit it):"; cat "$$c"; done; \
	    fi; \
	  done; \
	done; exit $$fail

# gofmt, go vet, staticcheck (pinned in go.mod as a tool) and go mod tidy
# must find nothing; tidy -diff writes nothing.
lint:
	@test -z "$$(gofmt -l .)" || { echo "gofmt would change:"; gofmt -l .; exit 1; }
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	@$(GO) mod tidy -diff || { echo "go mod tidy would change go.mod/go.sum (run make fmt)"; exit 1; }

fmt:
	gofmt -w .
	$(GO) mod tidy

# Go benchmarks, then whole-command timings on generated states (10 and
# 1,000 sessions): against a Go hello-world, the writes on 10 to
# 5,000 sessions, throughput for 1 to 16 writers, init adopting up to 50,000
# sessions, time to DONE with 1 to 8 agents at once and with features that
# all conflict (lanebench), and, with
# PREDECESSOR=<checkout of the predecessor's repository>, its scripts.
bench: build
	$(GO) test -run='^$$' -bench=. -benchtime=$(BENCHTIME) ./...
	$(GO) run ./bench/cmdbench -baton $(BIN) $(if $(PREDECESSOR),-predecessor $(PREDECESSOR))
	$(GO) run ./bench/gitbench -baton $(BIN)
	$(GO) run ./bench/lanebench -baton $(BIN)

# A whole multi-agent project on a scratch repository: baton run drives the
# built-in scripted agent to DONE (demo/demo.sh walks one cycle by hand).
demo: build
	./$(BIN) demo

# A man page for every command, from the commands' own help, into man/.
man: build
	./$(BIN) man man

# The real Claude Code CLI, from npm into .cache/claude-code (its native
# binary ships inside the registry package; no install script is needed).
CLAUDE_CODE_VERSION ?= 2.1.330
CLAUDE_CODE_DIR     := .cache/claude-code
claude-code:
	@test -d $(CLAUDE_CODE_DIR)/node_modules/@anthropic-ai/claude-code || \
	  npm install --prefix $(CLAUDE_CODE_DIR) --no-audit --no-fund --no-save --ignore-scripts @anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION)
	@for b in $(CLAUDE_CODE_DIR)/node_modules/@anthropic-ai/claude-code-linux-*/claude $(CLAUDE_CODE_DIR)/node_modules/@anthropic-ai/claude-code/bin/claude.exe; do \
	  if [ -x "$$b" ] && "$$b" --version >/dev/null 2>&1; then ln -sf "$(CURDIR)/$$b" $(CLAUDE_CODE_DIR)/claude; echo "claude-code: $$("$$b" --version)"; exit 0; fi; \
	done; echo "claude-code: no runnable Claude Code binary in $(CLAUDE_CODE_DIR)"; exit 1

# The real Codex CLI, from npm into .cache/codex (its native binary ships
# inside the registry package; bin/codex.js starts it with Node).
CODEX_VERSION ?= 0.169.0
CODEX_DIR     := .cache/codex
codex:
	@test -d $(CODEX_DIR)/node_modules/@openai/codex || \
	  npm install --prefix $(CODEX_DIR) --no-audit --no-fund --no-save --ignore-scripts @openai/codex@$(CODEX_VERSION)
	@$(CODEX_DIR)/node_modules/.bin/codex --version

# The MCP Inspector's CLI, from npm into .cache/inspector: a second real MCP
# client of 'baton mcp' (TestMCPInspector lists and calls each role's tools).
INSPECTOR_VERSION ?= 2.12.0
INSPECTOR_DIR     := .cache/inspector
inspector:
	@test -d $(INSPECTOR_DIR)/node_modules/@modelcontextprotocol/inspector || \
	  npm install --prefix $(INSPECTOR_DIR) --no-audit --no-fund --no-save --ignore-scripts @modelcontextprotocol/inspector@$(INSPECTOR_VERSION)
	@$(INSPECTOR_DIR)/node_modules/.bin/mcp-inspector --version

# baton run --agent claude and --agent codex each drive one IMPLEMENT and one
# REVIEW session of the real CLI, pointed at a scripted Messages API
# (Claude Code) or Responses API (Codex) server on the loopback interface:
# no model, no network. Each runs unsandboxed and, where the kernel offers
# Landlock, again under --sandbox; the usage each reports is recorded.
# Each CLI also implements a feature of a Node project (npm test) and of a
# Python one (pytest), running the project's tests, both ways, and meets a
# model server that never answers (the stall timeout ends it). Both CLIs also
# run on a runner over a real sshd (as the runner tests do: root and
# openssh-server, else they skip saying so).
agent-e2e: claude-code codex inspector
	BATON_CLAUDE_BIN=$(CURDIR)/$(CLAUDE_CODE_DIR)/claude BATON_CODEX_BIN=$(CURDIR)/$(CODEX_DIR)/node_modules/.bin/codex \
	  BATON_INSPECTOR_BIN=$(CURDIR)/$(INSPECTOR_DIR)/node_modules/.bin/mcp-inspector \
	  $(GO) test -count=1 -run 'TestClaudeCodeDrivesSessions|TestCodexDrivesSessions|TestMCPInspector|TestAgentsOnProjects|TestAgentsStall|TestRunnerClaudeCode|TestRunnerCodex' -v ./e2e

# The predecessor's mid-flight project taken over and run to DONE with its
# real prompt files, from the checkout BATON_PREDECESSOR names (they cannot
# be copied here): make migrate-e2e BATON_PREDECESSOR=../autonomous-coding
migrate-e2e:
	@test -n "$(BATON_PREDECESSOR)" || { echo "migrate-e2e: give BATON_PREDECESSOR=DIR, a checkout of the predecessor (its prompts/ directory)"; exit 2; }
	BATON_PREDECESSOR=$(abspath $(BATON_PREDECESSOR)) $(GO) test -count=1 -run 'TestScripts/migrate_real_prompts$$' -v ./internal/cli

clean:
	rm -rf bin man
