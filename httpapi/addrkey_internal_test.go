package httpapi

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestAddrKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"192.0.2.7":                   "192.0.2.7",
		"::ffff:192.0.2.7":            "192.0.2.7",
		"2001:db8:1:2:3:4:5:6":        "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff:ffff::1":   "2001:db8:1:2::/64",
		"2001:db8:1:3::1":             "2001:db8:1:3::/64",
		"fe80::1%eth0":                "fe80::/64",
		"::1":                         "::/64",
		"not an address":              "not an address",
		"2001:db8:1:2:3:4:5:6:7:8:9:": "2001:db8:1:2:3:4:5:6:7:8:9:",
	} {
		if got := addrKey(in); got != want {
			t.Errorf("addrKey(%q) = %q, want %q", in, got, want)
		}
	}
	// Failed authentication is counted per client too: a forger rotating
	// through the addresses of its /64 is one client.
	a := clientAddr(&http.Request{RemoteAddr: "[2001:db8:1:2::5]:443"})
	b := clientAddr(&http.Request{RemoteAddr: "[2001:db8:1:2:9::9]:8443"})
	if a != b || a != "2001:db8:1:2::/64" {
		t.Errorf("clientAddr of two addresses of one /64: %q and %q, want both 2001:db8:1:2::/64", a, b)
	}
}

// fakeListener hands out the connections queued on it; each reports the
// remote address it was made with.
type fakeListener struct{ conns chan net.Conn }

func (l fakeListener) Accept() (net.Conn, error) {
	c, ok := <-l.conns
	if !ok {
		return nil, net.ErrClosed
	}
	return c, nil
}
func (fakeListener) Close() error   { return nil }
func (fakeListener) Addr() net.Addr { return &net.TCPAddr{} }

type addrConn struct {
	net.Conn
	remote net.Addr
}

func (c addrConn) RemoteAddr() net.Addr { return c.remote }

// A client holding a whole IPv6 /64 gets one per-address cap, not one per
// address it picks; another /64 has its own.
func TestLimitListener_IPv6PrefixSharesCap(t *testing.T) {
	t.Parallel()
	fl := fakeListener{conns: make(chan net.Conn, 4)}
	ln := LimitListener(fl, ConnLimits{Max: 100, PerAddr: 1})
	peer := func(ip string) net.Conn {
		server, client := net.Pipe()
		t.Cleanup(func() { _ = server.Close(); _ = client.Close() })
		fl.conns <- addrConn{Conn: server, remote: &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000}}
		return client
	}

	peer("2001:db8:1:2::1")
	if c, err := ln.Accept(); err != nil || hostOf(c.RemoteAddr()) != "2001:db8:1:2::/64" {
		t.Fatalf("first connection: %v, %v", c, err)
	}
	refused := peer("2001:db8:1:2:aaaa:bbbb:cccc:dddd") // same /64: over the cap
	other := peer("2001:db8:1:3::1")                    // another /64
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(refused)
		got <- string(b)
	}()
	c, err := ln.Accept() // refuses the second, admits the third
	if err != nil {
		t.Fatal(err)
	}
	if want := "2001:db8:1:3::/64"; hostOf(c.RemoteAddr()) != want {
		t.Fatalf("admitted %s, want the connection from %s", c.RemoteAddr(), want)
	}
	if msg := <-got; !strings.Contains(msg, "503 Service Unavailable") || !strings.Contains(msg, "from your address") {
		t.Fatalf("the second address of the /64 read %q, want a 503 over the per-address cap", msg)
	}
	_ = other
}
