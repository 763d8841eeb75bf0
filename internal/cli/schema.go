package cli

import (
	"io"
	"maps"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-cli/baton/internal/errs"
	"github.com/baton-cli/baton/internal/jsondoc"
)

// The JSON Schemas (draft 2020-12) of what each command prints under
// --json. Records stored in the state files (a session, review, fix,
// feature) are printed in full: their schemas name the fields every
// record has and allow the rest.

type schema = map[string]any

// props is an object schema; required lists the fields it always has.
func props(p schema, required ...string) schema {
	if required == nil {
		required = []string{}
	}
	return schema{"type": "object", "properties": p, "required": required}
}

// docOf is a top-level document: an object that always carries warnings.
func docOf(p schema, required ...string) schema {
	p["warnings"] = ref("warnings")
	return props(p, append(required, "warnings")...)
}

func ref(name string) schema   { return schema{"$ref": "#/$defs/" + name} }
func arrayOf(s schema) schema  { return schema{"type": "array", "items": s} }
func oneOf(s ...schema) schema { return schema{"oneOf": s} }

// The common types, each a fresh map so that a schema can extend one.
func tString() schema   { return schema{"type": "string"} }
func tInt() schema      { return schema{"type": "integer"} }
func tBool() schema     { return schema{"type": "boolean"} }
func tStrNull() schema  { return schema{"type": []string{"string", "null"}} }
func tIDs() schema      { return arrayOf(tString()) }
func tObject() schema   { return schema{"type": "object"} }
func tAny() schema      { return schema{} }
func tIntNull() schema  { return schema{"type": []string{"integer", "null"}} }
func tStrings() schema  { return arrayOf(tString()) }
func tStrOrInt() schema { return schema{"type": []string{"string", "integer"}} }

// defs are the shapes several documents share.
var defs = defsTable()

func defsTable() schema {
	return schema{
		"warnings": tStrings(),
		"cost":     props(schema{"key": tString(), "sessions": tInt(), "cost_usd": schema{"type": "number"}, "input_tokens": tInt(), "output_tokens": tInt()}, "key", "sessions", "cost_usd", "input_tokens", "output_tokens"),
		"costs": props(schema{"total": ref("cost"), "by_session": oneOf(schema{"type": "null"}, arrayOf(ref("cost"))), "by_role": arrayOf(ref("cost")),
			"by_feature": arrayOf(ref("cost")), "by_run": arrayOf(ref("cost"))}, "total", "by_session", "by_role", "by_feature", "by_run"),
		"session": props(schema{"session_id": tInt(), "agent_type": tString(), "started_at": tString(), "completed_at": tString(),
			"summary": tString(), "features_touched": tIDs(), "outcome": tString(), "commits": arrayOf(props(schema{"hash": tString(), "message": tString()}, "hash")),
			"commit_range": tObject(), "failure_signature": tObject()}, "session_id", "agent_type", "outcome"),
		"open_session": props(schema{"session_id": tInt(), "agent_type": tString(), "started_at": tString(), "features": tIDs(), "branch": tStrNull()}, "session_id", "agent_type", "started_at"),
		"review": props(schema{"review_id": tInt(), "feature_id": tStrNull(), "branch": tStrNull(), "agent_type": tString(), "timestamp": tString(),
			"verdict": tString(), "issues": tAny(), "summary": tString(), "decision": tObject(), "feature_name": tString(), "commit_range": tObject(),
			"health_status": tString(), "metrics": tObject(), "merge_commit": tString(), "merged_onto": tString(), "merged_at": tString(),
			"rejected_at": tString(), "branch_deleted": tBool()}, "review_id", "agent_type", "verdict", "issues"),
		"fix": props(schema{"fix_id": tInt(), "review_id": tInt(), "feature_id": tStrNull(), "branch": tStrNull(), "agent_type": tString(),
			"issues_fixed": arrayOf(tAny()), "issues_deferred": arrayOf(tAny()), "merged_to_main": tBool(), "pending_review": tBool(),
			"timestamp": tString(), "tests_added": tStrings(), "merge_commit": tString(), "merged_at": tString()}, "fix_id", "review_id"),
		"feature": props(schema{"id": tString(), "name": tString(), "passes": tBool(), "type": tString(), "description": tString(), "category": tString(),
			"steps": tAny(), "priority": tAny(), "severity": tString(), "location": tString(), "source_appspec": tString(), "source_review": tStrOrInt(),
			"passed_at": tString(), "failed_at": tString(), "failure_reason": tString(), "depends_on": tIDs()}, "id", "passes"),
		"status": props(schema{"current_phase": tString(), "current_feature": tStrNull(), "current_branch": tStrNull(),
			"features_passing": tInt(), "features_completed": tInt()}, "current_phase"),
		"next": props(schema{"phase": tString(), "features": tIDs(), "branch": tStrNull(), "rule": tString(), "reason": tString(),
			"steps": arrayOf(ref("step")), "running": arrayOf(ref("step")), "waiting": arrayOf(props(schema{"item": tString(), "reason": tString()}, "item", "reason"))},
			"phase", "features", "branch", "rule", "reason"),
		"step": props(schema{"role": tString(), "item": tString(), "feature": tStrNull(), "branch": tStrNull(), "rule": tString(), "reason": tString(), "session": tInt()},
			"role", "item", "feature", "branch", "rule", "reason"),
		"lane": props(schema{"item": tString(), "role": tString(), "session": tInt(), "branch": tStrNull(), "since": tString(), "elapsed_seconds": tInt(), "runner": tString()},
			"item", "role", "session", "branch", "since"),
		"problem": props(schema{"check": tString(), "file": tString(), "message": tString()}, "check", "message"),
		"actor":   props(schema{"role": tString(), "session": tInt(), "source": tString(), "reason": tString()}, "role"),
		"event": props(schema{"seq": tInt(), "event_id": tString(), "timestamp": tString(), "type": tString(), "features": tIDs(), "command": tString(),
			"actor": oneOf(ref("actor"), schema{"type": "null"}), "changed": tStrings(), "summary": tString(), "refused": tString(), "record": tObject()},
			"seq", "event_id", "timestamp", "type", "features", "command"),
		"done": docOf(schema{"done": schema{"const": true}, "type": tString()}, "done", "type"),
	}
}

// schemas are the documents, by command path below baton.
var schemas = schemasTable()

func schemasTable() map[string]schema {
	m := commandSchemas()
	maps.Copy(m, verificationSchemas())
	m["land"] = landSchema()
	m["runner check"] = docOf(schema{"runner": tString(), "ssh": tString(), "protocol": tInt(), "version": tString(), "git": tString(), "sandbox": tString(),
		"lineage": tString(), "programs": tObject(), "missing": tStrings()}, "runner", "ssh", "protocol", "version", "git", "sandbox", "lineage", "programs", "missing")
	maps.Copy(m, keySchemas())
	return m
}

// verificationSchemas are the documents of 'baton verification'.
func verificationSchemas() map[string]schema {
	return map[string]schema{
		"verification prepare": docOf(schema{"dir": tString(), "input_file": tString(), "missing_feature_ids": tStrings(),
			"input": props(schema{"session_id": tInt(), "feature_specifications": arrayOf(tObject()), "feature_ids": tStrings(),
				"test_commands": tStrings(), "app_urls": tObject(), "verification_output_dir": tString(), "created_at": tString(), "agent_type": tString()},
				"session_id", "feature_specifications", "feature_ids", "agent_type")}, "dir", "input_file", "input"),
		"verification status": docOf(schema{"session_id": tInt(), "status": tString(), "message": tString(), "input_file": tString(),
			"report_path": tString(), "screenshots_count": tInt(), "test_evidence_exists": tBool(), "verification_dir": tString()}, "session_id", "status"),
		"verification list":   arrayOf(props(schema{"session_id": tInt(), "status": tString(), "screenshots": tInt()}, "session_id", "status", "screenshots")),
		"verification report": docOf(schema{"report": tString()}, "report"),
	}
}

func keySchemas() map[string]schema {
	key := docOf(schema{"path": tString(), "key_id": tString(), "public_key": tString()}, "path", "key_id", "public_key")
	return map[string]schema{
		"key init":    key,
		"key show":    key,
		"key publish": docOf(schema{"path": tString(), "key_ids": tStrings()}, "path", "key_ids"),
	}
}

func commandSchemas() map[string]schema {
	return map[string]schema{
		"error": props(schema{"error": props(schema{"kind": schema{"enum": []string{"unexpected", "usage", "refused", "not_found", "conflict", "invalid_state", "need_agent", "interrupted"}},
			"code": tInt(), "message": tString()}, "kind", "code", "message"), "details": tObject(), "warnings": ref("warnings")}, "error"),
		"help":       docOf(schema{"command": tString(), "help": tString()}, "command", "help"),
		"version":    docOf(schema{"version": tString()}, "version"),
		"completion": docOf(schema{"shell": tString(), "script": tString()}, "shell", "script"),

		"init": initSchema(),
		"status": docOf(schema{"state_dir": tString(), "project": tString(), "next": ref("next"), "features_passing": tInt(), "total_features": tInt(), "features_completed": tInt(), "last_session": oneOf(ref("session"), schema{"type": "null"}), "last_review": oneOf(ref("review"), schema{"type": "null"}), "fix_cycles": tAny(), "open_sessions": arrayOf(ref("open_session")), "problems": arrayOf(ref("problem")),
			"agents": tInt(), "lanes": arrayOf(ref("lane")), "landing": arrayOf(tObject()), "gate": oneOf(props(schema{"command": tString(), "timeout": tString(), "batch": tInt()}, "command"), schema{"type": "null"}), "costs": ref("costs")},
			"next", "features_passing", "total_features", "open_sessions", "problems", "agents", "lanes", "landing", "gate"),
		"next":   nextSchema(),
		"verify": docOf(schema{"ok": tBool(), "events": tInt(), "problems": arrayOf(ref("problem")), "authenticated": tBool(), "notes": tStrings(), "from_git": tBool(), "landings": tInt()}, "ok", "events", "problems", "authenticated", "notes"),
		"log":    docOf(schema{"events": arrayOf(ref("event"))}, "events"),
		"show": oneOf(docOf(schema{"id": tString(), "name": tString(), "kind": schema{"enum": []string{"FEAT", "BUG", "DEBT"}}, "passes": tBool(), "record": ref("feature"), "origin": tObject(), "sessions": arrayOf(tObject()), "reviews": arrayOf(ref("review")), "fixes": arrayOf(ref("fix")), "issues": arrayOf(tObject()), "commits": arrayOf(tObject()), "merges": arrayOf(tObject()), "refused": arrayOf(ref("event")), "events": arrayOf(ref("event")), "started_at": tStrNull(), "finished_at": tStrNull(), "duration_seconds": tIntNull()}, "id", "kind", "passes", "record", "origin", "sessions", "reviews", "fixes", "issues", "commits", "merges", "refused", "events"),
			// --from-git: the item's attested landings, read from git alone
			docOf(schema{"id": tString(), "landings": arrayOf(props(schema{"commit": tString(), "landing": oneOf(tObject(), schema{"type": "null"}), "problems": tStrings()}, "commit", "landing", "problems"))}, "id", "landings")),
		"report": docOf(schema{"path": tString(), "bytes": tInt(), "features": tInt(), "reviews": tInt(), "events": tInt()}, "path", "bytes"),
		"schema": tObject(),
		"man":    docOf(schema{"dir": tString(), "pages": tStrings()}, "dir", "pages"),
		"mcp":    docOf(schema{"jsonrpc": schema{"const": "2.0"}}, "jsonrpc"), // each message of the protocol
		"context": docOf(schema{"context_package_id": tString(), "request": props(schema{"context_request_id": tString(), "budget_tokens": tInt(), "domains": tStrings(), "history_types": tStrings(), "mode": tString(), "agent_profile": tString()}, "budget_tokens", "mode"),
			"items":   arrayOf(props(schema{"context_item_id": tString(), "kind": schema{"enum": []string{"task", "project", "global"}}, "source": tString(), "timestamp": tString(), "tags": tStrings(), "importance": schema{"type": "number"}, "token_cost": tInt(), "title": tString(), "payload": tString()}, "context_item_id", "kind", "importance", "token_cost", "payload")),
			"omitted": arrayOf(props(schema{"context_item_id": tString(), "title": tString(), "token_cost": tInt()}, "context_item_id", "token_cost")),
			"summary": tString(), "token_cost": tInt(), "compression_ratio": schema{"type": "number"}}, "context_package_id", "request", "items", "omitted", "summary", "token_cost", "compression_ratio"),
		"run":           docOf(schema{"stopped": schema{"enum": []string{"done", "max-sessions", "dry-run"}}, "next": ref("next"), "prompt": tString(), "session_id": tInt(), "agent": oneOf(schema{"type": "null"}, props(schema{"command": arrayOf(tString()), "sandboxed": tBool(), "allowed": oneOf(schema{"type": "null"}, arrayOf(tString()))}, "command", "sandboxed", "allowed")), "sessions": arrayOf(props(schema{"session_id": tInt(), "agent_type": tString(), "features": tIDs(), "branch": tString(), "failure_signature": tAny()}, "session_id", "agent_type", "features"))}, "stopped", "next", "sessions"),
		"demo":          docOf(schema{"dir": tString(), "kept": tBool(), "status": tObject(), "features": tObject(), "sessions": tObject(), "reviews": tObject(), "log": tObject(), "verify": tObject(), "main_history": tStrings()}, "dir", "kept", "status", "verify", "main_history"),
		"branch create": docOf(schema{"branch": tString(), "at": tString(), "from": tString()}, "branch", "at"),

		"session start": docOf(schema{"session_id": tInt(), "agent_type": tString(), "started_at": tString(), "features": tIDs(), "branch": tStrNull(), "env": tObject()}, "session_id", "agent_type", "env"),

		"session end":     withWarnings2(ref("session")),
		"session current": docOf(schema{"sessions": arrayOf(ref("open_session"))}, "sessions"),

		"progress init":            docOf(schema{"project": tObject(), "status": ref("status"), "sessions": arrayOf(ref("session"))}, "project", "status", "sessions"),
		"progress add-session":     withWarnings2(ref("session")),
		"progress update-status":   withWarnings2(ref("status")),
		"progress get-status":      withWarnings2(ref("status")),
		"progress get-session":     withWarnings2(ref("session")),
		"progress get-review-type": docOf(schema{"review_type": schema{"enum": []string{"FEATURE", "ARCHITECTURE_REFACTOR"}}, "features": tIDs(), "branch": tStrNull(), "item_type": schema{"enum": []string{"tech_debt"}}}, "review_type", "features", "branch"),
		"progress next-session-id": docOf(schema{"next_session_id": tInt()}, "next_session_id"),
		"progress list":            docOf(schema{"sessions": arrayOf(ref("session"))}, "sessions"),

		"reviews init":           docOf(schema{"initialized": tString()}, "initialized"),
		"reviews add-review":     withWarnings2(ref("review")),
		"reviews add-fix":        withWarnings2(ref("fix")),
		"reviews get-review":     withWarnings2(ref("review")),
		"reviews get-last":       withWarnings2(ref("review")),
		"reviews get-fix-count":  docOf(schema{"features": tIDs(), "fix_count": tInt(), "remaining": tInt(), "max_fix_cycles": tInt(), "limit_reached": tBool()}, "features", "fix_count", "remaining", "max_fix_cycles", "limit_reached"),
		"reviews show-issues":    docOf(schema{"review_id": tInt(), "features": tIDs(), "verdict": tString(), "issues": arrayOf(props(schema{"id": tString(), "severity": tString(), "description": tString()}, "id", "description"))}, "review_id", "features", "verdict", "issues"),
		"reviews list":           docOf(schema{"reviews": arrayOf(ref("review")), "fixes": arrayOf(ref("fix"))}, "reviews", "fixes"),
		"reviews next-review-id": docOf(schema{"next_review_id": tInt()}, "next_review_id"),
		"reviews mark-merged":    docOf(schema{"fix_id": tInt(), "merged_to_main": tBool()}, "fix_id", "merged_to_main"),
		"reviews merge":          docOf(schema{"review_id": tInt(), "branch": tString(), "into": tString(), "merge_commit": tString(), "passed": tIDs(), "fixes_merged": tStrings(), "branch_deleted": tBool(), "queued": tBool()}, "review_id", "branch", "into", "merge_commit", "passed"),
		"reviews reject":         docOf(schema{"review_id": tInt(), "branch": tString(), "branch_deleted": tBool(), "requeued": tIDs(), "phase": tString(), "reason": tString()}, "review_id", "requeued", "phase"),

		"features next":            oneOf(ref("done"), withWarnings2(ref("feature"))),
		"features next-candidates": oneOf(ref("done"), docOf(schema{"total_pending": tInt(), "candidates_shown": tInt(), "features": arrayOf(ref("feature")), "instruction": tString()}, "total_pending", "candidates_shown", "features")),
		"features get":             withWarnings2(ref("feature")),
		"features pass":            docOf(schema{"passed": tIDs(), "already_passing": tIDs()}, "passed", "already_passing"),
		"features pass-batch":      docOf(schema{"passed": tIDs(), "already_passing": tIDs()}, "passed", "already_passing"),
		"features fail":            docOf(schema{"failed": tIDs(), "reason": tString()}, "failed", "reason"),
		"features list":            docOf(schema{"features": arrayOf(ref("feature"))}, "features"),
		"features stats":           docOf(schema{"features": tObject(), "bugs": tObject(), "tech_debt": tObject(), "total": tObject(), "percent": tInt(), "next": tString()}, "features", "bugs", "tech_debt", "total", "percent", "next"),
		"features next-id":         docOf(schema{"next_id": tString()}, "next_id"),
		"features debt-count":      docOf(schema{"debt_count": tInt()}, "debt_count"),
		"features append":          docOf(schema{"added": tIDs()}, "added"),

		"bridge request":                tAny(),
		"bridge respond":                withWarnings2(tObject()),
		"bridge validate":               withWarnings2(tObject()),
		"bridge status":                 withWarnings2(tObject()),
		"bridge clean":                  withWarnings2(tObject()),
		"bridge loop":                   withWarnings2(tObject()),
		"bridge complete":               docOf(schema{"state_dir": tString(), "run_id": tString(), "checkpoint": tString()}, "state_dir", "run_id", "checkpoint"),
		"bridge install-claude-command": docOf(schema{"path": tString(), "command": tString()}, "path", "command"),
		"reconcile":                     docOf(schema{"reconciled": arrayOf(props(schema{"file": tString()}, "file")), "attested": tInt()}, "reconciled", "attested"),
	}
}

// landSchema is land's document: what the queue did, item by item.
func landSchema() schema {
	return docOf(schema{"items": arrayOf(props(schema{"item": tString(), "review_id": tInt(), "branch": tString(), "outcome": schema{"enum": []string{"landed", "sent_back", "rejected"}},
		"merge_commit": tString(), "passed": tIDs(), "gate_review": tInt(), "phase": tString(), "reason": tString(), "gate": tObject()}, "item", "review_id", "branch", "outcome", "reason"))}, "items")
}

// withWarnings2 is s with the warnings every document carries.
// nextSchema is next's document: the next step, and the schedule.
func nextSchema() schema {
	return schema{"allOf": []schema{ref("next"), props(schema{"warnings": ref("warnings")}, "warnings", "steps", "running", "waiting")}}
}

func withWarnings2(s schema) schema {
	return schema{"allOf": []schema{s, props(schema{"warnings": ref("warnings")}, "warnings")}}
}

// schemaFor is the whole schema of a command's document ("error" for the
// error object), with its definitions.
func schemaFor(name string) (schema, bool) {
	s, ok := schemas[name]
	if !ok {
		return nil, false
	}
	out := schema{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://baton.invalid/schema/" + strings.ReplaceAll(name, " ", "-") + ".json",
		"title": "baton " + name + " --json", "$defs": defs}
	for k, v := range s {
		out[k] = v
	}
	return out, true
}

// Schema returns the JSON Schema of a command's --json document ("error"
// for the error object), for tests and tools.
func Schema(name string) ([]byte, bool) {
	s, ok := schemaFor(name)
	if !ok {
		return nil, false
	}
	return jsondoc.Pretty(s), true
}

func schemaNames() []string {
	names := make([]string, 0, len(schemas))
	for n := range schemas {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (a *App) newSchemaCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "schema [COMMAND...]",
		Short: "Print the JSON Schema of a command's --json document (error: the error object); no argument lists them",
		Args:  cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			name := strings.Join(args, " ")
			if name == "" {
				names := schemaNames()
				return a.emit(map[string]any{"schemas": names}, func(w io.Writer) {
					for _, n := range names {
						printf(w, "%s", n)
					}
				})
			}
			s, ok := schemaFor(name)
			if !ok {
				return errs.New(errs.NotFound, "no schema for %q (see 'baton schema' for the list)", name)
			}
			if a.jq != nil || len(a.fields) > 0 {
				return a.writeJSON(a.env.Stdout, s)
			}
			printJSON(a.env.Stdout, s)
			return nil
		},
	}
}

// initSchema is init's document: what it created and kept, and what
// adopting a predecessor's state did.
func initSchema() schema {
	return docOf(schema{"state_dir": tString(), "created": tStrings(), "kept": tStrings(), "excluded": tStrings(), "scripts": tStrings(), "hooks": tStrings(), "git_baseline": tString(),
		"script_backups": arrayOf(props(schema{"from": tString(), "to": tString()}, "from", "to")),
		"untracked":      arrayOf(props(schema{"branch": tString(), "paths": tStrings(), "from": tString(), "to": tString(), "worktrees": tStrings()}, "branch", "paths", "from")),
		"dry_run":        tBool(),
		"migrated": props(schema{"start": tObject(), "phase": tString(), "feature": tStrNull(), "branch": tStrNull(), "rule": tString(), "reason": tString(),
			"changes":   arrayOf(props(schema{"field": tString(), "old": tString(), "new": tString(), "why": tString()}, "field", "old", "new", "why")),
			"anomalies": arrayOf(props(schema{"kind": tString(), "found": tString(), "do": tString()}, "kind", "found", "do")),
			"imported":  props(schema{"sessions": tInt(), "reviews": tInt(), "fixes": tInt()}, "sessions", "reviews", "fixes")},
			"start", "phase", "feature", "branch", "rule", "reason", "changes", "anomalies", "imported")}, "state_dir", "created", "kept", "excluded", "scripts", "hooks")
}
