package gen

// LaneAgent is a scripted agent for runs of many lanes (the lanes
// benchmark and the e2e tests): IMPLEMENT commits its feature's own file
// on its branch (an empty commit when a killed session had committed it),
// REVIEW passes the work and asks to merge it, and each ends its session.
// With LANE_AGENT_SLEEP set it first waits that many seconds, a session's
// fixed time.
const LaneAgent = `#!/bin/sh
cat >/dev/null
if [ -n "$LANE_AGENT_SLEEP" ]; then sleep "$LANE_AGENT_SLEEP"; fi
phase=$(baton progress get-status --field current_phase)
f=$(baton progress get-status --field current_feature)
b=feature/$(echo "$f" | tr A-Z a-z)
set -e
case $phase in
IMPLEMENT)
	git rev-parse -q --verify "refs/heads/$b" >/dev/null || baton branch create "$b" >/dev/null
	git switch -q "$b"
	echo "$f" > "$f.txt"
	git add "$f.txt"
	git commit -q --allow-empty -m "Implement $f"
	baton session end -o READY_FOR_REVIEW -s "implemented $f" >/dev/null ;;
REVIEW)
	baton reviews add-review -a REVIEW -b "$b" --feature-id "$f" -v PASS -s ok >/dev/null
	baton reviews merge >/dev/null
	baton session end -o SUCCESS -s "passed $f" >/dev/null ;;
*)
	echo "no script for $phase" >&2; exit 1 ;;
esac
`
