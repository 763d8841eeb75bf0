// Package broker carries the baton calls of an agent baton run started
// (out of its sandbox, when it has one) to the launcher, which holds the
// session's credential: the agent's baton parses its own command line
// and sends each operation as a typed call (app.Call: the operation's name
// and its JSON input), one per connection on a unix socket, as a
// length-prefixed JSON document; the launcher runs it (Dispatch) and
// answers with the typed result (app.Reply). Who calls is never read from
// the call: the server knows which session its socket serves, and learns
// the connecting process from the kernel (SO_PEERCRED), so that it can
// refuse a process outside that session's agent.
package broker

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/baton-cli/baton/internal/app"
)

// Limits of one exchange.
const (
	MaxRequest  = 8 << 20  // the input and standard input
	MaxResponse = 64 << 20 // the result
	// ReadTimeout bounds how long a client may take to send its request.
	ReadTimeout = 30 * time.Second
)

// EnvSocket names the environment variable that tells an agent's baton
// where its broker listens.
const EnvSocket = "BATON_BROKER"

// Peer is the connecting process, as the kernel reports it, and its
// connection (for a check that asks the kernel more of it).
type Peer struct {
	PID  int
	UID  int
	Conn syscall.Conn
	// Relayed is what a runner's relay said of the call it carried (nil:
	// a call from this machine).
	Relayed *Relayed
}

// Relayed heads each call a runner's relay carries to the launcher over
// the forwarded socket: the relay's proof (the token the launcher gave it
// on the ssh session's stdin, which no process of the agent can read)
// and what it knows of the calling process there. Kind is "agent" (the
// agent's own call), "ran" (code the agent ran), "outside" (a process
// outside the agent, Reason saying why) or "egress" (no call of the
// agent's: a connection the runner's egress proxy refused).
type Relayed struct {
	Token  string `json:"token"`
	Kind   string `json:"kind"`
	Reason string `json:"reason,omitempty"`
	PID    int    `json:"pid,omitempty"`
	// Host and Method are what the egress proxy refused (kind "egress").
	Host   string `json:"host,omitempty"`
	Method string `json:"method,omitempty"`
}

// The kinds of a relayed call.
const (
	RelayAgent   = "agent"
	RelayRan     = "ran"
	RelayOutside = "outside"
	RelayEgress  = "egress"
)

// ErrNotRelayed refuses a connection to a forwarded socket that did not
// come through the runner's relay.
var ErrNotRelayed = errors.New("the call reached the session's forwarded socket without going through baton's relay on the runner, so nothing vouches for the process that made it")

// Handler answers a call from a peer the server accepted; Refuse answers
// one it did not (a malformed request, or a peer the check refused) and
// is told why.
type Handler interface {
	Handle(ctx context.Context, p Peer, c app.Call) app.Reply
	Refuse(p Peer, why error) app.Reply
}

// Server serves one socket.
type Server struct {
	ln    *net.UnixListener
	h     Handler
	check func(Peer) error
	relay string // the token a relayed call must carry ("": calls are not relayed)
	wg    sync.WaitGroup
}

// Listen serves h on a new socket at path; check (optional) accepts or
// refuses each connecting process before its request is read.
func Listen(path string, h Handler, check func(Peer) error) (*Server, error) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(true)
	return &Server{ln: ln, h: h, check: check}, nil
}

// RequireRelay makes every call to s one a runner's relay carries, with
// token in its head (before Serve).
func (s *Server) RequireRelay(token string) { s.relay = token }

// Serve answers connections until ctx ends or Close; each connection is
// answered in its own goroutine.
func (s *Server) Serve(ctx context.Context) {
	go func() { <-ctx.Done(); _ = s.ln.Close() }()
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			s.answer(ctx, c)
		}()
	}
}

// Close stops accepting and waits for the calls under way.
func (s *Server) Close() {
	_ = s.ln.Close()
	s.wg.Wait()
}

func (s *Server) answer(ctx context.Context, c *net.UnixConn) {
	p, err := peerOf(c)
	if err == nil && s.check != nil {
		err = s.check(p)
	}
	var resp app.Reply
	switch {
	case err != nil:
		resp = s.h.Refuse(p, err)
	default:
		_ = c.SetReadDeadline(time.Now().Add(ReadTimeout))
		var r app.Call
		if err := s.readRelayed(c, &p); err != nil {
			resp = s.h.Refuse(p, err)
		} else if err := readFrame(c, MaxRequest, &r); err != nil {
			resp = s.h.Refuse(p, err)
		} else {
			resp = s.h.Handle(ctx, p, r)
		}
	}
	_ = c.SetWriteDeadline(time.Now().Add(ReadTimeout))
	_ = writeFrame(c, resp)
}

// readRelayed reads the head of a relayed call into p, and refuses one
// without the relay's token.
func (s *Server) readRelayed(c net.Conn, p *Peer) error {
	if s.relay == "" {
		return nil
	}
	var h Relayed
	if err := readFrame(c, MaxRequest, &h); err != nil || subtle.ConstantTimeCompare([]byte(h.Token), []byte(s.relay)) != 1 {
		return ErrNotRelayed
	}
	switch h.Kind {
	case RelayAgent, RelayRan, RelayOutside, RelayEgress:
	default:
		return ErrNotRelayed
	}
	h.Token = ""
	p.Relayed = &h
	return nil
}

// WriteRelayed sends the head of a relayed call on c; the call follows.
func WriteRelayed(c net.Conn, h Relayed) error { return writeFrame(c, h) }

// Call sends c to the broker at path and waits for its answer.
func Call(path string, r app.Call) (app.Reply, error) {
	var resp app.Reply
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return resp, err
	}
	defer c.Close()
	// a refused caller's request may not be read: its answer still is
	werr := writeFrame(c, r)
	if err = readFrame(c, MaxResponse, &resp); err != nil && werr != nil {
		return resp, werr
	}
	return resp, err
}

// writeFrame sends v as a 4-byte big-endian length and its JSON.
func writeFrame(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(b)))
	_, err = w.Write(append(n[:], b...))
	return err
}

// readFrame reads one frame of at most max bytes into v; a field v does
// not know is an error (a request says nothing but its call).
func readFrame(r io.Reader, max int, v any) error {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return fmt.Errorf("reading the request: %w", err)
	}
	size := binary.BigEndian.Uint32(n[:])
	if int64(size) > int64(max) {
		return fmt.Errorf("the message is %d bytes, over the limit of %d", size, max)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return fmt.Errorf("reading the request: %w", err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("the message is not a broker request: %w", err)
	}
	return nil
}

// peerOf asks the kernel which process is at the other end.
func peerOf(c *net.UnixConn) (Peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return Peer{}, err
	}
	if cerr != nil {
		return Peer{}, cerr
	}
	return Peer{PID: int(cred.Pid), UID: int(cred.Uid), Conn: c}, nil
}

// ErrNotDescendant refuses a peer outside the process tree a socket serves.
var ErrNotDescendant = errors.New("the calling process is not part of the agent this socket serves")

// Descends says whether pid is root or one of its descendants, following
// the parent links in /proc. A process that left the tree (re-parented to
// init or a subreaper) is not a descendant.
func Descends(pid, root int) bool {
	for i := 0; i < 4096 && pid > 1; i++ {
		if pid == root {
			return true
		}
		var ok bool
		if pid, ok = ParentOf(pid); !ok {
			return false
		}
	}
	return pid == root
}

// ParentOf is pid's parent, as /proc says (ok false: no such process).
func ParentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// pid (comm) state ppid …: comm may hold spaces and parentheses
	s := string(b)
	j := strings.LastIndexByte(s, ')')
	if j < 0 {
		return 0, false
	}
	f := strings.Fields(s[j+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// CallRelayed sends c to the broker at path as a runner's relay does,
// with h at its head, and waits for its answer.
func CallRelayed(path string, h Relayed, r app.Call) (app.Reply, error) {
	var resp app.Reply
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return resp, err
	}
	defer c.Close()
	if err := writeFrame(c, h); err != nil {
		return resp, err
	}
	if err := writeFrame(c, r); err != nil {
		return resp, err
	}
	return resp, readFrame(c, MaxResponse, &resp)
}
