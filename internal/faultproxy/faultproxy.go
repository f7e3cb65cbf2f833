// Package faultproxy is a TCP proxy that injects network faults between a
// client and a server on loopback: a fault proxy, used by the chaos tests to partition one worker from
// PostgreSQL.
//
// A Proxy listens on a loopback port and forwards every connection to its
// target. Its Mode, which may change at any time, applies to every
// connection at once:
//
//   - Pass forwards bytes both ways.
//   - Drop is a blackhole: sockets stay open and new connections are
//     accepted, but nothing is forwarded in either direction; what is read
//     meanwhile is held, as the kernel holds unacknowledged segments, and
//     delivered in order once the mode is Pass or Delay again (a connection
//     accepted during Drop dials the target only then).
//   - Delay forwards each chunk read no earlier than Delay after it was
//     read.
//   - Reset closes every connection with a TCP RST (SO_LINGER 0), and
//     resets each new connection as soon as it is accepted.
package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Mode is what the proxy does to traffic.
type Mode int

// The modes.
const (
	Pass Mode = iota
	Drop
	Delay
	Reset
)

func (m Mode) String() string {
	switch m {
	case Pass:
		return "pass"
	case Drop:
		return "drop"
	case Delay:
		return "delay"
	case Reset:
		return "reset"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Config configures a Proxy.
type Config struct {
	// Target is the address connections are forwarded to (host:port).
	Target string
	// Listen is the address to listen on. Default "127.0.0.1:0".
	Listen string
	// Delay is the latency of Delay mode.
	Delay time.Duration
	// DialTimeout bounds each dial of the target. Default 5 s.
	DialTimeout time.Duration
}

// Stats counts what the proxy did.
type Stats struct {
	Accepted int   // connections accepted
	Dialed   int   // connections made to the target
	Reset    int   // connections reset
	Bytes    int64 // bytes forwarded, both directions
}

// Proxy is a running fault proxy. Listen starts it; Close stops it.
type Proxy struct {
	cfg    Config
	ln     net.Listener
	ctx    context.Context // cancelled by Close: ends dials
	cancel context.CancelFunc

	mu      sync.Mutex
	mode    Mode
	delay   time.Duration
	changed chan struct{} // closed and replaced at every mode change
	closed  bool
	conns   map[*pair]struct{}
	stats   Stats

	wg sync.WaitGroup
}

// Listen starts a proxy for cfg in Pass mode.
func Listen(cfg Config) (*Proxy, error) {
	if cfg.Target == "" {
		return nil, errors.New("faultproxy: no target")
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(context.Background(), "tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: %w", err)
	}
	p := &Proxy{cfg: cfg, ln: ln, delay: cfg.Delay, changed: make(chan struct{}), conns: map[*pair]struct{}{}}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.wg.Go(p.accept)
	return p, nil
}

// Addr is the address the proxy listens on.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Mode returns the current mode.
func (p *Proxy) Mode() Mode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// SetMode switches every connection, and those to come, to m. Switching to
// Reset resets the open connections at once.
func (p *Proxy) SetMode(m Mode) {
	p.mu.Lock()
	p.mode = m
	close(p.changed)
	p.changed = make(chan struct{})
	var reset []*pair
	if m == Reset {
		for c := range p.conns {
			reset = append(reset, c)
		}
	}
	p.mu.Unlock()
	for _, c := range reset {
		p.reset(c)
	}
}

// SetDelay sets the latency of Delay mode.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// Stats returns the counts so far.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Close stops listening, closes every connection and waits for the
// proxy's goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	close(p.changed) // wakes connections waiting in Drop
	p.changed = make(chan struct{})
	conns := make([]*pair, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	p.cancel()
	err := p.ln.Close()
	for _, c := range conns {
		c.close()
	}
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	for {
		conn, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		c := &pair{client: conn, done: make(chan struct{})}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			_ = conn.Close()
			return
		}
		p.stats.Accepted++
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		p.wg.Go(func() { p.serve(c) })
	}
}

// gate waits while the mode is Drop and returns the mode then, or false
// once the proxy or the connection is closed.
func (p *Proxy) gate(c *pair) (Mode, time.Duration, bool) {
	for {
		p.mu.Lock()
		mode, delay, changed, closed := p.mode, p.delay, p.changed, p.closed
		p.mu.Unlock()
		if closed || c.isClosed() {
			return mode, delay, false
		}
		if mode != Drop {
			return mode, delay, true
		}
		select {
		case <-changed:
		case <-c.done:
		}
	}
}

// serve dials the target once the mode lets traffic through, then copies
// both ways until either side closes.
func (p *Proxy) serve(c *pair) {
	defer p.forget(c)
	mode, _, ok := p.gate(c)
	if !ok {
		return
	}
	if mode == Reset {
		p.reset(c)
		return
	}
	d := net.Dialer{Timeout: p.cfg.DialTimeout}
	server, err := d.DialContext(p.ctx, "tcp", p.cfg.Target)
	if err != nil {
		c.close()
		return
	}
	if !c.setServer(server) {
		_ = server.Close()
		return
	}
	p.mu.Lock()
	p.stats.Dialed++
	p.mu.Unlock()
	var wg sync.WaitGroup
	wg.Go(func() { p.copy(c, server, c.client) })
	wg.Go(func() { p.copy(c, c.client, server) })
	wg.Wait()
}

// copy forwards src to dst chunk by chunk, each through the gate; the end
// of either direction closes the pair.
func (p *Proxy) copy(c *pair, dst, src net.Conn) {
	defer c.close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		readAt := time.Now()
		if n > 0 {
			mode, delay, ok := p.gate(c)
			if !ok || mode == Reset {
				return
			}
			if mode == Delay {
				if !c.sleepUntil(readAt.Add(delay)) {
					return
				}
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
			p.mu.Lock()
			p.stats.Bytes += int64(n)
			p.mu.Unlock()
		}
		if err != nil {
			// EOF, or the connection closed or reset: in a blackhole
			// the FIN or RST is held too.
			p.gate(c)
			return
		}
	}
}

func (p *Proxy) reset(c *pair) {
	if c.reset() {
		p.mu.Lock()
		p.stats.Reset++
		p.mu.Unlock()
	}
}

func (p *Proxy) forget(c *pair) {
	c.close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// pair is one proxied connection: the client's and, once dialed, the
// target's.
type pair struct {
	client net.Conn

	mu     sync.Mutex
	server net.Conn
	closed bool
	done   chan struct{} // closed by close
}

func (c *pair) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// setServer records the target's connection; false when the pair was
// closed meanwhile.
func (c *pair) setServer(s net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.server = s
	return true
}

// close closes both sides; it reports whether this call closed them.
func (c *pair) close() bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	c.closed = true
	server := c.server
	c.mu.Unlock()
	close(c.done)
	_ = c.client.Close()
	if server != nil {
		_ = server.Close()
	}
	return true
}

// reset closes both sides with an RST instead of a FIN.
func (c *pair) reset() bool {
	c.mu.Lock()
	server := c.server
	c.mu.Unlock()
	for _, conn := range []net.Conn{c.client, server} {
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
	}
	return c.close()
}

// sleepUntil waits until t; false when the pair closes first.
func (c *pair) sleepUntil(t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-c.done:
		return false
	}
}
