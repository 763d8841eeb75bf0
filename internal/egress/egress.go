// Package egress is the way out of a confined agent's network: the agent
// runs in a network namespace of its own, where only loopback exists, and
// its connections leave through a proxy the launcher runs, which lets
// through the hosts a policy names and refuses, and reports, every other.
//
// Inside the namespace a forwarder (Forward) listens on loopback and hands
// each connection to the proxy's unix socket, which the namespace can
// reach because it is a file: the agent's HTTP clients find it through
// HTTPS_PROXY and HTTP_PROXY, and a model API on the launcher's loopback
// (a base URL such as http://127.0.0.1:8080) through a forwarded port of
// the same number. The proxy (Proxy) speaks HTTP CONNECT, which every
// HTTPS client uses through a proxy, and forwards plain HTTP requests in
// absolute form; it decides by host name, so the agent needs no DNS.
package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ModelHosts are the hosts each agent CLI preset needs for its model API
// and its sign-in.
var ModelHosts = map[string][]string{
	"claude":             {"api.anthropic.com", "*.anthropic.com", "claude.ai", "*.claude.ai"},
	"claude-predecessor": {"api.anthropic.com", "*.anthropic.com", "claude.ai", "*.claude.ai"},
	"codex":              {"api.openai.com", "*.openai.com", "chatgpt.com", "*.chatgpt.com"},
}

// Allowed says whether host:port (or a bare host) matches one of the
// patterns: a host name ("api.anthropic.com"), a subdomain wildcard
// ("*.npmjs.org", which is not npmjs.org itself), either with a port
// (":443"; without one, 443 and 80), or an address with its port
// ("127.0.0.1:8080"). Names compare case-insensitively, with no trailing
// dot.
func Allowed(patterns []string, hostport string) bool {
	host, port := splitHostPort(hostport)
	if host == "" {
		return false
	}
	for _, p := range patterns {
		ph, pp := splitHostPort(p)
		if pp == "" {
			if port != "" && port != "443" && port != "80" {
				continue
			}
		} else if pp != port {
			continue
		}
		if ph == host || strings.HasPrefix(ph, "*.") && strings.HasSuffix(host, ph[1:]) {
			return true
		}
	}
	return false
}

// splitHostPort splits "host:port", "[v6]:port" or a bare host, lowering
// the host and dropping trailing dots. A host with a character no host
// name or address has comes back empty, so it matches nothing.
func splitHostPort(s string) (host, port string) {
	s = strings.TrimSpace(s)
	if h, p, err := net.SplitHostPort(s); err == nil {
		host, port = h, p
	} else {
		host = strings.Trim(s, "[]")
	}
	host = strings.TrimRight(strings.ToLower(host), ".")
	if strings.ContainsFunc(host, badHostRune) {
		return "", port
	}
	return host, port
}

// badHostRune reports a rune outside host names, IP addresses (with an
// IPv6 zone) and a pattern's leading "*.".
func badHostRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("-._:%*", r))
}

// Refusal is a connection the proxy refused.
type Refusal struct {
	Host   string // host:port asked for
	Method string // CONNECT, or the plain request's method
}

// Proxy serves HTTP CONNECT and absolute-form HTTP requests for the hosts
// Allow names, on a listener of the caller's.
type Proxy struct {
	Allow []string
	// Refused is called once for each host the proxy refuses (it may be
	// called from several goroutines).
	Refused func(Refusal)
	// Dial connects to an allowed host (net.Dialer's by default).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	mu   sync.Mutex
	seen map[string]bool
	srv  *http.Server
}

// Serve serves ln until Close.
func (p *Proxy) Serve(ln net.Listener) error {
	p.mu.Lock()
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	srv := p.srv
	p.mu.Unlock()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops the proxy and every connection through it.
func (p *Proxy) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.srv == nil {
		return nil
	}
	return p.srv.Close()
}

func (p *Proxy) dial(ctx context.Context, addr string) (net.Conn, error) {
	if p.Dial != nil {
		return p.Dial(ctx, "tcp", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

func (p *Proxy) refuse(w http.ResponseWriter, method, host string) {
	p.mu.Lock()
	first := !p.seen[host]
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	p.seen[host] = true
	p.mu.Unlock()
	if first && p.Refused != nil {
		p.Refused(Refusal{Host: host, Method: method})
	}
	http.Error(w, "baton: "+host+" is outside this session's egress policy", http.StatusForbidden)
}

// ServeHTTP is the proxy: CONNECT tunnels, other methods forwarded.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if r.URL.Host == "" || r.URL.Scheme != "http" {
		http.Error(w, "baton: the egress proxy takes CONNECT and absolute http:// requests", http.StatusBadRequest)
		return
	}
	host := withPort(r.URL.Host, "80")
	if !Allowed(p.Allow, host) {
		p.refuse(w, r.Method, host)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Connection")
	out.Header.Del("Proxy-Authorization")
	tr := &http.Transport{Proxy: nil, DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) { return p.dial(ctx, addr) }}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(out)
	if err != nil {
		http.Error(w, "baton: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	host := withPort(r.Host, "443")
	if !Allowed(p.Allow, host) {
		p.refuse(w, r.Method, host)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	up, err := p.dial(ctx, host)
	cancel()
	if err != nil {
		http.Error(w, "baton: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "baton: cannot tunnel", http.StatusInternalServerError)
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		conn.Close()
		up.Close()
		return
	}
	// bytes the client sent after its request line, already read
	if n := buf.Reader.Buffered(); n > 0 {
		b, _ := buf.Reader.Peek(n)
		if _, err := up.Write(b); err != nil {
			conn.Close()
			up.Close()
			return
		}
	}
	pipe(conn, up)
}

// withPort adds def to a host without a port.
func withPort(host, def string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), def)
}

// pipe copies both ways until either side ends, then closes both.
func pipe(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if c, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = c.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
	a.Close()
	b.Close()
}

// A Forward is a port the forwarder listens on inside the namespace: the
// proxy's own port (Target empty: the client speaks to the proxy), or a
// port whose connections are tunnelled to Target through the proxy (a
// model API on the launcher's loopback).
type Forward struct {
	Port   int    `json:"port"`
	Target string `json:"target,omitempty"`
}

// ProxyPort is the loopback port the proxy is reached on inside an
// agent's network namespace.
const ProxyPort = 3128

// Serve runs the forwarder: it listens on 127.0.0.1 at every forward's
// port and hands each connection to the proxy at sock, until ctx ends. It
// calls ready once every port listens.
func Serve(ctx context.Context, sock string, forwards []Forward, ready func()) error {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for _, f := range forwards {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(f.Port)))
		if err != nil {
			return err
		}
		lns = append(lns, ln)
	}
	if ready != nil {
		ready()
	}
	errc := make(chan error, len(lns))
	for i, ln := range lns {
		go func(ln net.Listener, f Forward) {
			for {
				c, err := ln.Accept()
				if err != nil {
					errc <- err
					return
				}
				go forward(c, sock, f.Target)
			}
		}(ln, forwards[i])
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-errc:
		return err
	}
}

// forward hands c to the proxy at sock; with a target it first asks the
// proxy to tunnel to it.
func forward(c net.Conn, sock, target string) {
	up, err := net.Dial("unix", sock)
	if err != nil {
		c.Close()
		return
	}
	if target != "" {
		if err := tunnel(up, target); err != nil {
			c.Close()
			up.Close()
			return
		}
	}
	pipe(c, up)
}

// tunnel asks the proxy on conn to connect to target.
func tunnel(conn net.Conn, target string) error {
	if _, err := fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target); err != nil {
		return err
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the proxy refused %s: %s", target, resp.Status)
	}
	if br.Buffered() > 0 {
		return errors.New("the proxy sent data before the tunnel opened")
	}
	return nil
}

// LoopbackTargets are the loopback host:port addresses the base URLs in
// env point at (ANTHROPIC_BASE_URL=http://127.0.0.1:8080 and the like): a
// model API the launcher's machine serves on loopback, which the agent's
// namespace reaches through a forwarded port of the same number.
func LoopbackTargets(env []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.HasSuffix(k, "_BASE_URL") && !strings.HasSuffix(k, "_API_BASE") {
			continue
		}
		u, err := url.Parse(v)
		if err != nil || u.Port() == "" {
			continue
		}
		ip := net.ParseIP(u.Hostname())
		if u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
			continue
		}
		hp := net.JoinHostPort("127.0.0.1", u.Port())
		if !seen[hp] {
			seen[hp] = true
			out = append(out, hp)
		}
	}
	return out
}

// Environ is what an agent's environment gets for the proxy inside its
// namespace: both spellings of the proxy variables (clients read either),
// and loopback left direct.
func Environ() []string {
	u := "http://127.0.0.1:" + strconv.Itoa(ProxyPort)
	out := []string{}
	for _, k := range []string{"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "npm_config_https_proxy", "npm_config_proxy"} {
		out = append(out, k+"="+u)
	}
	return append(out, "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1")
}
