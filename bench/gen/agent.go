package gen

// LaneAgent is a scripted agent for runs of many lanes (the lanes
// benchmark and the e2e tests): IMPLEMENT commits its feature's own file
// on its branch (an empty commit when a killed session had committed it),
// REVIEW passes the work and asks to merge it, and each ends its session.
// With LANE_AGENT_SLEEP set it first waits that many seconds, a session's
// fixed time. With LANE_AGENT_SHARED set IMPLEMENT also adds its feature's
// line to shared.txt, which every feature edits, and FIX, sent back for
// the conflict, merges main keeping every line.
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
	if [ -n "$LANE_AGENT_SHARED" ]; then echo "$f" >> shared.txt; git add shared.txt; fi
	git commit -q --allow-empty -m "Implement $f"
	baton session end -o READY_FOR_REVIEW -s "implemented $f" >/dev/null ;;
FIX)
	r=$(baton reviews get-last --field review_id)
	id=$(baton reviews get-last --field issues.critical.0.id)
	git switch -q "$b"
	if ! git merge -q --no-edit main >/dev/null 2>&1; then
		grep -v '^\(<<<<<<<\|=======\|>>>>>>>\)' shared.txt > shared.txt.new
		mv shared.txt.new shared.txt
		git add shared.txt
		git commit -q --no-edit
	fi
	baton reviews add-fix -r "$r" --issues-fixed "[\"$id\"]" >/dev/null
	baton session end -o READY_FOR_REVIEW -s "merged main into $b" >/dev/null ;;
REVIEW)
	baton reviews add-review -a REVIEW -b "$b" --feature-id "$f" -v PASS -s ok >/dev/null
	baton reviews merge >/dev/null
	baton session end -o SUCCESS -s "passed $f" >/dev/null ;;
*)
	echo "no script for $phase" >&2; exit 1 ;;
esac
`
