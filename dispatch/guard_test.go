package dispatch_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/docketq/docket/dispatch"
)

// publicAddr stands for a public address: the guard lets it through, and
// the dial recorder refuses to connect to it, so no traffic leaves
// loopback.
const publicAddr = "198.51.100.7"

var errNoTraffic = errors.New("test: no connection leaves loopback")

// dialRecorder is the Control that runs after the guard passed an
// address, just before connect(2): it records every connect and lets only
// loopback ones happen.
type dialRecorder struct {
	mu    sync.Mutex
	dials []string
}

func (r *dialRecorder) control(_, address string, _ syscall.RawConn) error {
	r.mu.Lock()
	r.dials = append(r.dials, address)
	r.mu.Unlock()
	if ap, err := netip.ParseAddrPort(address); err == nil && ap.Addr().Unmap().IsLoopback() {
		return nil
	}
	return errNoTraffic
}

func (r *dialRecorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.dials...)
}

// stubResolver answers from a table; a list of answers is used in turn
// (the last one repeats), as a rebinding name server does.
type stubResolver struct {
	mu      sync.Mutex
	answers map[string][]string
	asked   map[string]int
}

func (s *stubResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	as, ok := s.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	n := min(s.asked[host], len(as)-1)
	s.asked[host]++
	var out []net.IPAddr
	for a := range strings.SplitSeq(as[n], ",") {
		out = append(out, net.IPAddr{IP: net.ParseIP(a)})
	}
	return out, nil
}

func newStub() *stubResolver {
	return &stubResolver{asked: map[string]int{}, answers: map[string][]string{
		"localhost":        {"127.0.0.1,::1"},
		"internal.example": {"127.0.0.1"},
		"rebind.example":   {publicAddr, "127.0.0.1"},
		// The numeric spellings of 127.0.0.1 that getaddrinfo (inet_aton)
		// reads as an address.
		"2130706433":   {"127.0.0.1"},
		"0x7f.1":       {"127.0.0.1"},
		"017700000001": {"127.0.0.1"},
	}}
}

// TestGuard_SSRFTable: every callback URL of the table
// is refused, those that reach a connect inside net.Dialer.Control, and
// the dial recorder shows no connect to a blocked address.
func TestGuard_SSRFTable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url       string
		inControl bool // refused at connect time (else by the scheme)
	}{
		{"http://127.0.0.1", true},
		{"http://localhost", true},
		{"http://[::1]", true},
		{"http://0.0.0.0", true},
		{"http://169.254.169.254/latest/meta-data/", true},
		{"http://[::ffff:127.0.0.1]", true},
		{"http://2130706433", true},
		{"http://0x7f.1", true},
		{"http://017700000001", true},
		{"http://10.0.0.1", true},
		{"http://172.16.0.1", true},
		{"http://192.168.1.1", true},
		{"http://100.64.0.1", true},
		{"http://[fd00::1]", true},
		{"http://[fe80::1%25eth0]", true},
		{"http://public@127.0.0.1", true},
		{"http://internal.example/hook", true},
		{"http://" + publicAddr + ":22/", true}, // a port not allowed
		{"http://[64:ff9b::7f00:1]", true},      // NAT64 of 127.0.0.1
		{"gopher://" + publicAddr + "/", false},
		{"file:///etc/passwd", false},
		{"ftp://" + publicAddr + "/", false},
	} {
		t.Run(tc.url, func(t *testing.T) {
			t.Parallel()
			rec := &dialRecorder{}
			g := &dispatch.Guard{Resolver: newStub(), Control: rec.control}
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, tc.url, http.NoBody)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := g.Client().Do(req)
			if err == nil {
				_ = resp.Body.Close()
				t.Fatalf("%s: answered %d, want refused", tc.url, resp.StatusCode)
			}
			var opErr *net.OpError
			switch {
			case tc.inControl && (!errors.Is(err, dispatch.ErrBlocked) || !errors.As(err, &opErr) || opErr.Op != "dial"):
				t.Errorf("%s: %v, want ErrBlocked from the dial", tc.url, err)
			case !tc.inControl && !strings.Contains(err.Error(), "unsupported protocol scheme"):
				t.Errorf("%s: %v, want the scheme refused", tc.url, err)
			}
			if d := rec.get(); len(d) > 0 {
				t.Errorf("%s: connects %v, want none", tc.url, d)
			}
			if _, err := dispatch.CheckURL(tc.url); tc.inControl == false && err == nil {
				t.Errorf("CheckURL(%s) passed, want the scheme refused", tc.url)
			}
		})
	}
}

// TestCheckURL: what the configuration refuses before any call.
func TestCheckURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://hooks.example.com/docket", true},
		{"http://127.0.0.1:8080/x", true}, // refused at connect unless allow-listed
		{"http://2130706433", false},
		{"http://0x7f.1", false},
		{"http://017700000001", false},
		{"http://1.2.3", false},
		{"gopher://example.com", false},
		{"file:///etc/passwd", false},
		{"ftp://example.com", false},
		{"http://", false},
		{"http://example.com:0/", false},
	} {
		if _, err := dispatch.CheckURL(tc.url); (err == nil) != tc.ok {
			t.Errorf("CheckURL(%q) = %v, want ok %v", tc.url, err, tc.ok)
		}
	}
}

// TestGuard_Rebinding: a name whose first answer is public and second is
// loopback is checked at each connect, so the second is refused.
func TestGuard_Rebinding(t *testing.T) {
	t.Parallel()
	rec := &dialRecorder{}
	g := &dispatch.Guard{Resolver: newStub(), Control: rec.control}
	c := g.Client()
	for i, want := range []error{errNoTraffic, dispatch.ErrBlocked} {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://rebind.example/hook", http.NoBody)
		resp, err := c.Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		if !errors.Is(err, want) {
			t.Fatalf("call %d: %v, want %v", i+1, err, want)
		}
	}
	if d := rec.get(); len(d) != 1 || d[0] != publicAddr+":80" {
		t.Fatalf("connects %v, want only the public answer", d)
	}
}

// TestGuard_Redirect: a loopback receiver, allow-listed for the test, is
// reached; its 302 to an internal path is returned as it is, never
// followed.
func TestGuard_Redirect(t *testing.T) {
	t.Parallel()
	var internal atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/internal", func(http.ResponseWriter, *http.Request) { internal.Add(1) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) })
	mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srv.URL+"/internal", http.StatusFound)
	})
	rec := &dialRecorder{}
	g := &dispatch.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Control: rec.control}
	for path, want := range map[string]int{"/hook": http.StatusFound, "/ok": http.StatusOK} {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+path, http.NoBody)
		resp, err := g.Client().Do(req)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	if n := internal.Load(); n != 0 {
		t.Errorf("the redirect was followed %d times", n)
	}
	// Without the allow-list the same receiver is refused.
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/ok", http.NoBody)
	resp, err := (&dispatch.Guard{}).Client().Do(req)
	if err == nil {
		_ = resp.Body.Close()
	}
	if !errors.Is(err, dispatch.ErrBlocked) {
		t.Errorf("loopback without the allow-list: %v, want ErrBlocked", err)
	}
}
