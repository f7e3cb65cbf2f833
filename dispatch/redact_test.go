package dispatch_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// The secret parts of an endpoint's URL: a path and a query token.
const (
	secretPath  = "/hooks/s3cr3t-path-4f9a1c"
	secretToken = "tok-9b27e1d0c4a8f3"
)

// TestDispatch_ErrorsHideURL: however a call fails (connection refused,
// timeout, 5xx echoing the request, a redirect to the same path, a body
// that is not JSON, a connection dropped mid-answer), the stored job
// error and every attempt's error name at most the endpoint's scheme and
// host, never its path or query.
func TestDispatch_ErrorsHideURL(t *testing.T) {
	t.Parallel()
	echo := func(w http.ResponseWriter, r *http.Request, _ call) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("cannot POST " + r.URL.String() + " (" + r.URL.Query().Get("token") + ")"))
	}
	redirect := func(w http.ResponseWriter, r *http.Request, _ call) {
		http.Redirect(w, r, "http://"+r.Host+r.URL.String()+"&again=1", http.StatusFound)
	}
	drop := func(w http.ResponseWriter, _ *http.Request, _ call) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}
	slow := func(_ http.ResponseWriter, r *http.Request, _ call) { <-r.Context().Done() }
	cases := []struct {
		name    string
		answer  func(http.ResponseWriter, *http.Request, call)
		timeout time.Duration
		refused bool
		tries   int // attempts: 1 when the failure is permanent
	}{
		{name: "refused", refused: true, tries: 2},
		{name: "timeout", answer: slow, timeout: 100 * time.Millisecond, tries: 2},
		{name: "500 echo", answer: echo, tries: 2},
		{name: "redirect", answer: redirect, tries: 1},
		{name: "not JSON", answer: status(http.StatusOK, "<html>"+secretPath+"?token="+secretToken), tries: 2},
		{name: "dropped", answer: drop, tries: 2},
		{name: "404", answer: status(http.StatusNotFound, "404 page not found: "+secretPath), tries: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := ""
			if tc.refused {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				base = "http://" + l.Addr().String()
				_ = l.Close()
			} else {
				base = newReceiver(t, tc.answer).srv.URL
			}
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 5 * time.Second
			}
			e := setup(t, base+secretPath+"?token="+secretToken, timeout, fixedBackoff(10*time.Millisecond))
			id := e.enqueue(t, 2)
			j := e.waitFinished(t, id)
			if j.State != queue.StateFailed {
				t.Fatalf("state %s (%q), want failed", j.State, j.ErrorMessage)
			}
			atts, err := e.client.Attempts(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if len(atts) != tc.tries {
				t.Errorf("%d attempts, want %d", len(atts), tc.tries)
			}
			msgs := []string{j.ErrorMessage}
			for _, a := range atts {
				msgs = append(msgs, a.Error)
			}
			for _, m := range msgs {
				for _, secret := range []string{"s3cr3t", secretToken, "token="} {
					if strings.Contains(m, secret) {
						t.Errorf("stored error %q contains %q", m, secret)
					}
				}
			}
			t.Logf("stored error: %s", j.ErrorMessage)
			if j.ErrorMessage == "" {
				t.Error("no error stored")
			}
		})
	}
}
