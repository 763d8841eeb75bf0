package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/baton-cli/baton/internal/errs"
)

// Operations called from another process. A sandboxed agent's baton parses
// its own command line and, for each operation, sends the typed call (its
// name and JSON input) to the launcher's broker, which runs it with the
// session's caller and answers with the typed result; the agent's baton
// prints that as it prints a result of its own.

// MaxStdin bounds the standard input a call sends along.
const MaxStdin = 8 << 20

// Call is one operation called from another process.
type Call struct {
	Op    string          `json:"op"`
	Input json.RawMessage `json:"input,omitempty"`
	// Cwd is where relative file arguments lead; Stdin is standard input,
	// for an argument that reads it ("-").
	Cwd   string `json:"cwd"`
	Stdin []byte `json:"stdin,omitempty"`
	// As, Reason, StateDir and File are what the call was given that no
	// session's call gets (a person's override, another state directory
	// or file): the broker refuses a call that names any. Nothing in a call
	// says who calls.
	As       string `json:"as,omitempty"`
	Reason   string `json:"reason,omitempty"`
	StateDir string `json:"state_dir,omitempty"`
	File     string `json:"file,omitempty"`
}

// Reply is what became of a call: the operation's result as JSON, with the
// fields its document leaves out (Hidden, by their Go path), its error,
// and the warnings and notices it gave, in order. Code is the exit code.
type Reply struct {
	Result json.RawMessage            `json:"result,omitempty"`
	Hidden map[string]json.RawMessage `json:"hidden,omitempty"`
	Error  *Failure                   `json:"error,omitempty"`
	Notes  []Note                     `json:"notes,omitempty"`
	Code   int                        `json:"code"`
}

// Failure is an operation's error.
type Failure struct {
	Kind    errs.Kind `json:"kind"`
	Message string    `json:"message"`
}

// Note is a warning or a notice an operation gave.
type Note struct {
	Warning bool   `json:"warning,omitempty"`
	Text    string `json:"text"`
}

// Remote carries calls to the process that runs them.
type Remote interface {
	Do(ctx context.Context, c Call) (Reply, error)
}

// UseRemote makes every operation of a run elsewhere, through r: the
// application reads and writes nothing itself.
func (a *App) UseRemote(r Remote) { a.remote = r }

// Err is the reply's error (nil for none).
func (r Reply) Err() error {
	if r.Error == nil {
		return nil
	}
	return &errs.Error{Kind: r.Error.Kind, Msg: r.Error.Message, Exit: r.Code}
}

// ReplyOf makes the reply of an operation that returned out and err, and
// gave notes.
func ReplyOf(out any, err error, notes []Note) Reply {
	r := Reply{Notes: notes, Code: errs.Code(err)}
	if err != nil {
		r.Error = &Failure{Kind: errs.KindOf(err), Message: err.Error()}
	}
	if out == nil {
		return r
	}
	b, merr := json.Marshal(out)
	if merr != nil {
		r.Error, r.Code = &Failure{Kind: errs.Unexpected, Message: merr.Error()}, errs.ExitUnexpected
		return r
	}
	r.Result = b
	hidden := map[string]json.RawMessage{}
	collectHidden(reflect.ValueOf(out), "", hidden)
	if len(hidden) > 0 {
		r.Hidden = hidden
	}
	return r
}

// forward runs operation op with input in through the remote and returns
// its result: the warnings and notices it gave go to this application's
// sink.
func forward[Out any](ctx context.Context, a *App, c Caller, op string, in any) (Out, error) {
	var out Out
	call, err := a.callOf(c, op, in)
	if err != nil {
		return out, err
	}
	reply, err := a.remote.Do(ctx, call)
	if err != nil {
		return out, err
	}
	for _, n := range reply.Notes {
		if n.Warning {
			a.warn("%s", n.Text)
		} else {
			a.notice("%s", n.Text)
		}
	}
	if len(reply.Result) > 0 {
		if err := json.Unmarshal(reply.Result, &out); err != nil {
			return out, errs.New(errs.Unexpected, "%s: the broker's answer is not the operation's result: %v", op, err)
		}
		if err := applyHidden(reflect.ValueOf(&out), reply.Hidden); err != nil {
			return out, errs.New(errs.Unexpected, "%s: the broker's answer is not the operation's result: %v", op, err)
		}
	}
	return out, reply.Err()
}

// callOf is the call of op with input in: standard input goes along when
// one of its file arguments reads it.
func (a *App) callOf(c Caller, op string, in any) (Call, error) {
	call := Call{Op: op, Cwd: a.fileDir(), As: c.As, Reason: c.Reason, StateDir: a.g.StateDir, File: a.g.File}
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return call, err
		}
		call.Input = b
	}
	for _, v := range FileArgs(in) {
		if strings.TrimSpace(v) == "-" && a.env.Stdin != nil {
			b, err := io.ReadAll(io.LimitReader(a.env.Stdin, MaxStdin))
			if err != nil {
				return call, errs.New(errs.Usage, "reading standard input: %v", err)
			}
			call.Stdin = b
			break
		}
	}
	return call, nil
}

// Probe asks the remote about a call that runs no operation of its own (a
// command that needs none, given what no session's call gets, or one no
// operation serves): the broker refuses what is not open to the session,
// and says so.
func (a *App) Probe(ctx context.Context, c Caller, op string) error {
	_, err := forward[json.RawMessage](ctx, a, c, op, nil)
	return err
}

// fileArgs is an input with arguments that name a file to read (or "-"
// for standard input).
type fileArgs interface{ fileArgs() []string }

// FileArgs lists the arguments of in that may name a file to read.
func FileArgs(in any) []string {
	if f, ok := in.(fileArgs); ok {
		return f.fileArgs()
	}
	return nil
}

func (o AddReviewInput) fileArgs() []string { return []string{o.Issues, o.Metrics} }
func (o AddFixInput) fileArgs() []string    { return []string{o.IssuesFixed, o.IssuesDeferred} }
func (o AppendInput) fileArgs() []string    { return []string{o.Entries} }

// collectHidden gathers the exported fields tagged json:"-" of v and of the
// structs it holds, as JSON by their Go path ("Next.Feature").
func collectHidden(v reflect.Value, path string, out map[string]json.RawMessage) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := path + f.Name
		if f.Tag.Get("json") == "-" {
			if b, err := json.Marshal(v.Field(i).Interface()); err == nil {
				out[name] = b
			}
			continue
		}
		collectHidden(v.Field(i), name+".", out)
	}
}

// applyHidden sets the fields collectHidden gathered.
func applyHidden(v reflect.Value, hidden map[string]json.RawMessage) error {
	for name, raw := range hidden {
		f, err := fieldAt(v, strings.Split(name, "."))
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		if err := json.Unmarshal(raw, f.Addr().Interface()); err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
	}
	return nil
}

// fieldAt is the field at path beneath v, the pointers on the way made.
func fieldAt(v reflect.Value, path []string) (reflect.Value, error) {
	for _, name := range path {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return v, fmt.Errorf("not a struct")
		}
		if v = v.FieldByName(name); !v.IsValid() || !v.CanSet() {
			return v, fmt.Errorf("no such field")
		}
	}
	return v, nil
}

// Notes is a sink that keeps an operation's warnings and notices, for its
// reply.
type Notes struct {
	mu    sync.Mutex
	notes []Note
}

// Warnf keeps a warning.
func (n *Notes) Warnf(format string, args ...any) { n.add(true, fmt.Sprintf(format, args...)) }

// Noticef keeps a notice.
func (n *Notes) Noticef(format string, args ...any) { n.add(false, fmt.Sprintf(format, args...)) }

// Messages keeps each line written to it as a notice.
func (n *Notes) Messages() io.Writer { return notesWriter{n} }

// Taken returns the notes kept.
func (n *Notes) Taken() []Note {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.notes
}

func (n *Notes) add(warning bool, text string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.notes = append(n.notes, Note{Warning: warning, Text: text})
}

type notesWriter struct{ n *Notes }

func (w notesWriter) Write(p []byte) (int, error) {
	for _, l := range bytes.Split(bytes.TrimRight(p, "\n"), []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			w.n.add(false, string(l))
		}
	}
	return len(p), nil
}

// remoteRecord is an operation's record (a status, a session, a review)
// from the remote.
func remoteRecord(ctx context.Context, a *App, c Caller, op string, in any) (gjson.Result, error) {
	raw, err := forward[json.RawMessage](ctx, a, c, op, in)
	return gjson.ParseBytes(raw), err
}

// remoteFile is a state file read by the remote, parsed here.
func remoteFile[F any](ctx context.Context, a *App, c Caller, op string, parse func([]byte) (F, error)) (F, error) {
	raw, err := forward[json.RawMessage](ctx, a, c, op, nil)
	if err != nil {
		var zero F
		return zero, err
	}
	return parse(raw)
}
