// Package bridge owns baton's side of the file-based agent bridge (seeds 000,
// 001 and 004): an orchestrator that needs an AI agent writes
// .agent-request.json, checkpoints its run and exits 42; a host runs the
// agent, writes .agent-response.json and re-runs the orchestrator with
// --resume, which picks the answer up and goes on.
//
// It holds the three halves of that protocol:
//
//   - the orchestrator's half, for orchestrators written in Go: Open and
//     Bridge.Invoke return an answer on a resumed run or checkpoint and return
//     an errs.NeedAgent error (exit 42), with the Invoker interface and Mock
//     for tests;
//   - the host's half: ReadRequest, NewResponse and WriteResponse build the
//     envelope a host must write, and Loop runs an orchestrator and an agent
//     command in turn (seed 001's host loop);
//   - the contract: the seeds' JSON Schemas (schemas/), checked with
//     github.com/santhosh-tekuri/jsonschema/v6, and Diagnose, which names
//     seed 004's common mistakes. That library, not the MCP SDK's
//     github.com/google/jsonschema-go, because it reads the seeds' draft-07
//     schemas and reports every failure with its keyword's kind and the
//     value's location, which the named mistakes are built from, where the
//     other stops at the first failure and reports it as text.
//
// The predecessor's bridge failed in known ways, and each is designed out
// here: every request has a fresh request_id and a response is accepted
// only for the outstanding request (anything else is refused and set aside,
// never consumed); the request carries absolute paths so a host in another
// directory writes the right file; answers are keyed by phase so a resumed
// run replays them in order and no phase gets another's answer; a resume
// without a response fails instead of asking again forever; every file is
// written atomically; and a prompt too large to inline goes to a side file.
package bridge
