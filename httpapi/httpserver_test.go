package httpapi

import (
	"net"
	"net/http"
	"testing"
	"time"
)

// NewHTTPServer bounds the body of every request, whatever its handler:
// a handler that never reads the body of a POST still answers once
// BodyTimeout has passed, and a GET's body is not waited for at all.
func TestNewHTTPServer_BodiesOfAnyHandler(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	srv := NewHTTPServer(mux, ServerConfig{BodyTimeout: 100 * time.Millisecond})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	host := ln.Addr().String()
	for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			req := method + " /hook HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n"
			if got := stalledStatus(t, host, req); got != http.StatusOK {
				t.Errorf("status %d, want 200", got)
			}
		})
	}
}
