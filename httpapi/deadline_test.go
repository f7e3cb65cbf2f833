package httpapi

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A request that announces a body and never sends it is answered, on every
// kind of route, instead of holding its connection open: routes that take no
// body answer at once and close; routes that read one give up after
// Config.BodyTimeout (408 for a JSON body that does not come).
func TestServer_UnsentBody(t *testing.T) {
	t.Parallel()
	e := newTenantEnv(t, func(c *Config) {
		c.AdminKey = "an-admin-key-for-the-unsent-body-test"
		c.BodyTimeout = 200 * time.Millisecond
	})
	tn := e.newTenant(t, "stalled", 0)
	host := strings.TrimPrefix(e.url, "http://")
	for _, tc := range []struct {
		name, request string
		want          int
	}{
		{"healthz announced", "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n", http.StatusOK},
		{"healthz chunked", "GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", http.StatusOK},
		{"unauthenticated", "GET /v1/documents HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n", http.StatusUnauthorized},
		{"authenticated", "GET /v1/documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + tn.key + "\r\nContent-Length: 1000\r\n\r\n", http.StatusOK},
		{"admin json", "POST /v1/admin/tenants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer an-admin-key-for-the-unsent-body-test\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", http.StatusRequestTimeout},
		{"tenant post unread", "POST /v1/jobs/1/cancel HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + tn.key + "\r\nContent-Length: 1000\r\n\r\n", http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := stalledStatus(t, host, tc.request); got != tc.want {
				t.Errorf("status %d, want %d", got, tc.want)
			}
		})
	}
}

// stalledStatus sends request (headers and at most a part of the body
// they announce) and returns the status of the answer, failing the test
// when none comes within 10 s.
func stalledStatus(t *testing.T, host, request string) int {
	t.Helper()
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(request)); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a request whose body never comes: %v", err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// A request that announces a body on a route or method the API does not
// serve is answered 404 or 405 at once and its connection closed, however
// long Config.BodyTimeout is: no handler will read that body.
func TestServer_UnmatchedBody(t *testing.T) {
	t.Parallel()
	e := newTenantEnv(t, func(c *Config) { c.BodyTimeout = time.Hour })
	host := strings.TrimPrefix(e.url, "http://")
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{http.MethodPost, "/healthz", http.StatusMethodNotAllowed},
		{http.MethodPut, "/v1/documents", http.StatusMethodNotAllowed},
		{http.MethodPost, "/ui/admin.html", http.StatusNotFound},
		{http.MethodPost, "/nonexistent", http.StatusNotFound},
		{http.MethodPatch, "/v1/jobs/1", http.StatusMethodNotAllowed},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			t.Parallel()
			for _, framing := range []string{"Content-Length: 200000", "Transfer-Encoding: chunked"} {
				c, err := net.Dial("tcp", host)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if _, err := c.Write([]byte(tc.method + " " + tc.path + " HTTP/1.1\r\nHost: x\r\n" + framing + "\r\n\r\n")); err != nil {
					t.Fatal(err)
				}
				_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
				br := bufio.NewReader(c)
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("%s: no answer: %v", framing, err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != tc.want || !resp.Close {
					t.Errorf("%s: %d (close %v), want %d and the connection closed", framing, resp.StatusCode, resp.Close, tc.want)
				}
				if _, err := br.ReadByte(); err == nil {
					t.Errorf("%s: the connection stays open after the answer", framing)
				}
			}
		})
	}
}
