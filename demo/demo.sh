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

step "INITIALIZER: set up baton and the feature list"
run init --name greeter
run features append -s app_spec.txt -e '[
  {"id": "F001", "name": "Greeting endpoint", "description": "GET /hello returns a greeting", "type": "feature"},
  {"id": "F002", "name": "Farewell endpoint", "description": "GET /bye returns a farewell", "type": "feature"}
]'
run progress add-session -a INITIALIZER -o SUCCESS -s "Created feature_list.json with 2 features" --next-phase IMPLEMENT

step "IMPLEMENT: pick the next feature, build it on a branch"
run features next
base=$(git rev-parse --short HEAD)
git checkout -qb feature/greeting
cat > hello.sh <<'SH'
#!/bin/sh
echo "hello, $1"
SH
git add hello.sh && git commit -qm "Implement greeting endpoint"
head=$(git rev-parse --short HEAD)
run progress add-session -a IMPLEMENT -o READY_FOR_REVIEW -s "Implemented F001 greeting" \
  --features F001 --commits "$head:Implement greeting endpoint" --commit-from "$base" \
  --next-phase REVIEW --current-feature F001 --current-branch feature/greeting

step "REVIEW: review main..feature/greeting, request changes"
run progress get-review-type
run reviews add-review -a REVIEW --feature-id F001 -b feature/greeting -v REQUEST_CHANGES \
  -s "Works, but an empty name prints 'hello, '" --commit-from "$base" --commit-to "$head" --issues '[
  {"severity": "major", "description": "Empty name is not handled", "location": "hello.sh:2", "suggestion": "Default to \"world\""},
  {"severity": "suggestion", "description": "Add a usage line"}
]'
run progress add-session -a REVIEW -o NEEDS_FIX -s "R1: REQUEST_CHANGES, 1 major" --features F001 --next-phase FIX
run reviews get-fix-count F001

step "FIX: address R1 on the same branch"
run reviews show-issues
cat > hello.sh <<'SH'
#!/bin/sh
# usage: hello.sh [name]
echo "hello, ${1:-world}"
SH
git commit -qam "Default the greeting to world"
fix=$(git rev-parse --short HEAD)
run reviews add-fix -r 1 --issues-fixed "[{\"issue_id\": \"R1-M1\", \"fix_description\": \"Default to world\", \"commit\": \"$fix\"}, {\"issue_id\": \"R1-S1\", \"fix_description\": \"Usage comment\", \"commit\": \"$fix\"}]" --tests-added "empty_name"
run progress add-session -a FIX -o READY_FOR_REVIEW -s "Fixed R1-M1 and R1-S1" --features F001 \
  --commits "$fix:Default the greeting to world" --commit-from "$head" --next-phase REVIEW
run reviews get-fix-count F001

step "REVIEW: re-verify, pass, merge to main, mark passing"
run reviews add-review -a REVIEW --feature-id F001 -b feature/greeting -v PASS -s "Fix verified" \
  --commit-from "$base" --commit-to "$fix"
git checkout -q main
git merge -q --no-ff -m "Merge feature/greeting (F001)" feature/greeting
merge=$(git rev-parse --short HEAD)
git branch -qd feature/greeting
run features pass F001
run reviews mark-merged FIX-1 --merge-commit "$merge"
run progress add-session -a REVIEW -o SUCCESS -s "R2: PASS, merged F001 as $merge" --features F001 \
  --next-phase IMPLEMENT --current-feature null --current-branch null

step "Where the project stands"
run progress get-status
run features stats
step "Session history"
run progress list
step "Reviews and fixes"
run reviews list
step "main's history"
git log --oneline --graph main
echo
echo "demo: done — the state files are in $work"
