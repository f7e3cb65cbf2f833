package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// stalledConns is how many connections the attacker holds open: more than
// the server's open-file limit in TestServe_StalledConnections.
const (
	stalledConns = 1500
	serverNoFile = 1024
)

// One client without a key opens more stalled connections than the
// server has file descriptors (half send nothing, half announce a body and
// never send it), all from 127.0.0.2; /healthz and an authenticated request
// from 127.0.0.1 are still answered, and the attacker's connections over
// its per-address cap are refused with 503.
func TestServe_StalledConnections(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildDocket(t)
	cmd := exec.Command("sh", "-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, serverNoFile),
		bin, "serve", "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "DOCKET_DATA_DIR="+t.TempDir(), "DOCKET_LOG_LEVEL=error")
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	srv := readBanner(t, stdout.String, stderr.String)
	host := strings.TrimPrefix(srv.base, "http://")

	attacker := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 5 * time.Second}
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			_ = c.Close()
		}
	})
	for i := range stalledConns {
		c, err := attacker.Dial("tcp", host)
		if err != nil && i == 0 {
			t.Skipf("cannot connect from 127.0.0.2 (Linux routes all of 127/8 to loopback): %v", err)
		}
		if err != nil {
			t.Fatalf("attacker's connection %d: %v", i, err)
		}
		conns = append(conns, c)
		if i%2 == 1 {
			_, _ = fmt.Fprintf(c, "POST /v1/documents HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n")
		}
	}

	client := &http.Client{Timeout: 10 * time.Second}
	for _, path := range []string{"/healthz", "/v1/documents"} {
		req, _ := http.NewRequest(http.MethodGet, srv.base+path, nil)
		req.Header.Set("Authorization", "Bearer "+srv.key)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s while %d stalled connections are open: %v\nstderr:\n%.2000s", path, stalledConns, err, stderr.String())
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d, want 200", path, resp.StatusCode)
		}
	}
	// The last connections were over the attacker's cap: refused at once.
	c := conns[len(conns)-2]
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("a connection over the per-address cap: %v, want a 503", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a connection over the per-address cap: %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}
