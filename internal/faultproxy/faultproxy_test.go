package faultproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// echoServer accepts connections on loopback and echoes each line back; it
// counts the connections it accepted.
type echoServer struct {
	ln    net.Listener
	mu    sync.Mutex
	n     int
	done  int // connections whose echo loop ended
	conns []net.Conn
	wg    sync.WaitGroup
}

func startEcho(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{ln: ln}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.n++
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Go(func() {
				_, _ = io.Copy(c, c)
				s.mu.Lock()
				s.done++
				s.mu.Unlock()
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *echoServer) ended() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

func (s *echoServer) accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// setup starts an echo server and a proxy to it, closed when the test ends.
func setup(t *testing.T, cfg Config) (*Proxy, *echoServer) {
	t.Helper()
	s := startEcho(t)
	cfg.Target = s.ln.Addr().String()
	p, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p, s
}

// client is one connection through the proxy.
type client struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

func dial(t *testing.T, p *Proxy) *client {
	t.Helper()
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return &client{t: t, conn: conn, r: bufio.NewReader(conn)}
}

func (c *client) send(line string) {
	c.t.Helper()
	if _, err := c.conn.Write([]byte(line + "\n")); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// recv reads one line within timeout.
func (c *client) recv(timeout time.Duration) (string, error) {
	_ = c.conn.SetReadDeadline(time.Now().Add(timeout))
	s, err := c.r.ReadString('\n')
	if err != nil {
		return s, err
	}
	return s[:len(s)-1], nil
}

func (c *client) want(line string) {
	c.t.Helper()
	got, err := c.recv(5 * time.Second)
	if err != nil || got != line {
		c.t.Fatalf("read %q, %v; want %q", got, err, line)
	}
}

// wantSilence fails unless nothing arrives within d.
func (c *client) wantSilence(d time.Duration) {
	c.t.Helper()
	got, err := c.recv(d)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		c.t.Fatalf("read %q, %v; want nothing (a blackhole)", got, err)
	}
}

func TestProxy_Pass(t *testing.T) {
	p, s := setup(t, Config{})
	c := dial(t, p)
	for _, line := range []string{"a", "hello", "world"} {
		c.send(line)
		c.want(line)
	}
	// The count of a chunk follows its write: poll.
	want := 2 * int64(len("a\nhello\nworld\n"))
	waitFor(t, func() bool { return p.Stats().Bytes == want }, "the byte count")
	if st := p.Stats(); st.Accepted != 1 || st.Dialed != 1 || s.accepted() != 1 {
		t.Errorf("stats %+v, server accepted %d", st, s.accepted())
	}
}

// TestProxy_Drop: in a blackhole nothing passes either way and a new
// connection never reaches the target; what was sent meanwhile arrives in
// order after the heal, on the same connections.
func TestProxy_Drop(t *testing.T) {
	p, s := setup(t, Config{})
	c := dial(t, p)
	c.send("before")
	c.want("before")

	p.SetMode(Drop)
	c.send("during-1")
	c.send("during-2")
	late := dial(t, p)
	late.send("late")
	c.wantSilence(200 * time.Millisecond)
	late.wantSilence(10 * time.Millisecond)
	if n := s.accepted(); n != 1 {
		t.Errorf("the target accepted %d connections during the blackhole, want the 1 from before", n)
	}

	p.SetMode(Pass)
	c.want("during-1")
	c.want("during-2")
	late.want("late")
	c.send("after")
	c.want("after")
}

// TestProxy_DropHoldsClose: a client that closes during a blackhole is not
// seen closing by the target until the heal (the FIN is held too), as a
// PostgreSQL backend keeps a partitioned client's transaction open.
func TestProxy_DropHoldsClose(t *testing.T) {
	p, s := setup(t, Config{})
	c := dial(t, p)
	c.send("x")
	c.want("x")
	p.SetMode(Drop)
	_ = c.conn.Close()
	// Absence can only be checked for a while: 200 ms.
	deadline := time.Now().Add(200 * time.Millisecond)
	for time.Now().Before(deadline) {
		if n := s.ended(); n != 0 {
			t.Fatalf("the target saw %d connections end during the blackhole", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.SetMode(Pass)
	waitFor(t, func() bool { return s.ended() == 1 }, "the target to see the close after the heal")
}

func TestProxy_Delay(t *testing.T) {
	const delay = 150 * time.Millisecond
	p, _ := setup(t, Config{Delay: delay})
	c := dial(t, p)
	c.send("warm")
	c.want("warm")
	p.SetMode(Delay)
	start := time.Now()
	c.send("slow")
	c.want("slow")
	if took := time.Since(start); took < 2*delay {
		t.Errorf("round trip took %v, want at least %v (delay each way)", took, 2*delay)
	}
	p.SetDelay(0)
	c.send("fast")
	c.want("fast")
}

// TestProxy_Reset: Reset resets the open connections (the client reads
// ECONNRESET) and every new one, without dialing the target.
func TestProxy_Reset(t *testing.T) {
	p, s := setup(t, Config{})
	c := dial(t, p)
	c.send("x")
	c.want("x")
	p.SetMode(Reset)
	if _, err := c.recv(5 * time.Second); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("open connection: read error %v, want ECONNRESET", err)
	}
	// The RST may come before the dial returns or at the first read.
	if late, err := net.Dial("tcp", p.Addr()); err == nil {
		defer late.Close()
		_ = late.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := late.Read(make([]byte, 1)); !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("new connection: read error %v, want ECONNRESET", err)
		}
	} else if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("new connection: dial error %v, want ECONNRESET or success", err)
	}
	if s.accepted() != 1 {
		t.Errorf("the target accepted %d connections, want 1", s.accepted())
	}
	waitFor(t, func() bool { return p.Stats().Reset == 2 }, "2 resets")
	p.SetMode(Pass)
	again := dial(t, p)
	again.send("y")
	again.want("y")
}

// TestProxy_CloseDuringDrop: Close ends connections held in a blackhole
// and joins every goroutine (goleak checks at the end).
func TestProxy_CloseDuringDrop(t *testing.T) {
	s := startEcho(t)
	p, err := Listen(Config{Target: s.ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, p)
	c.send("x")
	c.want("x")
	p.SetMode(Drop)
	c.send("held")
	dial(t, p).send("never dialed")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.recv(5 * time.Second); err == nil {
		t.Error("read succeeded after Close")
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
