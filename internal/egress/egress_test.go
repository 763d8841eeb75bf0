package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAllowed(t *testing.T) {
	pats := []string{"api.anthropic.com", "*.npmjs.org", "proxy.golang.org:8443", "127.0.0.1:9000"}
	tests := []struct {
		host string
		want bool
	}{
		{"api.anthropic.com:443", true},
		{"API.Anthropic.COM.:443", true},
		{"api.anthropic.com:80", true},
		{"api.anthropic.com", true},
		{"api.anthropic.com:22", false},
		{"evil-api.anthropic.com:443", false},
		{"anthropic.com:443", false},
		{"registry.npmjs.org:443", true},
		{"npmjs.org:443", false},
		{"a.b.npmjs.org:443", true},
		{"npmjs.org.evil.com:443", false},
		{"proxy.golang.org:443", false},
		{"proxy.golang.org:8443", true},
		{"127.0.0.1:9000", true},
		{"127.0.0.1:9001", false},
		{"localhost:9000", false},
		{"", false},
		{":443", false},
	}
	for _, tc := range tests {
		if got := Allowed(pats, tc.host); got != tc.want {
			t.Errorf("Allowed(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
}

func TestLoopbackTargets(t *testing.T) {
	env := []string{
		"ANTHROPIC_BASE_URL=http://127.0.0.1:8080",
		"OPENAI_BASE_URL=http://localhost:9090/v1",
		"OTHER_BASE_URL=https://api.example.com:443",
		"NO_PORT_BASE_URL=http://127.0.0.1/",
		"X_API_BASE=http://[::1]:7070",
		"PATH=/usr/bin",
		"DUP_BASE_URL=http://127.0.0.1:8080/x",
	}
	want := []string{"127.0.0.1:8080", "127.0.0.1:9090", "127.0.0.1:7070"}
	if got := LoopbackTargets(env); !slices.Equal(got, want) {
		t.Errorf("LoopbackTargets = %v, want %v", got, want)
	}
}

// proxyOn serves a proxy allowing allow on a unix socket and returns the
// socket and the refusals it reported.
func proxyOn(t *testing.T, allow []string) (string, func() []Refusal) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "egress")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var refused []Refusal
	p := &Proxy{Allow: allow, Refused: func(r Refusal) { mu.Lock(); refused = append(refused, r); mu.Unlock() }}
	go p.Serve(ln)
	t.Cleanup(func() { p.Close() })
	return sock, func() []Refusal { mu.Lock(); defer mu.Unlock(); return slices.Clone(refused) }
}

// upstream is a plain HTTP server on loopback answering name.
func upstream(t *testing.T, name string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "%s %s", name, r.URL.Path) }))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// viaForwarder runs the forwarder on free loopback ports for the proxy at
// sock and returns the proxy's port and the forwarded target's port.
func viaForwarder(t *testing.T, sock, target string) (proxyPort, targetPort int) {
	t.Helper()
	ports := make([]int, 2)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- Serve(ctx, sock, []Forward{{Port: ports[0]}, {Port: ports[1], Target: target}}, func() { close(ready) })
	}()
	select {
	case <-ready:
	case err := <-errc:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("the forwarder did not listen")
	}
	t.Cleanup(cancel)
	return ports[0], ports[1]
}

func TestProxyThroughForwarder(t *testing.T) {
	model, other := upstream(t, "model"), upstream(t, "other")
	sock, refused := proxyOn(t, []string{model})
	pp, tp := viaForwarder(t, sock, model)

	// a forwarded port reaches its target
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/v1/messages", tp))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "model /v1/messages" {
		t.Errorf("forwarded port: %q", body)
	}

	proxyURL, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", pp))
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}, Timeout: 10 * time.Second}
	// plain HTTP through the proxy: allowed, then refused
	resp, err = client.Get("http://" + model + "/a")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "model /a" {
		t.Errorf("allowed plain request: %d %q", resp.StatusCode, body)
	}
	for range 2 {
		resp, err = client.Get("http://" + other + "/b")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("refused plain request: %d", resp.StatusCode)
		}
	}
	// CONNECT: allowed, then refused
	c, err := net.Dial("tcp", proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\nGET /tunnel HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", model, model)
	br := bufio.NewReader(c)
	r1, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || r1.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", r1, err)
	}
	r2, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(r2.Body)
	if string(body) != "model /tunnel" {
		t.Errorf("tunnelled request: %q", body)
	}
	c2, err := net.Dial("tcp", proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	fmt.Fprintf(c2, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
	r3, err := http.ReadResponse(bufio.NewReader(c2), &http.Request{Method: http.MethodConnect})
	if err != nil || r3.StatusCode != http.StatusForbidden {
		t.Errorf("CONNECT outside the policy: %v %v", r3, err)
	}
	got := refused()
	want := []Refusal{{Host: other, Method: "GET"}, {Host: "example.com:443", Method: "CONNECT"}}
	if !slices.Equal(got, want) {
		t.Errorf("refusals = %v, want %v (each host once)", got, want)
	}
}

func TestForwardedTargetRefusedByPolicy(t *testing.T) {
	other := upstream(t, "other")
	sock, refused := proxyOn(t, nil)
	_, tp := viaForwarder(t, sock, other)
	c := &http.Client{Timeout: 5 * time.Second}
	if resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/", tp)); err == nil {
		resp.Body.Close()
		t.Errorf("a forwarded port outside the policy answered %d", resp.StatusCode)
	}
	if len(refused()) != 1 {
		t.Errorf("refusals: %v", refused())
	}
}

// FuzzAllowed: a pattern's own host (with 443) is allowed by it, a host is
// never allowed by no pattern, and no input panics.
func FuzzAllowed(f *testing.F) {
	for _, s := range []string{"api.anthropic.com", "*.npmjs.org", "127.0.0.1:9000", "[::1]:80", "", ":", "*.", "a:b:c", "HOST.", "[x"} {
		f.Add(s, s+":443")
	}
	f.Fuzz(func(t *testing.T, pattern, host string) {
		if Allowed(nil, host) {
			t.Fatalf("no pattern allows %q", host)
		}
		_ = Allowed([]string{pattern}, host)
		h, p := splitHostPort(pattern)
		if h != "" && p == "" && !strings.HasPrefix(h, "*.") && !strings.ContainsAny(h, ":[]") && !Allowed([]string{pattern}, h+":443") {
			t.Fatalf("%q does not allow its own host %q", pattern, h+":443")
		}
		_ = LoopbackTargets([]string{"A_BASE_URL=" + host})
	})
}
