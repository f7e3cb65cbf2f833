package httpapi

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// failures counts failed authentications per client address and per key
// id in fixed windows. Bounded: past maxTracked entries it starts afresh.
type failures struct {
	window time.Duration
	mu     sync.Mutex
	counts map[string]*failureCount // "a:<addr>" or "k:<key id>"
}

type failureCount struct {
	n     int
	until time.Time // the window's end
}

const maxTracked = 100_000

func newFailures(window time.Duration) *failures {
	return &failures{window: window, counts: make(map[string]*failureCount)}
}

// blocked returns how long the name must wait when it has made max
// failures in its window (0: not blocked).
func (f *failures) blocked(name string, max int, now time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.counts[name]
	switch {
	case c == nil:
		return 0
	case !now.Before(c.until):
		delete(f.counts, name)
		return 0
	case c.n >= max:
		return c.until.Sub(now)
	}
	return 0
}

// add counts a failure of name.
func (f *failures) add(name string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.counts[name]
	if c == nil || !now.Before(c.until) {
		if len(f.counts) >= maxTracked {
			clear(f.counts)
		}
		c = &failureCount{until: now.Add(f.window)}
		f.counts[name] = c
	}
	c.n++
}

// clientAddr is the IP address of r's client (the TCP peer: behind a
// proxy, the proxy).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// throttled refuses (429) a request from an address or with a key id that
// failed authentication too often in the window.
func (s *Server) throttled(r *http.Request, keyID string) error {
	now := time.Now()
	wait := s.fails.blocked("a:"+clientAddr(r), s.cfg.AuthFailuresPerAddr, now)
	if keyID != "" {
		wait = max(wait, s.fails.blocked("k:"+keyID, s.cfg.AuthFailuresPerKey, now))
	}
	if wait <= 0 {
		return nil
	}
	return &httpError{status: http.StatusTooManyRequests, title: "Too Many Requests",
		detail:     "too many failed authentications from this address or for this key; retry later",
		retryAfter: int((wait + time.Second - 1) / time.Second)}
}

// failed counts a failed authentication of r (and of the key id, if any).
func (s *Server) failed(r *http.Request, keyID string) {
	now := time.Now()
	s.fails.add("a:"+clientAddr(r), now)
	if keyID != "" {
		s.fails.add("k:"+keyID, now)
	}
}
