#!/usr/bin/env bash
# A whole IMPLEMENT -> REVIEW (REQUEST_CHANGES) -> FIX -> REVIEW (PASS) cycle on a
# scratch git repository, every step a real baton command on real files and
# real commits. Usage: demo/demo.sh [path/to/baton]
set -euo pipefail

BATON=${1:-baton}
case $BATON in /*) ;; */*) BATON=$PWD/$BATON ;; esac
command -v "$BATON" >/dev/null || { echo "demo: baton binary not found: $BATON (run 'make build')" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/baton-demo.XXXXXX")
echo "== scratch project: $work"
cd "$work"
export GIT_AUTHOR_NAME="demo agent" GIT_AUTHOR_EMAIL="agent@baton.demo"
export GIT_COMMITTER_NAME="demo agent" GIT_COMMITTER_EMAIL="agent@baton.demo"

step() { printf '\n== %s\n' "$*"; }
run() { printf '$ baton %s\n' "$*"; "$BATON" "$@"; }

git init -q -b main
printf '# greeter\n' > README.md
git add README.md && git commit -qm "Initial project setup"

# start ROLE [flags]: open a role-bound session; later calls act as it.
start() {
  printf '$ baton session start --agent %s\n' "$*"
  out=$("$BATON" session start --agent "$@")
  echo "$out"
  eval "$(echo "$out" | grep '^export BATON_SESSION=')"
}
finish() { run session end "$@"; unset BATON_SESSION; }

step "INITIALIZER: set up baton and the feature list; hooks keep commits off main"
run init --name greeter --hooks
start INITIALIZER
run features append -s app_spec.txt -e '[
  {"id": "F001", "name": "Greeting endpoint", "description": "GET /hello returns a greeting", "type": "feature"},
  {"id": "F002", "name": "Farewell endpoint", "description": "GET /bye returns a farewell", "type": "feature"}
]'
finish -o SUCCESS -s "Created feature_list.json with 2 features"
run next

step "IMPLEMENT: take the next feature, build it on a branch"
run features next
start IMPLEMENT --feature F001 --branch feature/greeting
run branch create feature/greeting
git checkout -q feature/greeting
cat > hello.sh <<'SH'
#!/bin/sh
echo "hello, $1"
SH
git add hello.sh && git commit -qm "Implement greeting endpoint"
head=$(git rev-parse --short HEAD)
finish -o READY_FOR_REVIEW -s "Implemented F001 greeting" --commits "$head:Implement greeting endpoint"
run next

step "IMPLEMENT may not mark its own work passing"
printf '$ BATON_ROLE=IMPLEMENT baton features pass F001\n'
BATON_ROLE=IMPLEMENT "$BATON" features pass F001 || echo "(exit $?: refused, and logged)"

step "REVIEW: review main..feature/greeting (the range is recorded from git), request changes"
start REVIEW
run progress get-review-type
run reviews add-review -a REVIEW --feature-id F001 -b feature/greeting -v REQUEST_CHANGES \
  -s "Works, but an empty name prints 'hello, '" --issues '[
  {"severity": "major", "description": "Empty name is not handled", "location": "hello.sh:2", "suggestion": "Default to \"world\""},
  {"severity": "suggestion", "description": "Add a usage line"}
]'
run reviews get-fix-count F001
finish -o NEEDS_FIX -s "R1: REQUEST_CHANGES, 1 major" --next-phase FIX
run next

step "FIX: address R1 on the same branch"
start FIX --feature F001 --branch feature/greeting
run reviews show-issues
cat > hello.sh <<'SH'
#!/bin/sh
# usage: hello.sh [name]
echo "hello, ${1:-world}"
SH
git commit -qam "Default the greeting to world"
fix=$(git rev-parse --short HEAD)
run reviews add-fix -r 1 --issues-fixed "[{\"issue_id\": \"R1-M1\", \"fix_description\": \"Default to world\", \"commit\": \"$fix\"}, {\"issue_id\": \"R1-S1\", \"fix_description\": \"Usage comment\", \"commit\": \"$fix\"}]" --tests-added "empty_name"
finish -o READY_FOR_REVIEW -s "Fixed R1-M1 and R1-S1" --commits "$fix:Default the greeting to world"
run reviews get-fix-count F001

step "REVIEW: re-verify, pass; baton merges to main, marks F001 passing, deletes the branch"
start REVIEW
run reviews add-review -a REVIEW --feature-id F001 -b feature/greeting -v PASS -s "Fix verified"
git checkout -q main
run reviews merge
merge=$(git rev-parse --short HEAD)
finish -o SUCCESS -s "R2: PASS, merged F001 as $merge"

step "main is guarded: a commit straight onto it is refused by the hook"
printf '$ git commit --allow-empty -m "straight onto main"\n'
git commit -q --allow-empty -m "straight onto main" || echo "(exit $?: refused; a person may override with BATON_ALLOW_MAIN=1)"

step "Where the project stands"
run status
run next
run features stats
step "Session history"
run progress list
step "Reviews and fixes"
run reviews list
step "The audit log"
run log
run verify
step "main's history"
git log --oneline --graph main
echo
echo "demo: done — the state files are in $work"
