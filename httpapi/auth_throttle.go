package httpapi

import (
	"container/list"
	"net"
	"net/http"
	"sync"
	"time"
)

// failures counts failed authentications per name ("a:<addr>", or
// "k:<key id> <addr>") in fixed windows that start at a name's first
// failure; a name is locked once its count reaches its limit.
//
// The table holds at most capacity names. To make room it drops expired
// names first, then the oldest that are not locked; a locked name is kept
// until its window ends, and when every name is locked a new one is not
// counted until one expires. Windows are equal, so the order of creation
// is the order of expiry.
type failures struct {
	window   time.Duration
	capacity int

	mu     sync.Mutex
	counts map[string]*failureCount
	all    list.List // of *failureCount, oldest first
	open   list.List // of *failureCount not locked, oldest first
}

type failureCount struct {
	name     string
	n, limit int
	until    time.Time     // the window's end
	inAll    *list.Element // in failures.all
	inOpen   *list.Element // in failures.open; nil once locked
}

// maxTracked is the capacity of a server's failure table.
const maxTracked = 100_000

func newFailures(window time.Duration) *failures {
	return &failures{window: window, capacity: maxTracked, counts: make(map[string]*failureCount)}
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
		f.drop(c)
		return 0
	case c.n >= max:
		return c.until.Sub(now)
	}
	return 0
}

// add counts a failure of name, which locks at limit failures.
func (f *failures) add(name string, limit int, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expire(now)
	c := f.counts[name]
	if c != nil && !now.Before(c.until) {
		f.drop(c)
		c = nil
	}
	if c == nil {
		if !f.room() {
			return // every name is locked: none is forgotten for this one
		}
		c = &failureCount{name: name, limit: limit, until: now.Add(f.window)}
		c.inAll, c.inOpen = f.all.PushBack(c), f.open.PushBack(c)
		f.counts[name] = c
	}
	if c.n++; c.n >= c.limit && c.inOpen != nil {
		f.open.Remove(c.inOpen)
		c.inOpen = nil
	}
}

// expire drops the names whose window has ended, oldest first.
func (f *failures) expire(now time.Time) {
	for e := f.all.Front(); e != nil; e = f.all.Front() {
		c := e.Value.(*failureCount)
		if now.Before(c.until) {
			return
		}
		f.drop(c)
	}
}

// room makes room for one more name, dropping the oldest name not locked
// when the table is full; false when every name is locked.
func (f *failures) room() bool {
	if len(f.counts) < f.capacity {
		return true
	}
	e := f.open.Front()
	if e == nil {
		return false
	}
	f.drop(e.Value.(*failureCount))
	return true
}

func (f *failures) drop(c *failureCount) {
	delete(f.counts, c.name)
	f.all.Remove(c.inAll)
	if c.inOpen != nil {
		f.open.Remove(c.inOpen)
	}
}

// clientAddr is the client key (addrKey: an IPv4 address or an IPv6 /64)
// of r's TCP peer; behind a proxy, the proxy.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return addrKey(r.RemoteAddr)
	}
	return addrKey(host)
}

// throttled refuses (429) a request from an address that failed
// authentication too often in the window, or with a key id that failed too
// often from this address. A key id is not secret (it is the start of the
// key), so its failures are counted per address: a forger locks a key out
// for its own address only, never for the key's holder elsewhere.
func (s *Server) throttled(r *http.Request, keyID string) error {
	now := time.Now()
	addr := clientAddr(r)
	wait := s.fails.blocked("a:"+addr, s.cfg.AuthFailuresPerAddr, now)
	if keyID != "" {
		wait = max(wait, s.fails.blocked("k:"+keyID+" "+addr, s.cfg.AuthFailuresPerKey, now))
	}
	if wait <= 0 {
		return nil
	}
	return &httpError{status: http.StatusTooManyRequests, title: "Too Many Requests",
		detail:     "too many failed authentications from this address or for this key; retry later",
		retryAfter: int((wait + time.Second - 1) / time.Second)}
}

// failed counts a failed authentication of r's address (and of the key
// id from that address, if any).
func (s *Server) failed(r *http.Request, keyID string) {
	now := time.Now()
	addr := clientAddr(r)
	s.fails.add("a:"+addr, s.cfg.AuthFailuresPerAddr, now)
	if keyID != "" {
		s.fails.add("k:"+keyID+" "+addr, s.cfg.AuthFailuresPerKey, now)
	}
}
