package cli_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/cli"
	"github.com/baton-cli/baton/internal/sandbox"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"baton": func() {
			// the account's home, as the user database would give it: the
			// script's HOME, whatever a command changes HOME to
			if h := os.Getenv("BATON_TEST_ACCOUNT_HOME"); h != "" {
				app.AccountHome = func() string { return h }
			}
			os.Exit(cli.Main(os.Args[1:], cli.ProcessEnv()))
		},
	})
}

// TestScripts runs the end-to-end scripts in testdata/script. Each runs
// in its own directory with its own HOME and git identity. Extra commands:
//
//	exitcode N prog args...  run prog and require exit status N exactly
//	jsonfield PATH WANT      gjson PATH of the last stdout must be WANT
//	jsonvalid FILE           FILE must hold valid JSON
//	bind [-phase] ROLE [flags...]
//	                         open a session for ROLE as a person does
//	                         ('baton session start --agent ROLE flags...',
//	                         on purpose with --as HUMAN unless -phase, which
//	                         opens it only if ROLE is the computed phase) and
//	                         bind the script's later commands to it (sets
//	                         BATON_SESSION to its credential); stdout is left
//	                         as session start printed it (--json)
//	unbind                   later commands carry no session binding
//	forgelog MODE [ARGS]     rewrite .baton/events.jsonl as a forger would,
//	                         rechaining with the unkeyed sha256: delete SEQ
//	                         (and renumber), strip (every auth and signature),
//	                         append JSON (a payload), resign ROLE (the last
//	                         entry's role, re-signed with $BATON_SESSION's key),
//	                         record FILE... (a new entry of session
//	                         $FORGE_SESSION as $FORGE_ROLE, signed with $BATON_SESSION's key,
//	                         recording the files as they are)
//	rebind                   bind again to the session unbind left (a
//	                         person's command between an agent's ones)
//	readmeblock SECTION FILE write the sh code blocks of the README's
//	                         section "## SECTION" to FILE, as a person
//	                         would paste them
//	schemavalid NAME [stderr] the last stdout (or stderr) must be valid
//	                         against 'baton schema NAME' (error: the error
//	                         object)
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "..", "testdata", "script"),
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			home := filepath.Join(e.WorkDir, ".home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			// every script's person has a key, outside the project
			cfg := filepath.Join(e.WorkDir, ".config")
			if err := os.MkdirAll(filepath.Join(cfg, "baton"), 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(cfg, "baton", "key"), []byte(testKey+"\n"), 0o600); err != nil {
				return err
			}
			for k, v := range map[string]string{
				"XDG_CONFIG_HOME": cfg, "HOME": home, "BATON_TEST_ACCOUNT_HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Test Agent",
				"GIT_AUTHOR_EMAIL": "agent@example.test", "GIT_COMMITTER_NAME": "Test Agent",
				"GIT_COMMITTER_EMAIL": "agent@example.test", "GIT_AUTHOR_DATE": "2025-01-29T10:00:00Z",
				"GIT_COMMITTER_DATE": "2025-01-29T10:00:00Z",
				// baton run confines its agents by default where it can; the
				// scripts about the sandbox clear this to have it
				app.EnvNoSandbox: "1",
			} {
				e.Setenv(k, v)
			}
			// a checkout of the predecessor, for the scripts that run its
			// real prompt files ([predecessor])
			e.Setenv("BATON_PREDECESSOR", os.Getenv("BATON_PREDECESSOR"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":    cmdExitCode,
			"jsonfield":   cmdJSONField,
			"jsonvalid":   cmdJSONValid,
			"bind":        cmdBind,
			"unbind":      cmdUnbind,
			"schemavalid": cmdSchemaValid,
			"rebind":      cmdRebind,
			"forgelog":    cmdForgeLog,
			"readmeblock": cmdReadmeBlock,
			"httpserve":   cmdHTTPServe,
		},
		// [landlock]: the kernel offers the sandbox baton run --sandbox
		// uses; [landlock_abiN]: at least ABI N; [predecessor]:
		// BATON_PREDECESSOR names a checkout of the predecessor
		Condition: func(cond string) (bool, error) {
			if cond == "landlock" {
				return sandbox.ABI() >= sandbox.MinABI, nil
			}
			if cond == "root" {
				return os.Geteuid() == 0, nil
			}
			if cond == "predecessor" {
				fi, err := os.Stat(filepath.Join(os.Getenv("BATON_PREDECESSOR"), "prompts", "coding_prompt.md"))
				return os.Getenv("BATON_PREDECESSOR") != "" && err == nil && fi.Mode().IsRegular(), nil
			}
			if n, ok := strings.CutPrefix(cond, "landlock_abi"); ok {
				v, err := strconv.Atoi(n)
				return err == nil && sandbox.ABI() >= v, err
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		UpdateScripts: os.Getenv("UPDATE_SCRIPTS") != "",
	})
}

func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog args...")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit code %d, want %d", got, want)
	}
}

func cmdJSONField(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: jsonfield PATH WANT")
	}
	out := ts.ReadFile("stdout")
	if !gjson.Valid(out) {
		ts.Fatalf("stdout is not valid JSON:\n%s", out)
	}
	got := gjson.Get(out, args[0])
	match := got.Exists() && got.String() == args[1]
	if match == neg {
		ts.Fatalf("jsonfield %s: got %q (exists=%v), want %s%q", args[0], got.String(), got.Exists(), map[bool]string{true: "not ", false: ""}[neg], args[1])
	}
}

func cmdReadmeBlock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: readmeblock SECTION FILE")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	ts.Check(err)
	code, err := readmeShBlocks(string(readme), args[0])
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(code), 0o644))
}

// readmeShBlocks returns the ```sh blocks of the README section headed
// "## section", up to the next heading of that level.
func readmeShBlocks(readme, section string) (string, error) {
	_, body, ok := strings.Cut(readme, "\n## "+section+"\n")
	if !ok {
		return "", fmt.Errorf("README.md has no section %q", section)
	}
	body, _, _ = strings.Cut(body, "\n## ")
	var code strings.Builder
	in := false
	for _, line := range strings.Split(body, "\n") {
		switch {
		case !in && line == "```sh":
			in = true
		case in && line == "```":
			in = false
		case in:
			code.WriteString(line + "\n")
		}
	}
	if code.Len() == 0 {
		return "", fmt.Errorf("README.md section %q has no sh code block", section)
	}
	return code.String(), nil
}

func cmdJSONValid(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: jsonvalid FILE")
	}
	valid := gjson.Valid(ts.ReadFile(args[0]))
	if valid == neg {
		ts.Fatalf("jsonvalid %s: valid=%v", args[0], valid)
	}
}

// testKey is the person key every script starts with.
const testKey = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// cmdBind opens a session the way a person does (with their key, on
// purpose, so any role may be bound) and hands its credential to the rest
// of the script, as a launcher hands it to its agent. Binding a role again
// without flags reuses that role's session while it is open.
// cmdHTTPServe serves HTTP on a free loopback port for the rest of the
// script, answering "NAME PATH", and sets $NAME to the port.
func cmdHTTPServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: httpserve NAME")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	name := args[0]
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "%s %s\n", name, r.URL.Path) })}
	go srv.Serve(ln)
	ts.Defer(func() { srv.Close() })
	ts.Setenv(name, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
}

func cmdBind(ts *testscript.TestScript, neg bool, args []string) {
	phase := len(args) > 0 && args[0] == "-phase"
	if phase {
		args = args[1:]
	}
	if neg || len(args) < 1 {
		ts.Fatalf("usage: bind [-phase] ROLE [session start flags...]")
	}
	saved := "BATON_TEST_SESSION_" + args[0]
	if v := ts.Getenv(saved); v != "" && len(args) == 1 && !phase {
		ts.Setenv("BATON_SESSION", v)
		if ts.Exec("baton", "session", "current") == nil {
			return
		}
	}
	ts.Setenv("BATON_SESSION", "")
	argv := append([]string{"--json", "session", "start", "--agent", args[0]}, args[1:]...)
	if !phase {
		argv = append([]string{"--as", "HUMAN", "--reason", "test: bind " + args[0]}, argv...)
	}
	if err := ts.Exec("baton", argv...); err != nil {
		ts.Fatalf("bind %s: %v\n%s", args[0], err, ts.ReadFile("stderr"))
	}
	v := gjson.Get(ts.ReadFile("stdout"), "env.BATON_SESSION").String()
	if v == "" {
		ts.Fatalf("bind %s: session start printed no env.BATON_SESSION", args[0])
	}
	ts.Setenv("BATON_SESSION", v)
	ts.Setenv(saved, v)
}

func cmdUnbind(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: unbind")
	}
	ts.Setenv("BATON_TEST_UNBOUND", ts.Getenv("BATON_SESSION"))
	ts.Setenv("BATON_SESSION", "")
}

// cmdRebind binds the script again to the session unbind left.
func cmdRebind(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: rebind")
	}
	ts.Setenv("BATON_SESSION", ts.Getenv("BATON_TEST_UNBOUND"))
}

// cmdSchemaValid validates the last output against a command's published
// JSON Schema.
func cmdSchemaValid(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: schemavalid NAME [stderr]")
	}
	raw, ok := cli.Schema(args[0])
	if !ok {
		ts.Fatalf("schemavalid: no schema named %q", args[0])
	}
	c := jsonschema.NewCompiler()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		ts.Fatalf("schemavalid: schema %s: %v", args[0], err)
	}
	if err := c.AddResource("schema.json", doc); err != nil {
		ts.Fatalf("schemavalid: schema %s: %v", args[0], err)
	}
	sch, err := c.Compile("schema.json")
	if err != nil {
		ts.Fatalf("schemavalid: schema %s: %v", args[0], err)
	}
	stream := "stdout"
	if len(args) == 2 {
		stream = args[1]
	}
	out := ts.ReadFile(stream)
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		ts.Fatalf("schemavalid %s: %s is not one JSON document: %v\n%s", args[0], stream, err, out)
	}
	err = sch.Validate(inst)
	if (err == nil) == neg {
		ts.Fatalf("schemavalid %s: %#v\n%s", args[0], err, out)
	}
}

// cmdForgeLog forges the audit log the way an agent with a 20-line script
// and its own credential could.
func cmdForgeLog(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: forgelog delete SEQ | strip | append JSON | resign ROLE | record FILE...")
	}
	path := ts.MkAbs(filepath.Join(".baton", "events.jsonl"))
	data, err := os.ReadFile(path)
	ts.Check(err)
	var events []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var raw map[string]json.RawMessage
		ts.Check(json.Unmarshal([]byte(l), &raw))
		e := map[string]any{}
		for k, v := range raw {
			e[k] = v // byte for byte, as a careful forger keeps them
		}
		events = append(events, e)
	}
	switch args[0] {
	case "delete":
		n, _ := strconv.Atoi(args[1])
		events = append(events[:n-1], events[n:]...)
	case "strip":
		for _, e := range events {
			delete(e, "auth")
			delete(e, "sig")
		}
	case "append":
		last := events[len(events)-1]
		events = append(events, map[string]any{"event_id": "", "task_id": nil, "stage_id": "REVIEW", "type": "task",
			"timestamp": last["timestamp"], "payload": json.RawMessage(args[1]), "metadata": last["metadata"]})
	case "record":
		// an entry of the bound session recording the files as they are now
		last := events[len(events)-1]
		var md struct {
			Files map[string]string `json:"files"`
		}
		ts.Check(json.Unmarshal(last["metadata"].(json.RawMessage), &md))
		for _, f := range args[1:] {
			b, err := os.ReadFile(ts.MkAbs(f))
			ts.Check(err)
			sum := sha256.Sum256(b)
			md.Files[f] = hex.EncodeToString(sum[:])
		}
		role := ts.Getenv("FORGE_ROLE")
		payload := json.RawMessage(`{"command":"baton progress update-status","actor":{"role":"` + role + `","session":` + ts.Getenv("FORGE_SESSION") + `,"source":"session"}}`)
		events = append(events, map[string]any{"event_id": "", "task_id": nil, "stage_id": role, "type": "task",
			"timestamp": last["timestamp"], "payload": payload, "metadata": md, "auth": "session:" + ts.Getenv("FORGE_SESSION")})
	case "resign":
		last := events[len(events)-1]
		var payload map[string]any
		ts.Check(json.Unmarshal(last["payload"].(json.RawMessage), &payload))
		payload["actor"].(map[string]any)["role"] = args[1]
		last["payload"], last["stage_id"] = payload, args[1]
	}
	prev := ""
	var out bytes.Buffer
	for i, e := range events {
		e["seq"], e["event_id"], e["prev_hash"], e["hash"] = i+1, fmt.Sprintf("E%06d", i+1), prev, ""
		sig, hasSig := e["sig"]
		delete(e, "sig")
		b, _ := json.Marshal(orderedEvent(e))
		sum := sha256.Sum256(b)
		e["hash"] = hex.EncodeToString(sum[:])
		if hasSig {
			e["sig"] = sig
		}
		if (args[0] == "resign" || args[0] == "record") && i == len(events)-1 {
			seed, err := hex.DecodeString(strings.TrimPrefix(ts.Getenv("BATON_SESSION"), "bts1_"))
			ts.Check(err)
			msg := "baton audit event v1\n" + e["hash"].(string)
			e["sig"] = base64.StdEncoding.EncodeToString(ed25519.Sign(ed25519.NewKeyFromSeed(seed), []byte(msg)))
		}
		prev = e["hash"].(string)
		line, _ := json.Marshal(orderedEvent(e))
		out.Write(append(line, '\n'))
	}
	ts.Check(os.WriteFile(path, out.Bytes(), 0o644))
}

// orderedEvent marshals an entry's fields in baton's order, as the chain
// hash needs (a forger reads the order off the file).
type orderedEvent map[string]any

func (e orderedEvent) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for _, k := range []string{"seq", "event_id", "task_id", "stage_id", "type", "timestamp", "payload", "metadata", "prev_hash", "hash", "auth", "sig"} {
		v, ok := e[k]
		if !ok || ((k == "auth" || k == "sig") && (v == "" || string(asRaw(v)) == `""`)) {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func asRaw(v any) json.RawMessage {
	r, _ := v.(json.RawMessage)
	return r
}
