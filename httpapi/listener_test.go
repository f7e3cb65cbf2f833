package httpapi_test

import (
	"bufio"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/docketq/docket/httpapi"
)

// Connections over a cap are answered 503 with Retry-After and closed;
// closing an admitted connection gives its place back.
func TestLimitListener(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		lim  httpapi.ConnLimits
	}{
		{"per address", httpapi.ConnLimits{Max: 100, PerAddr: 2}},
		{"overall", httpapi.ConnLimits{Max: 2, PerAddr: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}), ReadHeaderTimeout: time.Minute}
			go func() { _ = srv.Serve(httpapi.LimitListener(ln, tc.lim)) }()
			t.Cleanup(func() { _ = srv.Close() })

			a := dial(t, ln)
			dial(t, ln)
			wantRefused(t, dial(t, ln))
			_ = a.Close()
			// The place freed is taken again (the server notices the close
			// when its read fails: poll).
			deadline := time.Now().Add(10 * time.Second)
			for {
				c := dial(t, ln)
				if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err == nil {
					_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
					resp, err := http.ReadResponse(bufio.NewReader(c), nil)
					if err == nil {
						_ = resp.Body.Close()
						if resp.StatusCode == http.StatusOK {
							break
						}
					}
				}
				if time.Now().After(deadline) {
					t.Fatal("the place of a closed connection was not given back")
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

func dial(t *testing.T, ln net.Listener) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func wantRefused(t *testing.T, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("a connection over the cap: %v, want 503", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a connection over the cap: %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}
