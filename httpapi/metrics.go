package httpapi

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// metrics counts requests per route and status, and their total time.
type metrics struct {
	mu       sync.Mutex
	requests map[routeStatus]*routeStats
}

type routeStatus struct {
	route  string
	status int
}

type routeStats struct {
	count   int64
	seconds float64
}

func newMetrics() *metrics { return &metrics{requests: make(map[routeStatus]*routeStats)} }

func (m *metrics) observe(route string, status int, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := routeStatus{route, status}
	st := m.requests[k]
	if st == nil {
		st = &routeStats{}
		m.requests[k] = st
	}
	st.count++
	st.seconds += d.Seconds()
}

// writeProm writes the counters in the Prometheus text format.
func (m *metrics) writeProm(w io.Writer) error {
	m.mu.Lock()
	keys := make([]routeStatus, 0, len(m.requests))
	stats := make(map[routeStatus]routeStats, len(m.requests))
	for k, v := range m.requests {
		keys = append(keys, k)
		stats[k] = *v
	}
	m.mu.Unlock()
	slices.SortFunc(keys, func(a, b routeStatus) int {
		if a.route != b.route {
			if a.route < b.route {
				return -1
			}
			return 1
		}
		return a.status - b.status
	})
	if _, err := fmt.Fprint(w, "# HELP docket_http_requests_total HTTP requests by route and status.\n# TYPE docket_http_requests_total counter\n"); err != nil {
		return err
	}
	for _, k := range keys {
		fmt.Fprintf(w, "docket_http_requests_total{route=%q,status=\"%d\"} %d\n", k.route, k.status, stats[k].count)
	}
	fmt.Fprint(w, "# HELP docket_http_request_seconds_total Time spent serving requests by route and status.\n# TYPE docket_http_request_seconds_total counter\n")
	for _, k := range keys {
		fmt.Fprintf(w, "docket_http_request_seconds_total{route=%q,status=\"%d\"} %g\n", k.route, k.status, stats[k].seconds)
	}
	return nil
}
