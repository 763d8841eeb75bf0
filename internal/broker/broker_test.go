package broker

import (
	"context"
	"encoding/binary"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

type echo struct {
	mu      sync.Mutex
	refused []string
}

func (e *echo) Handle(_ context.Context, p Peer, r Request) Response {
	return Response{Stdout: []byte(strings.Join(r.Args, " ") + "|" + string(r.Stdin) + "|" + strconv.Itoa(p.PID)), Code: 0}
}

func (e *echo) Refuse(_ Peer, why error) Response {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refused = append(e.refused, why.Error())
	return Response{Stderr: []byte(why.Error()), Code: 3}
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
	resp, err := Call(path, Request{Args: []string{"status", "--json"}, Stdin: []byte("in"), Cwd: "/x"})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Stdout) != "status --json|in|"+strconv.Itoa(os.Getpid()) || resp.Code != 0 {
		t.Errorf("got %q code %d", resp.Stdout, resp.Code)
	}
}

// raw sends bytes as they are and reads the answer.
func raw(t *testing.T, path string, frame []byte) Response {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(frame); err != nil {
		t.Fatal(err)
	}
	var resp Response
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
		"a field naming a session": frame(`{"args":["status"],"session":7}`, 31),
		"a credential":             frame(`{"args":["status"],"credential":"bts1_x"}`, 41),
		"over the size limit":      frame("", MaxRequest+1),
		"not JSON":                 frame("hello", 5),
	} {
		if resp := raw(t, path, f); resp.Code != 3 {
			t.Errorf("%s: code %d, want the refusal's 3", name, resp.Code)
		}
	}
	if len(h.refused) != 4 {
		t.Errorf("refused %d requests, want 4: %q", len(h.refused), h.refused)
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
	if resp, err := Call(path, Request{Args: []string{"x"}}); err != nil || resp.Code == 3 {
		t.Fatalf("a descendant was refused: %v %q", err, resp.Stderr)
	}
	path2, h2 := serve(t, func(p Peer) error {
		if !Descends(p.PID, 1<<30) {
			return ErrNotDescendant
		}
		return nil
	})
	if resp, err := Call(path2, Request{Args: []string{"x"}}); err != nil || resp.Code != 3 {
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
