package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Requests that announce a body on the API's port and send none are
// answered at once, and their connections closed, on every route that
// reads no body: the dashboard's pages, routes the API does not serve and
// methods a route does not take. (--body-timeout, 10 s by default, is
// longer than the 5 s the test waits.)
func TestServe_UnsentBodies(t *testing.T) {
	t.Parallel()
	srv, _, _, _ := startServe(t, t.TempDir())
	host := strings.TrimPrefix(srv.base, "http://")
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/", http.StatusOK},
		{http.MethodGet, "/ui/admin.html", http.StatusOK},
		{http.MethodPost, "/ui/admin.html", http.StatusNotFound},
		{http.MethodPost, "/healthz", http.StatusMethodNotAllowed},
		{http.MethodPut, "/v1/documents", http.StatusMethodNotAllowed},
		{http.MethodPost, "/nonexistent", http.StatusNotFound},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			t.Parallel()
			status, closed := unsentBody(t, host, tc.method+" "+tc.path+" HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n")
			if status != tc.want || !closed {
				t.Errorf("%d (closed %v), want %d and the connection closed", status, closed, tc.want)
			}
		})
	}
}

// unsentBody sends request, whose body never comes, and returns the status
// of the answer and whether the server then closed the connection.
func unsentBody(t *testing.T, host, request string) (status int, closed bool) {
	t.Helper()
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
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
	_, err = br.ReadByte()
	return resp.StatusCode, errors.Is(err, io.EOF)
}
