package httpapi

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Defaults of ConnLimits fields left zero.
const (
	DefaultMaxConns        = 4096
	DefaultMaxConnsPerAddr = 256
)

// ConnLimits caps the connections a listener keeps open.
type ConnLimits struct {
	// Max caps the open connections in all. Default DefaultMaxConns;
	// negative: no cap.
	Max int
	// PerAddr caps the open connections from one client: an IPv4 address
	// or an IPv6 /64.
	// Default DefaultMaxConnsPerAddr; negative: no cap. Behind a reverse
	// proxy every connection comes from the proxy: cap there instead.
	PerAddr int
}

// refusal is what a connection over a cap reads before it is closed.
const refusal = "HTTP/1.1 503 Service Unavailable\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s"

// LimitListener returns a listener that keeps at most lim.Max connections
// open, and at most lim.PerAddr from one IP address. A connection over a
// cap is accepted, answered "503 Service Unavailable" with Retry-After
// and closed at once, so that it neither waits in the kernel's backlog
// nor costs more than a moment's file descriptor.
func LimitListener(ln net.Listener, lim ConnLimits) net.Listener {
	if lim.Max == 0 {
		lim.Max = DefaultMaxConns
	}
	if lim.PerAddr == 0 {
		lim.PerAddr = DefaultMaxConnsPerAddr
	}
	return &limitListener{Listener: ln, lim: lim, byAddr: make(map[string]int)}
}

type limitListener struct {
	net.Listener
	lim ConnLimits

	mu     sync.Mutex
	open   int
	byAddr map[string]int
}

// Accept returns the next connection within the caps, refusing those
// over them.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := hostOf(c.RemoteAddr())
		if why := l.admit(addr); why != "" {
			refuse(c, why)
			continue
		}
		return &limitConn{Conn: c, l: l, addr: addr}, nil
	}
}

// admit counts a connection from addr in, or says which cap it is over.
func (l *limitListener) admit(addr string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.lim.Max > 0 && l.open >= l.lim.Max:
		return "too many connections to this server; retry later\n"
	case l.lim.PerAddr > 0 && l.byAddr[addr] >= l.lim.PerAddr:
		return "too many connections from your address; close some or retry later\n"
	}
	l.open++
	l.byAddr[addr]++
	return ""
}

func (l *limitListener) release(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byAddr[addr]--; l.byAddr[addr] <= 0 {
		delete(l.byAddr, addr)
	}
}

// refuse answers a connection over a cap and closes it. The write goes
// into an empty socket buffer; its deadline only guards the accept loop.
func refuse(c net.Conn, why string) {
	_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	_, _ = fmt.Fprintf(c, refusal, len(why), why)
	_ = c.Close()
}

// limitConn gives its place back when closed (once).
type limitConn struct {
	net.Conn
	l    *limitListener
	addr string
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.addr) })
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
