package broker

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/baton-cli/baton/internal/app"
	"github.com/baton-cli/baton/internal/errs"
)

type echo struct {
	mu      sync.Mutex
	refused []string
}

func (e *echo) Handle(_ context.Context, p Peer, c app.Call) app.Reply {
	out, _ := json.Marshal(c.Op + "|" + string(c.Input) + "|" + string(c.Stdin) + "|" + strconv.Itoa(p.PID))
	return app.Reply{Result: out}
}

func (e *echo) Refuse(_ Peer, why error) app.Reply {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refused = append(e.refused, why.Error())
	return app.ReplyOf(nil, errs.New(errs.Policy, "%v", why), nil)
}

func serve(t *testing.T, check func(Peer) error) (string, *echo) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sock")
	h := &echo{}
	s, err := Listen(path, h, check)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go s.Serve(ctx)
	t.Cleanup(func() { cancel(); s.Close() })
	return path, h
}

func TestCallRoundTrip(t *testing.T) {
	path, _ := serve(t, nil)
	resp, err := Call(path, app.Call{Op: "reviews.get-fix-count", Input: json.RawMessage(`{"feature":"F001"}`), Stdin: []byte("in"), Cwd: "/x"})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(`reviews.get-fix-count|{"feature":"F001"}|in|` + strconv.Itoa(os.Getpid()))
	if string(resp.Result) != string(want) || resp.Code != 0 {
		t.Errorf("got %s code %d", resp.Result, resp.Code)
	}
}

// raw sends bytes as they are and reads the answer.
func raw(t *testing.T, path string, frame []byte) app.Reply {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(frame); err != nil {
		t.Fatal(err)
	}
	var resp app.Reply
	if err := readFrame(c, MaxResponse, &resp); err != nil {
		t.Fatal(err)
	}
	return resp
}

func frame(body string, size uint32) []byte {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], size)
	return append(n[:], body...)
}

func TestRefusals(t *testing.T) {
	path, h := serve(t, nil)
	for name, f := range map[string][]byte{
		"a field naming a session": frame(`{"op":"status","session":7}`, 27),
		"a credential":             frame(`{"op":"status","credential":"bts1_x"}`, 37),
		"the old argv form":        frame(`{"args":["status"],"cwd":"/"}`, 29),
		"over the size limit":      frame("", MaxRequest+1),
		"not JSON":                 frame("hello", 5),
	} {
		if resp := raw(t, path, f); resp.Code != 3 {
			t.Errorf("%s: code %d, want the refusal's 3", name, resp.Code)
		}
	}
	if len(h.refused) != 5 {
		t.Errorf("refused %d requests, want 5: %q", len(h.refused), h.refused)
	}
}

func TestPeerCheck(t *testing.T) {
	path, h := serve(t, func(p Peer) error {
		if !Descends(p.PID, os.Getppid()) {
			return ErrNotDescendant
		}
		return nil
	})
	// this process descends from its parent: accepted
	if resp, err := Call(path, app.Call{Op: "x"}); err != nil || resp.Code == 3 {
		t.Fatalf("a descendant was refused: %v %+v", err, resp.Error)
	}
	path2, h2 := serve(t, func(p Peer) error {
		if !Descends(p.PID, 1<<30) {
			return ErrNotDescendant
		}
		return nil
	})
	if resp, err := Call(path2, app.Call{Op: "x"}); err != nil || resp.Code != 3 {
		t.Fatalf("a stranger was accepted: %v %+v", err, resp)
	}
	if len(h.refused) != 0 || len(h2.refused) != 1 {
		t.Errorf("refusals: %q / %q", h.refused, h2.refused)
	}
}

func TestDescends(t *testing.T) {
	c := exec.Command("sleep", "10")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Process.Kill()
	if !Descends(c.Process.Pid, os.Getpid()) {
		t.Error("a child does not descend from its parent")
	}
	if Descends(os.Getpid(), c.Process.Pid) {
		t.Error("a parent descends from its child")
	}
}

// TestRelayed: a server that requires its relay's token answers a call
// headed by it (the head's verdict in the peer, without the token) and
// refuses a call without a head, with another token, or of a kind it
// does not know, before reading the call.
func TestRelayed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sock")
	h := &relayEcho{}
	s, err := Listen(path, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.RequireRelay("the-token")
	ctx, cancel := context.WithCancel(context.Background())
	go s.Serve(ctx)
	t.Cleanup(func() { cancel(); s.Close() })
	call := app.Call{Op: "progress.get-status", Cwd: "/x"}
	resp, err := CallRelayed(path, Relayed{Token: "the-token", Kind: RelayRan, Reason: "a shell ran it", PID: 42}, call)
	if err != nil || string(resp.Result) != `"ran|a shell ran it|42|"` {
		t.Errorf("a relayed call: %s, %v", resp.Result, err)
	}
	for name, send := range map[string]func() (app.Reply, error){
		"no head": func() (app.Reply, error) { return Call(path, call) },
		"other token": func() (app.Reply, error) {
			return CallRelayed(path, Relayed{Token: "the-tokeN", Kind: RelayAgent}, call)
		},
		"no token":     func() (app.Reply, error) { return CallRelayed(path, Relayed{Kind: RelayAgent}, call) },
		"unknown kind": func() (app.Reply, error) { return CallRelayed(path, Relayed{Token: "the-token", Kind: "person"}, call) },
	} {
		resp, err := send()
		if err != nil || resp.Error == nil || resp.Result != nil {
			t.Errorf("%s: answered %s (%v), want a refusal", name, resp.Result, err)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.refused) != 4 {
		t.Errorf("refusals %v, want 4, each that nothing vouches for the caller", h.refused)
	}
	for _, r := range h.refused {
		if r != ErrNotRelayed.Error() {
			t.Errorf("refused with %q, want %q", r, ErrNotRelayed)
		}
	}
}

// relayEcho answers with what the relay said of the caller.
type relayEcho struct{ echo }

func (e *relayEcho) Handle(_ context.Context, p Peer, _ app.Call) app.Reply {
	if p.Relayed == nil {
		return app.Reply{}
	}
	out, _ := json.Marshal(p.Relayed.Kind + "|" + p.Relayed.Reason + "|" + strconv.Itoa(p.Relayed.PID) + "|" + p.Relayed.Token)
	return app.Reply{Result: out}
}
