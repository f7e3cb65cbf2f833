package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The ops listener caps its connections, in all and per client address,
// and closes idle ones: clients that open connections and leave them idle
// cannot use up the process's file descriptors. A request that announces a
// body is answered at once and its connection closed (no ops route reads
// a body).
func TestWorker_OpsListenerLimits(t *testing.T) {
	t.Parallel()
	base := startOpsWorker(t, map[string]string{
		"DOCKET_OPS_MAX_CONNS": "3", "DOCKET_OPS_MAX_CONNS_PER_ADDR": "2",
	})
	host := strings.TrimPrefix(base, "http://")
	dial := func(ip byte) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, ip)}, Timeout: 5 * time.Second}
		c, err := d.Dial("tcp", host)
		if err != nil {
			t.Skipf("cannot connect from 127.0.0.%d: %v", ip, err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	// Two idle connections from 127.0.0.2, each answered once and kept
	// alive: a third from there is over the per-address cap.
	for range 2 {
		if status, _ := roundTrip(t, dial(2), "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); status != http.StatusOK {
			t.Fatalf("GET /healthz: %d", status)
		}
	}
	if status, closed := roundTrip(t, dial(2), "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); status != http.StatusServiceUnavailable || !closed {
		t.Errorf("a third connection from one address: %d (closed %v), want 503 and closed", status, closed)
	}
	if status, closed := roundTrip(t, dial(3), "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n"); status != http.StatusMethodNotAllowed || !closed {
		t.Errorf("POST /metrics with a body never sent: %d (closed %v), want 405 and closed", status, closed)
	}
	// The POST's connection is gone; a third held one reaches the cap in all.
	if status, _ := roundTrip(t, dial(4), "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); status != http.StatusOK {
		t.Fatalf("a connection from another address: %d, want 200", status)
	}
	if status, closed := roundTrip(t, dial(5), "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); status != http.StatusServiceUnavailable || !closed {
		t.Errorf("a connection over the cap in all: %d (closed %v), want 503 and closed", status, closed)
	}
}

// The ops listener closes a connection that sends no request within its
// read-header timeout, and one kept alive and idle past its idle timeout.
func TestWorker_OpsListenerTimeouts(t *testing.T) {
	t.Parallel()
	base := startOpsWorker(t, map[string]string{
		"DOCKET_OPS_READ_HEADER_TIMEOUT": "200ms", "DOCKET_OPS_IDLE_TIMEOUT": "200ms",
	})
	host := strings.TrimPrefix(base, "http://")
	silent, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	idle, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if status, _ := roundTrip(t, idle, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); status != http.StatusOK {
		t.Fatalf("GET /healthz: %d", status)
	}
	for name, c := range map[string]net.Conn{"silent": silent, "idle": idle} {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Errorf("%s connection: read %v, want the server to close it", name, err)
		}
	}
}

// startOpsWorker runs `docket worker --ops-listen` with the environment vars
// until the test ends and returns the ops listener's base URL.
func startOpsWorker(t *testing.T, vars map[string]string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	vars["DOCKET_DATA_DIR"] = t.TempDir()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"worker", "--ops-listen", "127.0.0.1:0"}, env(vars), &stdout, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v\n%s", err, stderr.String())
		}
	})
	return opsBase(t, stdout.String, stderr.String)
}

// roundTrip sends request on c and returns the answer's status and
// whether the server closed the connection after it.
func roundTrip(t *testing.T, c net.Conn, request string) (status int, closed bool) {
	t.Helper()
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer within 5 s: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.Close {
		// Closed: end of file, or a reset when the server closed the
		// connection with the request unread (a refusal over a cap).
		_, err = br.ReadByte()
		var ne net.Error
		return resp.StatusCode, err != nil && (!errors.As(err, &ne) || !ne.Timeout())
	}
	_ = c.SetReadDeadline(time.Time{})
	return resp.StatusCode, false
}
